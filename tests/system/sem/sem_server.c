/*
 * sem_server MODE PORT - the server half of the semantic tests. Runs under
 * the preload (GAZELLE_BIND_PROCNAME=sem_server): its sockets live on the
 * stack. Listens on 0.0.0.0:PORT (PORT+1 and PORT+2 are used by some modes),
 * then for each connection reads a mode name line and runs that mode's
 * server half; "quit" ends it. MODE "all" serves any sequence of modes;
 * a mode name serves that one mode once. Exit status: 0 when every mode
 * served passed, 1 otherwise, 2 when a mode hung (SIGALRM after 20 s).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "sem.h"

#define MODE_TIMEOUT_S 20

static void put(const char *s)
{
    if (write(1, s, strlen(s)) < 0) {
        /* nothing to do */
    }
}

static void on_alarm(int sig)
{
    (void)sig;
    put("not ok - server ");
    put(sem_cur);
    put(": timed out (20 s) in step: ");
    put(sem_step);
    put("\n");
    _exit(2);
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: sem_server MODE|all PORT\n");
        return 2;
    }
    const char *only = argv[1];
    int port = atoi(argv[2]);
    if (strcmp(only, "all") != 0 && !sem_find(only)) {
        fprintf(stderr, "sem_server: unknown mode '%s'\n", only);
        return 2;
    }
    sem_side = "server";
    setvbuf(stdout, NULL, _IOLBF, 0);
    signal(SIGPIPE, SIG_IGN);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sigaction(SIGALRM, &sa, NULL);

    int L = socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    if (L < 0 || setsockopt(L, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0 ||
        bind(L, (struct sockaddr *)&addr, sizeof addr) < 0 || listen(L, 64) < 0) {
        printf("sem_server: cannot listen on 0.0.0.0:%d: %s\n", port, en(errno));
        return 1;
    }
    printf("sem_server: listening on 0.0.0.0:%d (pid %d)\n", port, (int)getpid());

    int served = 0, failed = 0;
    for (;;) {
        sem_cur = "(accept)";
        int c = accept(L, NULL, NULL);
        if (c < 0) {
            if (errno == EINTR)
                continue;
            printf("not ok - server (accept): accept on the listener failed: %s\n", en(errno));
            failed++;
            break;
        }
        char name[64];
        sem_cur = "(mode line)";
        sem_step = "reading the mode line";
        alarm(MODE_TIMEOUT_S);
        int r = recv_line(c, name, sizeof name);
        alarm(0);
        if (r <= 0) { /* a leftover connection of a failed mode */
            close(c);
            continue;
        }
        if (strcmp(name, "quit") == 0) {
            close(c);
            break;
        }
        const struct sem_mode *m = sem_find(name);
        if (!m || (strcmp(only, "all") != 0 && strcmp(only, name) != 0)) {
            printf("not ok - server %s: mode not served here\n", name);
            failed++;
            close(c);
            continue;
        }
        sem_cur = m->name;
        sem_why[0] = 0;
        sem_step = "start";
        int lfl = fcntl(L, F_GETFL);
        alarm(MODE_TIMEOUT_S);
        int rc = m->server(L, &c, port);
        alarm(0);
        if (lfl >= 0)
            fcntl(L, F_SETFL, lfl);
        if (c >= 0)
            close(c);
        served++;
        if (rc) {
            failed++;
            printf("not ok - server %s: %s\n", m->name, sem_why[0] ? sem_why : "failed");
        } else {
            printf("ok - server %s\n", m->name);
        }
        if (strcmp(only, "all") != 0)
            break;
    }
    close(L);
    printf("sem_server: %d modes served, %d failed\n", served, failed);
    return failed ? 1 : 0;
}
