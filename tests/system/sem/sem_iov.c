/*
 * sem_iov.c - the vectored-call modes: readv / writev / recvmsg /
 * sendmsg with up to IOV_MAX (1024) entries, Linux's errno past it, and a
 * non-blocking writev that fills the send buffer part-way through its
 * entries. The server half runs on the stack, the client half on the kernel.
 *
 * Data: byte k of a stream is pat(k, seed); the client checks every byte.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "sem.h"

#define IOVS 1024               /* Linux's UIO_MAXIOV, glibc's IOV_MAX */
#define PARTIAL_ENTRY 16384 /* iovpartial: 1024 x 16 KiB = 16 MiB, beyond tcp_snd_buf (at most 8 MiB) */
#define PARTIAL_TOTAL ((size_t)IOVS * PARTIAL_ENTRY)

static unsigned char pat(size_t k, unsigned seed)
{
    return (unsigned char)(k * 131 + k / 509 + seed);
}

static void fill(unsigned char *buf, size_t n, unsigned seed)
{
    for (size_t k = 0; k < n; k++)
        buf[k] = pat(k, seed);
}

/* Entries of 1..7 bytes (entry i: 1 + i % 7) laid end to end over buf;
 * returns the total. iov has room for n entries. */
static size_t small_entries(struct iovec *iov, int n, unsigned char *buf)
{
    size_t off = 0;
    for (int i = 0; i < n; i++) {
        iov[i].iov_base = buf + off;
        iov[i].iov_len = 1 + (size_t)(i % 7);
        off += iov[i].iov_len;
    }
    return off;
}

/* Read exactly n bytes and check them against pat(., seed). 0, or 1 with
 * sem_why set. */
static int read_checked(int fd, size_t n, unsigned seed)
{
    static unsigned char buf[65536];
    size_t got = 0;
    while (got < n) {
        size_t want = n - got < sizeof buf ? n - got : sizeof buf;
        ssize_t r = read(fd, buf, want);
        REQ(r > 0 || (r < 0 && errno == EINTR), "read after %zu of %zu bytes: %zd (%s)", got, n, r,
            r < 0 ? en(errno) : "EOF");
        if (r < 0)
            continue;
        for (ssize_t i = 0; i < r; i++)
            REQ(buf[i] == pat(got + (size_t)i, seed), "byte %zu differs: %u, want %u", got + (size_t)i,
                buf[i], pat(got + (size_t)i, seed));
        got += (size_t)r;
    }
    return 0;
}

/* ---------------------------------------------------------------- iovmax */
/* writev / sendmsg of 1025 entries fail (EINVAL / EMSGSIZE) and send
 * nothing; writev of 1024 small entries sends them all, in order; readv /
 * recvmsg of 1025 fail the same way; recvmsg(MSG_WAITALL) into 1024 small
 * entries receives the client's bytes, in order. */
int sem_srv_iovmax(int L, int *pc, int port)
{
    (void)L;
    (void)port;
    int c = *pc;
    static struct iovec iov[IOVS + 1];
    static unsigned char out[8 * (IOVS + 1)], in[8 * (IOVS + 1)];
    fill(out, sizeof out, 1);
    size_t total = small_entries(iov, IOVS, out);
    small_entries(iov, IOVS + 1, out);

    STEP("writev of 1025 entries");
    errno = 0;
    ssize_t n = writev(c, iov, IOVS + 1);
    REQ(n == -1 && errno == EINVAL, "writev of 1025 entries: %zd (%s), want -1 EINVAL", n, en(errno));
    struct msghdr m = {.msg_iov = iov, .msg_iovlen = IOVS + 1};
    errno = 0;
    n = sendmsg(c, &m, 0);
    REQ(n == -1 && errno == EMSGSIZE, "sendmsg of 1025 entries: %zd (%s), want -1 EMSGSIZE", n, en(errno));
    STEP("writev of 1024 entries");
    n = writev(c, iov, IOVS);
    REQ(n == (ssize_t)total, "writev of 1024 entries (%zu bytes): %zd (%s)", total, n, n < 0 ? en(errno) : "short");
    REQ(send_str(c, "END\n") == 0, "send END: %s", en(errno));

    STEP("reading with 1025 and 1024 entries");
    small_entries(iov, IOVS + 1, in);
    errno = 0;
    n = readv(c, iov, IOVS + 1);
    REQ(n == -1 && errno == EINVAL, "readv of 1025 entries: %zd (%s), want -1 EINVAL", n, en(errno));
    m.msg_iovlen = IOVS + 1;
    errno = 0;
    n = recvmsg(c, &m, 0);
    REQ(n == -1 && errno == EMSGSIZE, "recvmsg of 1025 entries: %zd (%s), want -1 EMSGSIZE", n, en(errno));
    m.msg_iovlen = IOVS;
    n = recvmsg(c, &m, MSG_WAITALL);
    REQ(n == (ssize_t)total, "recvmsg(MSG_WAITALL) into 1024 entries: %zd (%s), want %zu", n,
        n < 0 ? en(errno) : "short", total);
    for (size_t k = 0; k < total; k++)
        REQ(in[k] == pat(k, 2), "received byte %zu differs: %u, want %u", k, in[k], pat(k, 2));
    sem_info("1024 entries of 1..7 bytes: %zu bytes each way", total);
    return 0;
}

