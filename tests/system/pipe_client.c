/*
 * pipe_client: Redis clients that fill both directions of a connection at
 * once, each reply checked byte for byte; for the flow-control tests.
 *
 *   pipe_client HOST PORT [--pipe N] [--big N] [--runs R | --seconds S]
 *                         [--pairs P] [--size B] [--limit L] [--stall S]
 *                         [--on-stall CMD] [--link-wait W]
 *
 * --pipe N   N threads, one blocking connection each per run: write P pairs
 *            "SET key:i 0000i0000" + "GET key:i" (i = 0..P-1, inline
 *            commands, one send() of the whole 4.4 MB for P = 100000)
 *            without reading, then read the 2P replies ("+OK", then the
 *            value as a bulk string) and compare them with what they must be.
 *            Redis's pipelining pattern: the client's receive buffer fills
 *            while it is still writing, so both windows close.
 * --big N    N threads, one connection each for all their runs: a SET of a
 *            B-byte value (B = 1 MiB by default; bytes from a seed that
 *            changes at each run) and a GET of it written together, then
 *            both replies read and every byte compared.
 * --runs R   each thread does R runs (default 1); --seconds S: runs until S
 *            seconds have passed (the soak).
 * --limit L  a run must end within L seconds (default 5);
 * --stall S  and no byte may wait more than S seconds to move in either
 *            direction (default: L). A run that breaks either is reported
 *            with its connection's TCP_INFO (the kernel's side of it) and
 *            CMD is run (sh -c, once per process: the caller's picture of
 *            the server side, e.g. stackctl show connections) while the
 *            connection is still open; then the thread gives up.
 *
 * --link-wait W  a connect that fails with ENETUNREACH is tried again for up
 *            to W seconds (a client under lstack whose port is still coming
 *            up, e.g. a net_memif client).
 *
 * Prints one line per thread and a summary: runs, the slowest run, the
 * median, and the longest a byte waited to move (from one send or recv
 * that moved bytes to the next). Exit 0 when every run of every thread completed within the limit
 * with every byte right; 1 otherwise (each failure says what it saw);
 * 2 on bad usage. Keys: key:i (the same value from every client, so
 * concurrent pipe clients agree) and big:<thread>.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/tcp.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static struct sockaddr_in dst;
static int o_pipe, o_big, o_runs = 1, o_pairs = 100000;
static double o_seconds, o_limit = 5.0, o_stall;
static size_t o_size = 1u << 20;
static double o_link_wait;
static const char *o_on_stall;

/* The pipe clients' request and the replies it must get (shared, read only). */
static char *pipe_req, *pipe_rep;
static size_t pipe_req_len, pipe_rep_len;

static atomic_int stall_cmd_ran;
static atomic_int failed;
static double t_start;

struct thread_res {
    int id;
    int big;
    int runs;
    double *secs; /* each run's time */
    int cap;
    double max_wait; /* the longest a byte waited to move, in any run */
    char why[512];
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void build_pipe(void)
{
    size_t rq = (size_t)o_pairs * 48 + 1, rp = (size_t)o_pairs * 32 + 1;
    pipe_req = malloc(rq);
    pipe_rep = malloc(rp);
    if (pipe_req == NULL || pipe_rep == NULL) {
        perror("malloc");
        exit(2);
    }
    for (int i = 0; i < o_pairs; i++) {
        char v[32];
        int vl = snprintf(v, sizeof v, "0000%d0000", i);
        pipe_req_len += (size_t)sprintf(pipe_req + pipe_req_len, "SET key:%d %s\r\nGET key:%d\r\n", i, v, i);
        pipe_rep_len += (size_t)sprintf(pipe_rep + pipe_rep_len, "+OK\r\n$%d\r\n%s\r\n", vl, v);
    }
}

/* The kernel's view of the connection, for a stall report. */
static void print_tcp_info(int fd, const char *who, size_t sent, size_t total_out, size_t got, size_t total_in)
{
    struct tcp_info ti;
    socklen_t len = sizeof ti;
    memset(&ti, 0, sizeof ti);
    if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) != 0) {
        printf("%s: TCP_INFO: %s\n", who, strerror(errno));
        return;
    }
    printf("%s: wrote %zu of %zu, read %zu of %zu; state %u unacked %u retrans %u/%u lost %u backoff %u "
           "rto %u ms cwnd %u ssthresh %u last_data_sent %u ms last_data_recv %u ms last_ack_recv %u ms "
           "rcv_space %u snd_wnd %u bytes_acked %llu bytes_received %llu\n",
           who, sent, total_out, got, total_in, ti.tcpi_state, ti.tcpi_unacked, ti.tcpi_retransmits,
           ti.tcpi_total_retrans, ti.tcpi_lost, ti.tcpi_backoff, ti.tcpi_rto / 1000, ti.tcpi_snd_cwnd,
           ti.tcpi_snd_ssthresh, ti.tcpi_last_data_sent, ti.tcpi_last_data_recv, ti.tcpi_last_ack_recv,
           ti.tcpi_rcv_space, ti.tcpi_snd_wnd, (unsigned long long)ti.tcpi_bytes_acked,
           (unsigned long long)ti.tcpi_bytes_received);
    fflush(stdout);
    if (o_on_stall != NULL && atomic_exchange(&stall_cmd_ran, 1) == 0) {
        printf("%s: running --on-stall command\n", who);
        fflush(stdout);
        int rc = system(o_on_stall);
        printf("%s: --on-stall command exited %d\n", who, rc);
        fflush(stdout);
    }
}

