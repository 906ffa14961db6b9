/*
 * ctl_server.c - the control thread: socket set-up and removal, the poll
 * loop that serves up to CTL_MAX_PEERS conversations at once (each one a
 * ctl_peer, ctl_peer.c: its own buffers and deadline), accepting, and what
 * happens when accepting fails (see ctl.h). The commands are in
 * ctl_cmds.c and ctl_info.c.
 * Design: docs/design.md#one-poll-loop-serves-every-control-client
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "common/log.h"
#include "conf/conf.h"
#include "ctl/ctl_proc_fds.h"
#include "ctl/ctl_path.h"
#include "ctl/ctl_peer.h"
#include "ctl/ctl_priv.h"
#include "common/libc.h"

/*
 * Every socket call goes through the libc table: inside liblstack.so,
 * socket()/accept()/poll()/close() by name are lstack's interposed
 * exports. Calls lstack does not interpose (mkdir, chmod, unlink, pipe2,
 * open) are called by name.
 *
 * One thread, poll() over the listener, a wake-up pipe and the peers. A
 * round: poll until an fd is ready or the nearest deadline; step every
 * peer (send what its socket takes, read what it sent, drop it past its
 * deadline); then accept. A long reply (a dump) yields one page per round,
 * so concurrent dumps take turns and a peer that stops reading holds only
 * its own slot until its send deadline. Nothing blocks, and the stack lock
 * is held only inside a command's piece (ctl_cmds.c), never while sending.
 *
 * Out of fds: accept4 fails with EMFILE (or ENFILE) and the peer stays in
 * the backlog, so poll reports the listener ready again at once: a loop
 * that retries spins (25.7 s of CPU in 60 s measured in redis at its fd
 * limit, with the peer never answered). The thread keeps one spare fd
 * (/dev/null) open: it closes it, accepts the peer into the freed number,
 * sends one error record saying the process is out of fds (count and
 * RLIMIT_NOFILE), closes it and opens the spare again. If that cannot work
 * (the spare's number is at or above a lowered limit, or another thread
 * took the number), the listener rests CTL_BACKOFF_MS and the waiting peer
 * is served once fds are free. Too many peers at once get a "busy" error
 * record. Failures are logged once per CTL_WARN_EVERY_S, with a count.
 */

enum {
    CTL_LISTEN_BACKLOG = 16,
    CTL_BACKOFF_MS = 250,      /* the listener rests this long when nothing can be accepted */
    CTL_WARN_EVERY_S = 10,     /* at most one warning per kind of failure this often */
};

struct ctl_server_state ctl_srv;

/* A failure worth a warning, counted between two warnings. */
struct ctl_warn {
    uint64_t last_us;         /* 0: never warned */
    unsigned long since;      /* occurrences since the last warning */
};

static struct {
    bool started;
    pid_t owner;              /* the process that created the socket */
    int listen_fd;
    int wake[2];              /* ctl_stop writes to wake[1] */
    int spare;                /* /dev/null: given up to accept one peer when out of fds; -1 */
    int npeers;
    struct ctl_peer *peers[CTL_MAX_PEERS];
    uint64_t listen_after_us; /* the listener is not polled before (0: it is) */
    struct ctl_warn warn_fds, warn_accept, warn_poll;
    pthread_t thread;
    char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
} srv = {.listen_fd = -1, .wake = {-1, -1}, .spare = -1};

uint64_t ctl_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* True if a warning of this kind is due now (the first one, then at most
 * one per CTL_WARN_EVERY_S); *since then holds how many occurred since the
 * last one, this one included. */
static bool warn_due(struct ctl_warn *w, uint64_t now, unsigned long *since)
{
    w->since++;
    if (w->last_us != 0 && now - w->last_us < CTL_WARN_EVERY_S * 1000000ull)
        return false;
    *since = w->since;
    w->since = 0;
    w->last_us = now;
    return true;
}

/* ---- peers ---- */

static int open_spare(void)
{
    return open("/dev/null", O_RDONLY | O_CLOEXEC);
}

static void drop_peer(struct ctl_peer *p)
{
    for (int i = 0; i < srv.npeers; i++) {
        if (srv.peers[i] == p) {
            srv.peers[i] = srv.peers[--srv.npeers]; /* forgotten before closed: see after_fork_child */
            break;
        }
    }
    ctl_peer_close(p);
}

/* pfd[i] and polled[i] for every peer. Returns how many, and the nearest
 * deadline in *next (left alone if later). */
static int peer_pollfds(struct pollfd *pfd, struct ctl_peer **polled, uint64_t *next)
{
    for (int i = 0; i < srv.npeers; i++) {
        struct ctl_peer *p = srv.peers[i];
        polled[i] = p;
        pfd[i] = (struct pollfd){.fd = ctl_peer_fd(p), .events = ctl_peer_events(p)};
        *next = ctl_peer_deadline(p) < *next ? ctl_peer_deadline(p) : *next;
    }
    return srv.npeers;
}