int sem_cli_iovmax(int *pc, const char *host, int port)
{
    (void)host;
    (void)port;
    static struct iovec iov[IOVS];
    static unsigned char buf[8 * IOVS];
    size_t total = small_entries(iov, IOVS, buf);
    STEP("reading the 1024 entries");
    if (read_checked(*pc, total, 1))
        return 1;
    STEP("waiting for END");
    if (expect_line(*pc, "END")) /* nothing from the failed calls in between */
        return 1;
    fill(buf, total, 2);
    size_t off = 0;
    while (off < total) {
        ssize_t r = write(*pc, buf + off, total - off);
        REQ(r > 0, "write: %s", en(errno));
        off += (size_t)r;
    }
    return client_expect_eof(*pc);
}

/* ------------------------------------------------------------ iovpartial */
/* A non-blocking writev of 16 MiB in 1024 entries to a client that is not
 * reading yet returns a partial count (more than nothing, less than all),
 * and writev goes on returning counts until EAGAIN; the rest, from the
 * byte where it stopped (inside an entry), goes in one blocking writev. The
 * client reads the 16 MiB byte for byte. */
/* The rest of the stream from byte `from` as entries of the same layout
 * (the first may start inside an entry). Returns the entry count. */
static int rest_entries(struct iovec *iov, unsigned char *buf, size_t from)
{
    int n = 0;
    for (size_t off = from; off < PARTIAL_TOTAL; n++) {
        iov[n].iov_base = buf + off;
        iov[n].iov_len = PARTIAL_ENTRY - off % PARTIAL_ENTRY;
        off += iov[n].iov_len;
    }
    return n;
}

int sem_srv_iovpartial(int L, int *pc, int port)
{
    (void)L;
    (void)port;
    int c = *pc;
    static unsigned char buf[PARTIAL_TOTAL];
    static struct iovec iov[IOVS];
    fill(buf, PARTIAL_TOTAL, 3);
    int fl = fcntl(c, F_GETFL);
    REQ(fl >= 0 && fcntl(c, F_SETFL, fl | O_NONBLOCK) == 0, "O_NONBLOCK: %s", en(errno));
    STEP("non-blocking writev until EAGAIN");
    size_t sent = 0;
    ssize_t first = -1;
    int calls = 0;
    double end = now_ms() + 5000;
    for (;;) {
        int n = rest_entries(iov, buf, sent);
        ssize_t r = writev(c, iov, n);
        if (r < 0 && errno == EAGAIN)
            break;
        REQ(r > 0, "non-blocking writev %d after %zu bytes: %zd (%s)", calls + 1, sent, r, en(errno));
        REQ(now_ms() <= end, "no EAGAIN within 5 s (%zu bytes sent)", sent);
        if (first < 0)
            first = r;
        sent += (size_t)r;
        calls++;
    }
    sem_info("first non-blocking writev: %zd of %zu bytes; %d call(s), %zu bytes before EAGAIN", first,
             PARTIAL_TOTAL, calls, sent);
    REQ(first > 0 && (size_t)first < PARTIAL_TOTAL, "first non-blocking writev returned %zd", first);
    REQ(sent < PARTIAL_TOTAL, "16 MiB went out without EAGAIN");
    REQ(fcntl(c, F_SETFL, fl) == 0, "clearing O_NONBLOCK: %s", en(errno));
    STEP("blocking writev of the rest");
    int n = rest_entries(iov, buf, sent);
    size_t rest = PARTIAL_TOTAL - sent;
    ssize_t r = writev(c, iov, n);
    REQ(r == (ssize_t)rest, "blocking writev of the last %zu bytes (%d entries): %zd (%s)", rest, n, r,
        r < 0 ? en(errno) : "short");
    STEP("waiting for GOT");
    return expect_line(c, "GOT OK");
}

int sem_cli_iovpartial(int *pc, const char *host, int port)
{
    (void)host;
    (void)port;
    sleep_ms(300); /* not reading yet: the server's buffers fill */
    STEP("reading 16 MiB");
    if (read_checked(*pc, PARTIAL_TOTAL, 3))
        return 1;
    REQ(send_str(*pc, "GOT OK\n") == 0, "send: %s", en(errno));
    return client_expect_eof(*pc);
}