static int connect_to(struct thread_res *r)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) {
        snprintf(r->why, sizeof r->why, "socket: %s", strerror(errno));
        return -1;
    }
    /* A blocking connect, bounded by the stall time: non-blocking, then a
     * poll for its end. */
    int fl = fcntl(fd, F_GETFL);
    fcntl(fd, F_SETFL, fl | O_NONBLOCK);
    double t0 = now_s();
    int rc = connect(fd, (struct sockaddr *)&dst, sizeof dst), err = rc == 0 ? 0 : errno;
    while (rc != 0 && err == ENETUNREACH && now_s() - t0 < o_link_wait) {
        usleep(100000);
        close(fd); /* a new socket, as a client library would */
        fd = socket(AF_INET, SOCK_STREAM, 0);
        if (fd < 0)
            break;
        fcntl(fd, F_SETFL, fl | O_NONBLOCK);
        rc = connect(fd, (struct sockaddr *)&dst, sizeof dst);
        err = rc == 0 ? 0 : errno;
    }
    if (rc != 0 && err == EINPROGRESS) {
        struct pollfd p = {.fd = fd, .events = POLLOUT};
        rc = poll(&p, 1, (int)(o_stall * 1000));
        socklen_t el = sizeof err;
        if (rc == 1 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el) != 0)
            err = errno;
        else if (rc == 0)
            err = ETIMEDOUT;
    }
    if (err != 0) {
        snprintf(r->why, sizeof r->why, "connect: %s after %.1f s", strerror(err), now_s() - t0);
        close(fd);
        return -1;
    }
    if (now_s() - t0 > 0.9)
        printf("%s client %d: note: connect took %.1f s\n", r->big ? "big" : "pipe", r->id, now_s() - t0);
    fcntl(fd, F_SETFL, fl);
    /* The timeouts only bound each call, so that a run past its limit is
     * seen; the limit itself is checked against the run's deadline. */
    struct timeval tv = {.tv_sec = 0, .tv_usec = 200000};
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    return fd;
}

/* Write all of out and read exactly in_len bytes into in, interleaved only
 * as a blocking client does: everything written first. 0, or -1 with
 * r->why set (a stall is reported with the connection's TCP_INFO). */
static int exchange(struct thread_res *r, int fd, const char *out, size_t out_len, char *in, size_t in_len,
                    double deadline, int run)
{
    size_t sent = 0, got = 0;
    double moved = now_s();
    char who[64];
    snprintf(who, sizeof who, "%s client %d run %d", r->big ? "big" : "pipe", r->id, run);
    while (sent < out_len || got < in_len) {
        ssize_t n;
        if (sent < out_len)
            n = send(fd, out + sent, out_len - sent, MSG_NOSIGNAL);
        else
            n = recv(fd, in + got, in_len - got, 0);
        if (n > 0) {
            double t = now_s();
            if (t - moved > r->max_wait)
                r->max_wait = t - moved;
            moved = t;
            if (sent < out_len)
                sent += (size_t)n;
            else
                got += (size_t)n;
        } else if (n == 0) {
            snprintf(r->why, sizeof r->why, "%s: the server closed the connection after %zu of %zu reply bytes", who,
                     got, in_len);
            return -1;
        } else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
            snprintf(r->why, sizeof r->why, "%s: %s: %s (wrote %zu of %zu, read %zu of %zu)", who,
                     sent < out_len ? "send" : "recv", strerror(errno), sent, out_len, got, in_len);
            return -1;
        }
        double t = now_s();
        if (t > deadline || t - moved > o_stall) {
            const char *what = t > deadline ? "not complete within the limit" : "STALL: nothing moved";
            printf("%s: %s (%.1f s since its start, %.1f s since a byte moved)\n", who, what, t - (deadline - o_limit),
                   t - moved);
            print_tcp_info(fd, who, sent, out_len, got, in_len);
            snprintf(r->why, sizeof r->why, "%s: %s: %.1f s since its start, %.1f s since a byte moved (wrote %zu of %zu, read %zu of %zu)",
                     who, what, t - (deadline - o_limit), t - moved, sent, out_len, got, in_len);
            return -1;
        }
    }
    return 0;
}

