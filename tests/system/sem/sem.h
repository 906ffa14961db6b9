/*
 * sem.h - semantic tests of the socket calls, one behaviour per mode.
 *
 * sem_server runs under the preload (GAZELLE_BIND_PROCNAME=sem_server) in the
 * server namespace; sem_client runs on the kernel in the client namespace.
 * For each mode the client opens a connection (the "test connection"),
 * sends the mode name and a newline, and both sides run their half of the
 * mode (sem_modes.c), talking over that connection in short lines. Each side
 * prints one verdict line per mode:
 *
 *   ok - <side> <mode>
 *   not ok - <side> <mode>: <what differed from Linux>
 *
 * plus "# " lines with details. The runner (test_sem.sh) joins the two.
 */
#ifndef SEM_H
#define SEM_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A mode: what it checks, and each side's half. Both return 0 (pass) or 1.
 * Server: L is the shared listener (blocking, port `port`), *pc the accepted
 * test connection (set it to -1 after closing it). Client: c is the test
 * connection (*pc likewise), host/port the server's. */
struct sem_mode {
    const char *name;
    const char *what;
    int (*server)(int L, int *pc, int port);
    int (*client)(int *pc, const char *host, int port);
};

extern const struct sem_mode sem_modes[];
extern const size_t sem_mode_count;
const struct sem_mode *sem_find(const char *name);

/* --- verdicts ----------------------------------------------------------- */
extern const char *sem_side;  /* "server" or "client" */
extern const char *sem_cur;   /* current mode name */
extern const char *sem_step;  /* what the side is doing (for timeouts) */
extern char sem_why[768];     /* first failure of the current mode */

void sem_failf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void sem_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* REQ(cond, fmt, ...): on failure record why and fail the mode. Arguments
 * are evaluated after cond, so en(errno) still sees the failing call's errno. */
#define REQ(cond, ...)                                                                            \
    do {                                                                                          \
        if (!(cond)) {                                                                            \
            sem_failf(__VA_ARGS__);                                                               \
            return 1;                                                                             \
        }                                                                                         \
    } while (0)
#define STEP(s) (sem_step = (s))

/* errno name ("EAGAIN"), "0" for 0 */
const char *en(int e);

/* --- I/O helpers -------------------------------------------------------- */
double now_ms(void);
void sleep_ms(int ms);
/* write all of s; 0 or -1 (errno) */
int send_str(int fd, const char *s);
int send_fmt(int fd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Read one line (byte by byte, so nothing after the newline is consumed),
 * without the newline. Returns its length, 0 at EOF before any byte, -1 on
 * error (errno) or when the line is too long (EMSGSIZE). */
int recv_line(int fd, char *buf, size_t n);
/* Read a line and require it to be `want`; on mismatch sets sem_why. 0 / 1. */
int expect_line(int fd, const char *want);
/* Read until EOF (discarding); 0 at EOF, -1 on error or timeout (errno).
 * *got (if not NULL) receives the byte count. */
int wait_eof(int fd, long *got);
/* client side: wait_eof on the test connection; 0, or 1 with sem_why set */
int client_expect_eof(int c);
/* poll one fd; returns revents, 0 on timeout, -1 on error */
int wait_fd(int fd, short events, int timeout_ms);
/* pretty-print epoll / poll event masks */
const char *evs_str(uint32_t ev);
const char *pevs_str(short ev);
/* "a.b.c.d:port" of a sockaddr_in (static buffer, two alternating) */
const char *sin_str(const struct sockaddr_in *sa);

/* client side: blocking connect with send/receive timeouts of 10 s */
int connect_to(const char *host, int port);
/* set SO_RCVTIMEO and SO_SNDTIMEO */
void set_timeouts(int fd, int ms);
/* close with RST (SO_LINGER {1, 0}) */
void close_rst(int fd);

/* --- modes in their own files ------------------------------------------ */
/* sem_iov.c: vectored calls with up to IOV_MAX entries */
int sem_srv_iovmax(int L, int *pc, int port);
int sem_cli_iovmax(int *pc, const char *host, int port);
int sem_srv_iovpartial(int L, int *pc, int port);
int sem_cli_iovpartial(int *pc, const char *host, int port);

#endif
