/*
 * sem_client MODES HOST PORT - the client half of the semantic tests, on the
 * kernel. MODES: "all", one mode name, or a comma-separated list; for each
 * it connects to HOST:PORT, sends the mode name and runs the mode's client
 * half. At the end it sends "quit" so that a server serving "all" ends.
 * sem_client list - print every mode and what it checks.
 * Exit status: 0 when every mode passed on this side, 1 otherwise.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sem.h"

#define MODE_TIMEOUT_S 30

static sigjmp_buf timeout_jb;

static void on_alarm(int sig)
{
    (void)sig;
    siglongjmp(timeout_jb, 1);
}

static int run_mode(const struct sem_mode *m, const char *host, int port)
{
    static volatile int c;
    sem_cur = m->name;
    sem_why[0] = 0;
    sem_step = "connecting";
    c = connect_to(host, port);
    if (c < 0) {
        printf("not ok - client %s: connect to %s:%d: %s\n", m->name, host, port, en(errno));
        return 1;
    }
    int rc;
    if (sigsetjmp(timeout_jb, 1) == 0) {
        alarm(MODE_TIMEOUT_S);
        char line[80];
        snprintf(line, sizeof line, "%s\n", m->name);
        if (send_str(c, line) < 0) {
            sem_failf("sending the mode name: %s", en(errno));
            rc = 1;
        } else {
            int fd = c;
            rc = m->client(&fd, host, port);
            c = fd;
        }
        alarm(0);
    } else {
        sem_failf("timed out (%d s) in step: %s", MODE_TIMEOUT_S, sem_step);
        rc = 1;
    }
    if (c >= 0)
        close(c);
    if (rc)
        printf("not ok - client %s: %s\n", m->name, sem_why[0] ? sem_why : "failed");
    else
        printf("ok - client %s\n", m->name);
    return rc;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    sem_side = "client";
    if (argc == 2 && strcmp(argv[1], "list") == 0) {
        for (size_t i = 0; i < sem_mode_count; i++)
            printf("%s\t%s\n", sem_modes[i].name, sem_modes[i].what);
        return 0;
    }
    if (argc != 4) {
        fprintf(stderr, "usage: sem_client all|MODE[,MODE...] HOST PORT\n       sem_client list\n");
        return 2;
    }
    const char *host = argv[2];
    int port = atoi(argv[3]);
    signal(SIGPIPE, SIG_IGN);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sigaction(SIGALRM, &sa, NULL);

    int failed = 0, ran = 0;
    bool all = strcmp(argv[1], "all") == 0;
    if (all) {
        for (size_t i = 0; i < sem_mode_count; i++, ran++)
            failed += run_mode(&sem_modes[i], host, port);
    } else {
        char *list = strdup(argv[1]), *save = NULL;
        for (char *name = strtok_r(list, ",", &save); name; name = strtok_r(NULL, ",", &save), ran++) {
            const struct sem_mode *m = sem_find(name);
            if (!m) {
                printf("not ok - client %s: no such mode\n", name);
                failed++;
                continue;
            }
            failed += run_mode(m, host, port);
        }
        free(list);
    }
    /* end a server serving "all" (one serving a single mode is gone already) */
    int q = connect_to(host, port);
    if (q < 0)
        printf("# client quit: connect failed: %s (the server is not told to end)\n", en(errno));
    else if (send_str(q, "quit\n") != 0)
        printf("# client quit: send failed: %s\n", en(errno));
    if (q >= 0)
        close(q);
    printf("sem_client: %d modes, %d failed\n", ran, failed);
    return failed ? 1 : 0;
}