static int pipe_run(struct thread_res *r, int run)
{
    int fd = connect_to(r);
    if (fd < 0)
        return -1;
    char *in = malloc(pipe_rep_len);
    if (in == NULL) {
        snprintf(r->why, sizeof r->why, "malloc");
        close(fd);
        return -1;
    }
    double t0 = now_s();
    int rc = exchange(r, fd, pipe_req, pipe_req_len, in, pipe_rep_len, t0 + o_limit, run);
    double t = now_s() - t0;
    close(fd);
    if (rc == 0 && memcmp(in, pipe_rep, pipe_rep_len) != 0) {
        size_t k = 0;
        while (in[k] == pipe_rep[k])
            k++;
        snprintf(r->why, sizeof r->why, "pipe client %d run %d: reply byte %zu is 0x%02x, expected 0x%02x (%.40s)",
                 r->id, run, k, (unsigned char)in[k], (unsigned char)pipe_rep[k], pipe_rep + k);
        rc = -1;
    }
    free(in);
    if (rc == 0)
        r->secs[r->runs++] = t;
    return rc;
}

/* The value of a big run: bytes from a xorshift seeded by thread and run. */
static void fill_value(char *v, size_t n, uint64_t seed)
{
    uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
    for (size_t i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        v[i] = (char)(x >> 24);
    }
}

static int big_run(struct thread_res *r, int fd, int run, char *out, char *exp, char *in)
{
    char hdr[128];
    int hl = snprintf(hdr, sizeof hdr, "*3\r\n$3\r\nSET\r\n$%d\r\nbig:%03d\r\n$%zu\r\n", 7, r->id, o_size);
    size_t ol = 0;
    memcpy(out, hdr, (size_t)hl);
    ol += (size_t)hl;
    fill_value(out + ol, o_size, ((uint64_t)r->id << 32) | (uint64_t)run);
    ol += o_size;
    ol += (size_t)sprintf(out + ol, "\r\n*2\r\n$3\r\nGET\r\n$7\r\nbig:%03d\r\n", r->id);
    size_t el = (size_t)sprintf(exp, "+OK\r\n$%zu\r\n", o_size);
    memcpy(exp + el, out + hl, o_size);
    el += o_size;
    memcpy(exp + el, "\r\n", 2);
    el += 2;
    double t0 = now_s();
    if (exchange(r, fd, out, ol, in, el, t0 + o_limit, run) != 0)
        return -1;
    double t = now_s() - t0;
    if (memcmp(in, exp, el) != 0) {
        size_t k = 0;
        while (in[k] == exp[k])
            k++;
        snprintf(r->why, sizeof r->why, "big client %d run %d: reply byte %zu of %zu is 0x%02x, expected 0x%02x",
                 r->id, run, k, el, (unsigned char)in[k], (unsigned char)exp[k]);
        return -1;
    }
    r->secs[r->runs++] = t;
    return 0;
}

static int more_runs(const struct thread_res *r)
{
    if (atomic_load(&failed))
        return 0;
    if (o_seconds > 0)
        return now_s() - t_start < o_seconds;
    return r->runs < o_runs;
}

static void grow(struct thread_res *r)
{
    if (r->runs < r->cap)
        return;
    r->cap = r->cap ? r->cap * 2 : 64;
    r->secs = realloc(r->secs, (size_t)r->cap * sizeof *r->secs);
    if (r->secs == NULL) {
        perror("realloc");
        exit(2);
    }
}

