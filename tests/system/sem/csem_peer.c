/*
 * csem_peer PORT - the kernel side of the client-side semantic tests
 * (csem.c): an echo server in the client namespace. It listens on
 * 0.0.0.0:PORT with a backlog of 4096, accepts every connection, echoes
 * what it reads and closes a connection when its peer does (FIN: close;
 * a reset: close). One epoll loop, non-blocking fds: thousands of
 * connections at once. Prints "csem_peer: listening on PORT" when ready;
 * runs until killed.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: csem_peer PORT\n");
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    int port = atoi(argv[1]);
    int L = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    int one = 1;
    setsockopt(L, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    if (L < 0 || bind(L, (struct sockaddr *)&sa, sizeof sa) != 0 || listen(L, 4096) != 0) {
        perror("csem_peer: listen");
        return 1;
    }
    int ep = epoll_create1(0);
    struct epoll_event ev = {.events = EPOLLIN, .data.fd = L};
    epoll_ctl(ep, EPOLL_CTL_ADD, L, &ev);
    printf("csem_peer: listening on %d\n", port);
    fflush(stdout);
    struct epoll_event evs[256];
    char buf[65536];
    for (;;) {
        int n = epoll_wait(ep, evs, 256, -1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            perror("csem_peer: epoll_wait");
            return 1;
        }
        for (int i = 0; i < n; i++) {
            int fd = evs[i].data.fd;
            if (fd == L) {
                for (;;) {
                    int a = accept4(L, NULL, NULL, SOCK_NONBLOCK);
                    if (a < 0)
                        break;
                    struct epoll_event ae = {.events = EPOLLIN | EPOLLRDHUP, .data.fd = a};
                    epoll_ctl(ep, EPOLL_CTL_ADD, a, &ae);
                }
                continue;
            }
            for (;;) {
                ssize_t r = read(fd, buf, sizeof buf);
                if (r > 0) {
                    /* small lines: the send buffer always has room */
                    if (write(fd, buf, (size_t)r) != r) {
                        close(fd);
                        break;
                    }
                    continue;
                }
                if (r < 0 && (errno == EAGAIN || errno == EINTR))
                    break;
                close(fd); /* EOF or error: the peer closed or reset */
                break;
            }
        }
    }
}