/* Step the n peers polled (revents from pfd when polled_ok, else none:
 * only their deadlines), dropping those whose conversation is over. */
static void step_peers(const struct pollfd *pfd, struct ctl_peer **polled, int n, bool polled_ok, uint64_t now)
{
    for (int i = 0; i < n; i++)
        if (!ctl_peer_step(polled[i], polled_ok ? pfd[i].revents : 0, now))
            drop_peer(polled[i]);
}

/* Step every peer on what poll says now, without waiting: a peer that
 * closed since this round's poll frees its slot before a newcomer is told
 * the server is busy. */
static void reap_peers(uint64_t now)
{
    struct pollfd pfd[CTL_MAX_PEERS];
    struct ctl_peer *polled[CTL_MAX_PEERS];
    uint64_t next = UINT64_MAX;
    int n = peer_pollfds(pfd, polled, &next);
    step_peers(pfd, polled, n, libc.poll(pfd, (nfds_t)n, 0) > 0, now);
}

static void take_peer(int fd, uint64_t now)
{
    if (srv.npeers == CTL_MAX_PEERS)
        reap_peers(now);
    struct ctl_peer *p = srv.npeers < CTL_MAX_PEERS ? ctl_peer_open(fd, now) : NULL;
    if (p != NULL) {
        srv.peers[srv.npeers++] = p;
        return;
    }
    if (srv.npeers < CTL_MAX_PEERS)
        ctl_peer_refuse(fd, "out of memory");
    else
        ctl_peer_refuse(fd,
                        "busy: the process is serving %d control connections already, the most it serves at "
                        "once; try again in a few seconds",
                        CTL_MAX_PEERS);
    libc.close(fd);
}

static void out_of_fds_reason(int err, char *why, size_t len)
{
    long open_now = ctl_proc_fds_open(), limit = ctl_proc_fds_limit();
    if (err == ENFILE)
        snprintf(why, len,
                 "the system is out of file descriptors (ENFILE: fs.file-max reached): the process cannot "
                 "serve stackctl until some are closed");
    else if (open_now >= 0)
        snprintf(why, len,
                 "out of file descriptors: %ld open, limit %ld (RLIMIT_NOFILE); the process cannot serve "
                 "stackctl until it closes some or its limit is raised",
                 open_now, limit);
    else
        snprintf(why, len,
                 "out of file descriptors: limit %ld (RLIMIT_NOFILE) reached; the process cannot serve "
                 "stackctl until it closes some or its limit is raised",
                 limit);
}

/* accept4 failed with err (EMFILE or ENFILE). Give the spare up for one
 * accept, tell that peer why, take the spare back. Returns true if a peer
 * was answered and the spare is back (the caller may accept the next);
 * false if not: the listener then rests CTL_BACKOFF_MS. */
static bool answer_without_fds(int err, uint64_t now)
{
    int fd = -1;
    if (srv.spare >= 0) {
        libc.close(srv.spare);
        srv.spare = -1;
        fd = libc.accept4(srv.listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd >= 0) {
            char why[300];
            out_of_fds_reason(err, why, sizeof(why));
            ctl_peer_refuse(fd, "%s", why);
            libc.close(fd);
        }
        srv.spare = open_spare();
    }
    unsigned long n;
    if (warn_due(&srv.warn_fds, now, &n))
        LSTACK_WARN("control socket: out of file descriptors (%s, limit %ld): %lu stackctl connection(s) %s",
                    strerror(err), ctl_proc_fds_limit(), n,
                    fd >= 0 ? "told so and closed" : "left waiting (the spare fd cannot help; retrying)");
    if (fd >= 0 && srv.spare >= 0)
        return true;
    srv.listen_after_us = now + CTL_BACKOFF_MS * 1000ull;
    return false;
}

/* Accept the peers waiting (at most a backlog's worth per round). */
static void accept_peers(uint64_t now)
{
    if (srv.spare < 0)
        srv.spare = open_spare();
    for (int i = 0; i < CTL_LISTEN_BACKLOG; i++) {
        int fd = libc.accept4(srv.listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd >= 0) {
            take_peer(fd, now);
            continue;
        }
        if (errno == EINTR || errno == ECONNABORTED)
            continue;
        if (errno == EMFILE || errno == ENFILE) {
            if (!answer_without_fds(errno, now))
                return;
            continue;
        }
        if (errno != EAGAIN && errno != EWOULDBLOCK) { /* ENOMEM, ENOBUFS: the same would recur at once */
            unsigned long n;
            if (warn_due(&srv.warn_accept, now, &n))
                LSTACK_WARN("control socket: accept failed (%s), %lu time(s); retrying every %d ms",
                            strerror(errno), n, CTL_BACKOFF_MS);
            srv.listen_after_us = now + CTL_BACKOFF_MS * 1000ull;
        }
        return;
    }
}