static void *thread_main(void *arg)
{
    struct thread_res *r = arg;
    int fd = -1;
    char *out = NULL, *exp = NULL, *in = NULL;
    if (r->big) {
        out = malloc(o_size + 256);
        exp = malloc(o_size + 64);
        in = malloc(o_size + 64);
        if (out == NULL || exp == NULL || in == NULL) {
            snprintf(r->why, sizeof r->why, "malloc");
            goto fail;
        }
        fd = connect_to(r);
        if (fd < 0)
            goto fail;
    }
    while (more_runs(r)) {
        grow(r);
        if ((r->big ? big_run(r, fd, r->runs, out, exp, in) : pipe_run(r, r->runs)) != 0)
            goto fail;
    }
    goto done;
fail:
    atomic_store(&failed, 1);
done:
    if (fd >= 0)
        close(fd);
    free(out);
    free(exp);
    free(in);
    return NULL;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void usage(void)
{
    fprintf(stderr, "usage: pipe_client HOST PORT [--pipe N] [--big N] [--runs R | --seconds S] [--pairs P]\n"
                    "                   [--size BYTES] [--limit SECONDS] [--stall SECONDS] [--on-stall CMD]\n"
                    "                   [--link-wait SECONDS]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    if (argc < 3)
        usage();
    memset(&dst, 0, sizeof dst);
    dst.sin_family = AF_INET;
    dst.sin_port = htons((uint16_t)atoi(argv[2]));
    if (inet_pton(AF_INET, argv[1], &dst.sin_addr) != 1)
        usage();
    for (int i = 3; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (v == NULL)
            usage();
        i++;
        if (!strcmp(a, "--pipe"))
            o_pipe = atoi(v);
        else if (!strcmp(a, "--big"))
            o_big = atoi(v);
        else if (!strcmp(a, "--runs"))
            o_runs = atoi(v);
        else if (!strcmp(a, "--seconds"))
            o_seconds = atof(v);
        else if (!strcmp(a, "--pairs"))
            o_pairs = atoi(v);
        else if (!strcmp(a, "--size"))
            o_size = (size_t)strtoull(v, NULL, 0);
        else if (!strcmp(a, "--limit"))
            o_limit = atof(v);
        else if (!strcmp(a, "--link-wait"))
            o_link_wait = atof(v);
        else if (!strcmp(a, "--stall"))
            o_stall = atof(v);
        else if (!strcmp(a, "--on-stall"))
            o_on_stall = v;
        else
            usage();
    }
    if (o_pipe < 0 || o_big < 0 || o_pipe + o_big == 0 || o_runs < 1 || o_pairs < 1 || o_size < 1 ||
        o_limit <= 0 || o_stall < 0)
        usage();
    if (o_stall == 0)
        o_stall = o_limit;
    if (o_pipe > 0)
        build_pipe();

    int n = o_pipe + o_big;
    struct thread_res *res = calloc((size_t)n, sizeof *res);
    pthread_t *th = calloc((size_t)n, sizeof *th);
    if (res == NULL || th == NULL)
        return 2;
    t_start = now_s();
    for (int i = 0; i < n; i++) {
        res[i].id = i;
        res[i].big = i >= o_pipe;
        if (pthread_create(&th[i], NULL, thread_main, &res[i]) != 0) {
            perror("pthread_create");
            return 2;
        }
    }
    int bad = 0;
    long total = 0;
    double worst = 0, wait = 0;
    for (int i = 0; i < n; i++) {
        pthread_join(th[i], NULL);
        struct thread_res *r = &res[i];
        qsort(r->secs, (size_t)r->runs, sizeof *r->secs, cmp_d);
        double med = r->runs ? r->secs[r->runs / 2] : 0, max = r->runs ? r->secs[r->runs - 1] : 0;
        printf("%s client %d: %d runs complete, median %.3f s, slowest %.3f s, longest wait for a byte %.3f s%s%s\n",
               r->big ? "big" : "pipe", r->id, r->runs, med, max, r->max_wait, r->why[0] ? "; FAILED: " : "", r->why);
        if (r->max_wait > wait)
            wait = r->max_wait;
        bad += r->why[0] != 0;
        total += r->runs;
        if (max > worst)
            worst = max;
    }
    printf("pipe_client: %d pipe + %d big clients, %ld runs complete in %.1f s, slowest run %.3f s, longest wait for a "
           "byte %.3f s (limit %.1f s, stall %.1f s): %s\n",
           o_pipe, o_big, total, now_s() - t_start, worst, wait, o_limit, o_stall, bad ? "FAILED" : "ok");
    for (int i = 0; i < n; i++)
        free(res[i].secs);
    free(res);
    free(th);
    free(pipe_req);
    free(pipe_rep);
    return bad ? 1 : 0;
}