/* ---- the loop ---- */

/* poll's timeout for the deadline next (UINT64_MAX: none). */
static int timeout_ms(uint64_t next, uint64_t now)
{
    if (next == UINT64_MAX)
        return -1;
    if (next <= now)
        return 0;
    uint64_t ms = (next - now + 999) / 1000; /* rounded up: woken at or after the deadline */
    return ms > INT_MAX ? INT_MAX : (int)ms;
}

/* poll failed with err (EINVAL: more fds than a lowered RLIMIT_NOFILE;
 * ENOMEM): rest instead of retrying at once. The round goes on without
 * events, so deadlines still drop peers (which makes the set smaller). */
static void poll_failed(int err, uint64_t now)
{
    unsigned long n;
    if (warn_due(&srv.warn_poll, now, &n))
        LSTACK_WARN("control socket: poll failed (%s), %lu time(s); retrying every %d ms", strerror(err), n,
                    CTL_BACKOFF_MS);
    nanosleep(&(struct timespec){.tv_nsec = CTL_BACKOFF_MS * 1000000L}, NULL);
}

static void *ctl_thread(void *arg)
{
    (void)arg;
    struct pollfd pfd[2 + CTL_MAX_PEERS];
    struct ctl_peer *polled[CTL_MAX_PEERS];
    uint64_t now = ctl_now_us();
    for (;;) {
        int n = 0;
        uint64_t next = UINT64_MAX;
        pfd[n++] = (struct pollfd){.fd = srv.wake[0], .events = POLLIN};
        bool listening = now >= srv.listen_after_us;
        if (listening)
            pfd[n++] = (struct pollfd){.fd = srv.listen_fd, .events = POLLIN};
        else
            next = srv.listen_after_us;
        int base = n, np = peer_pollfds(pfd + base, polled, &next);
        n += np;
        int r = libc.poll(pfd, (nfds_t)n, timeout_ms(next, now));
        if (r < 0 && errno != EINTR)
            poll_failed(errno, now);
        now = ctl_now_us();
        if (r > 0 && pfd[0].revents != 0)
            break;
        step_peers(pfd + base, polled, np, r > 0, now);
        if (listening && r > 0 && pfd[1].revents != 0)
            accept_peers(now);
    }
    while (srv.npeers > 0)
        drop_peer(srv.peers[0]);
    return NULL;
}

/* ---- life cycle ---- */

static void close_spare(void)
{
    if (srv.spare >= 0)
        libc.close(srv.spare);
    srv.spare = -1;
}

/* In a child forked while serving: the thread is gone; drop our copies of
 * its fds, keep the parent's socket file. Peers are only closed, not
 * freed (the thread may have been anywhere in them; a few KiB stay). A
 * peer is removed from the array before its fd is closed, so every fd in
 * the array is open; one accepted but not yet in it is left open (it is
 * close-on-exec). */
static void after_fork_child(void)
{
    if (!srv.started)
        return;
    for (int i = 0; i < srv.npeers; i++)
        libc.close(ctl_peer_fd(srv.peers[i]));
    srv.npeers = 0;
    close_spare();
    libc.close(srv.listen_fd);
    libc.close(srv.wake[0]);
    libc.close(srv.wake[1]);
    srv.started = false;
}

/* Remove the sockets that processes killed without a chance to clean up
 * (kill -9) left in dir: any lstack.<pid>.sock whose pid no longer exists.
 * Only our own user's files (unlink fails quietly on others'). */
static void remove_stale_sockets(const char *dir)
{
    DIR *d = opendir(dir);
    if (d == NULL)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        char prefix[CTL_PREFIX_MAX];
        pid_t pid;
        if (!ctl_sock_name_parse(e->d_name, prefix, &pid))
            continue;
        if (kill(pid, 0) != 0 && errno == ESRCH)
            unlinkat(dirfd(d), e->d_name, 0);
    }
    closedir(d);
}

static int make_socket(char *err, size_t errlen)
{
    const char *dir = ctl_run_dir();
    if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
        snprintf(err, errlen, "cannot create %s: %s (set %s to a directory this user can write)", dir,
                 strerror(errno), CTL_RUN_DIR_ENV);
        return -1;
    }
    remove_stale_sockets(dir);
    struct stat st;
    if (lstat(srv.path, &st) == 0) {
        if (!S_ISSOCK(st.st_mode)) {
            snprintf(err, errlen, "%s exists and is not a socket", srv.path);
            return -1;
        }
        unlink(srv.path); /* left by a dead process that had our pid */
    }
    /* Non-blocking: a client that gives up between poll and accept4 must not
     * block the thread (accept4 makes each accepted fd non-blocking too). */
    int fd = libc.socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) {
        snprintf(err, errlen, "socket(AF_UNIX): %s", strerror(errno));
        return -1;
    }
    struct sockaddr_un un = {.sun_family = AF_UNIX};
    memcpy(un.sun_path, srv.path, strlen(srv.path) + 1);
    if (libc.bind(fd, (struct sockaddr *)&un, sizeof(un)) != 0 || chmod(srv.path, 0600) != 0 ||
        libc.listen(fd, CTL_LISTEN_BACKLOG) != 0) {
        snprintf(err, errlen, "cannot serve %s: %s (set %s to a directory this user can write)", srv.path,
                 strerror(errno), CTL_RUN_DIR_ENV);
        libc.close(fd);
        unlink(srv.path);
        return -1;
    }
    srv.listen_fd = fd;
    return 0;
}

static char *format_conf(const struct lstack_conf *conf)
{
    int need = lstack_conf_format(conf, NULL, 0);
    char *text = need >= 0 ? malloc((size_t)need + 1) : NULL;
    if (text != NULL)
        lstack_conf_format(conf, text, (size_t)need + 1);
    return text;
}

static int start_thread(char *err, size_t errlen)
{
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old); /* signals stay the application's */
    int rc = pthread_create(&srv.thread, NULL, ctl_thread, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        snprintf(err, errlen, "cannot start the control thread: %s", strerror(rc));
        return -1;
    }
    pthread_setname_np(srv.thread, "lstack-ctl");
    return 0;
}

int ctl_start(const struct ctl_host *host, const struct lstack_conf *conf, const char *conf_path, char *err,
              size_t errlen)
{
    static bool atfork_set;
    if (srv.started) {
        snprintf(err, errlen, "control socket already started");
        return -1;
    }
    if (!ctl_prefix_ok(conf->unix_prefix)) {
        snprintf(err, errlen, "unix_prefix \"%s\": only letters, digits, '.', '_' and '-', at most %d bytes",
                 conf->unix_prefix, CTL_PREFIX_MAX - 1);
        return -1;
    }
    if (ctl_sock_path(srv.path, sizeof(srv.path), ctl_run_dir(), conf->unix_prefix, getpid()) != 0) {
        snprintf(err, errlen, "control socket path in %s is longer than a unix socket allows", ctl_run_dir());
        return -1;
    }
    ctl_srv.host = host;
    snprintf(ctl_srv.conf_path, sizeof(ctl_srv.conf_path), "%s", conf_path);
    free(ctl_srv.conf_text);
    ctl_srv.conf_text = format_conf(conf);
    if (make_socket(err, errlen) != 0)
        return -1;
    if (pipe2(srv.wake, O_CLOEXEC) != 0) {
        snprintf(err, errlen, "pipe: %s", strerror(errno));
        libc.close(srv.listen_fd);
        unlink(srv.path);
        return -1;
    }
    srv.spare = open_spare(); /* -1 is survivable: accept_peers tries again */
    srv.npeers = 0;
    srv.listen_after_us = 0;
    if (!atfork_set) {
        pthread_atfork(NULL, NULL, after_fork_child);
        atfork_set = true;
    }
    srv.owner = getpid();
    srv.started = true;
    if (start_thread(err, errlen) != 0) {
        srv.started = false;
        close_spare();
        libc.close(srv.listen_fd);
        libc.close(srv.wake[0]);
        libc.close(srv.wake[1]);
        unlink(srv.path);
        return -1;
    }
    LSTACK_INFO("control socket %s (stackctl -p %ld)", srv.path, (long)getpid());
    return 0;
}

void ctl_stop(void)
{
    if (!srv.started || srv.owner != getpid())
        return;
    char c = 1;
    while (libc.write(srv.wake[1], &c, 1) < 0 && errno == EINTR)
        ;
    pthread_join(srv.thread, NULL);
    close_spare();
    libc.close(srv.listen_fd);
    libc.close(srv.wake[0]);
    libc.close(srv.wake[1]);
    unlink(srv.path);
    srv.started = false;
}

size_t ctl_server_fds(int *out, size_t max)
{
    const int fds[] = {srv.listen_fd, srv.wake[0], srv.wake[1], srv.spare};
    size_t n = 0;
    for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]) && n < max; i++)
        if (fds[i] >= 0)
            out[n++] = fds[i];
    return n;
}

const char *ctl_socket_path(void)
{
    return srv.started ? srv.path : NULL;
}
