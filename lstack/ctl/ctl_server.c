/*
 * ctl_server.c - the control thread: socket set-up and removal, accept
 * loop, peer check, hello, one request per connection, dispatch (see
 * ctl.h). The commands are in ctl_cmds.c and ctl_info.c.
 *
 * Every socket call goes through the libc table: inside liblstack.so,
 * socket()/accept()/poll()/close() by name are lstack's interposed
 * exports. Calls lstack does not interpose (mkdir, chmod, unlink, pipe2)
 * are called by name.
 *
 * Timeouts: a client has CTL_RECV_TIMEOUT_MS to send its request and must
 * take each reply chunk within CTL_SEND_TIMEOUT_MS, or it is dropped; one
 * stuck client never blocks the next for long, and never the data path
 * (the lock is never held while sending).
 *
 * Rejected: a thread per client (a dump is the only long request, and
 * concurrent dumps would only take turns at the lock) and keeping a
 * connection open for several requests (a `--watch` client would hold the
 * only server thread).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
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
#include "ctl/ctl_path.h"
#include "ctl/ctl_priv.h"
#include "posix/libc.h"

#ifndef LSTACK_VERSION
#define LSTACK_VERSION "unknown"
#endif

enum {
    CTL_RECV_TIMEOUT_MS = 2000,
    CTL_SEND_TIMEOUT_MS = 5000,
    CTL_LISTEN_BACKLOG = 16,
};

struct ctl_server_state ctl_srv;

static struct {
    bool started;
    pid_t owner;              /* the process that created the socket */
    int listen_fd;
    int wake[2];              /* ctl_stop writes to wake[1] */
    volatile int client_fd;   /* the connection being served, or -1 */
    pthread_t thread;
    char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
} srv = {.listen_fd = -1, .wake = {-1, -1}, .client_fd = -1};

uint64_t ctl_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* ---- reply stream ---- */

int ctl_out_flush(struct ctl_out *o)
{
    if (o->failed)
        return -1;
    if (o->buf.oom) {
        o->failed = true;
        return -1;
    }
    size_t off = 0;
    while (off < o->buf.len) {
        ssize_t n = libc.send(o->fd, o->buf.p + off, o->buf.len - off, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            LSTACK_DEBUG("ctl: client stopped reading (%s): reply dropped", strerror(errno));
            o->failed = true;
            return -1;
        }
        off += (size_t)n;
    }
    ctl_buf_reset(&o->buf);
    return 0;
}

void ctl_out_error(struct ctl_out *o, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    ctl_rec_begin(&o->buf, "error");
    ctl_rec_str(&o->buf, "error", msg);
    ctl_rec_end(&o->buf);
}

/* ---- one conversation ---- */

static const struct {
    const char *name;
    void (*run)(struct ctl_out *o, const struct ctl_obj *req);
} cmds[] = {
    {"connections", ctl_cmd_connections},
    {"stats", ctl_cmd_stats},
    {"nic", ctl_cmd_nic},
    {"config", ctl_cmd_config},
    {"loglevel", ctl_cmd_loglevel},
};

static void set_timeout(int fd, int opt, int ms)
{
    struct timeval tv = {.tv_sec = ms / 1000, .tv_usec = (ms % 1000) * 1000};
    libc.setsockopt(fd, SOL_SOCKET, opt, &tv, sizeof(tv));
}

static void program_name(char *out, size_t len)
{
    snprintf(out, len, "?");
    int fd = open("/proc/self/comm", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    ssize_t n = libc.read(fd, out, len - 1);
    libc.close(fd);
    if (n <= 0)
        return;
    out[n] = '\0';
    out[strcspn(out, "\n")] = '\0';
}

static int count_stacks(void)
{
    int n = 0;
    ctl_srv.host->lock();
    while (ctl_srv.host->stack(n) != NULL)
        n++;
    ctl_srv.host->unlock();
    return n;
}

static void hello(struct ctl_out *o)
{
    char prog[64];
    program_name(prog, sizeof(prog));
    ctl_rec_begin(&o->buf, "hello");
    ctl_rec_str(&o->buf, "proto", CTL_PROTO_NAME);
    ctl_rec_u64(&o->buf, "version", CTL_PROTO_VERSION);
    ctl_rec_i64(&o->buf, "pid", getpid());
    ctl_rec_str(&o->buf, "prog", prog);
    ctl_rec_u64(&o->buf, "uid", geteuid());
    ctl_rec_str(&o->buf, "lstack", LSTACK_VERSION);
    ctl_rec_i64(&o->buf, "stacks", count_stacks());
    ctl_rec_end(&o->buf);
}

/* Read one request line into buf (NUL-terminated, newline dropped).
 * Returns 0, or -1 (timeout, EOF, too long: reason in why). */
static int read_request(int fd, char *buf, size_t len, const char **why)
{
    size_t got = 0;
    for (;;) {
        ssize_t n = libc.recv(fd, buf + got, len - 1 - got, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            *why = n == 0 ? "closed before sending a request" : "no request in time";
            return -1;
        }
        got += (size_t)n;
        buf[got] = '\0';
        char *nl = memchr(buf, '\n', got);
        if (nl != NULL) {
            *nl = '\0';
            return 0;
        }
        if (got == len - 1) {
            *why = "request longer than the protocol allows";
            return -1;
        }
    }
}

static void dispatch(struct ctl_out *o, const struct ctl_obj *req)
{
    int64_t version = -1;
    if (!ctl_obj_i64(req, "version", &version) || version != CTL_PROTO_VERSION) {
        ctl_out_error(o,
                      "protocol version mismatch: this process (lstack %s) speaks %s version %d, the "
                      "request is version %lld; use the stackctl of the same lstack build",
                      LSTACK_VERSION, CTL_PROTO_NAME, CTL_PROTO_VERSION, (long long)version);
        return;
    }
    const char *cmd = ctl_obj_str(req, "cmd");
    for (size_t i = 0; cmd != NULL && i < sizeof(cmds) / sizeof(cmds[0]); i++) {
        if (strcmp(cmd, cmds[i].name) == 0) {
            LSTACK_DEBUG("ctl: '%s' from uid %u pid %ld", cmd, (unsigned)ctl_srv.peer_uid,
                         (long)ctl_srv.peer_pid);
            cmds[i].run(o, req);
            return;
        }
    }
    ctl_out_error(o, "unknown command '%s' (known: connections, stats, nic, config, loglevel)",
                  cmd != NULL ? cmd : "(none)");
}

static void serve(int fd)
{
    struct ctl_out o = {.fd = fd};
    ctl_buf_init(&o.buf);
    set_timeout(fd, SO_RCVTIMEO, CTL_RECV_TIMEOUT_MS);
    set_timeout(fd, SO_SNDTIMEO, CTL_SEND_TIMEOUT_MS);

    struct ucred cred;
    socklen_t clen = sizeof(cred);
    if (libc.getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen) != 0) {
        ctl_out_error(&o, "cannot identify the peer (SO_PEERCRED: %s)", strerror(errno));
    } else if (cred.uid != 0 && cred.uid != geteuid()) {
        LSTACK_WARN("ctl: refused a request from uid %u pid %ld (only uid %u or root may ask)",
                    (unsigned)cred.uid, (long)cred.pid, (unsigned)geteuid());
        char who[32] = "root";
        if (geteuid() != 0)
            snprintf(who, sizeof(who), "uid %u or root", (unsigned)geteuid());
        ctl_out_error(&o, "permission denied: process %ld runs as uid %u; uid %u may not inspect it "
                          "(run stackctl as %s)",
                      (long)getpid(), (unsigned)geteuid(), (unsigned)cred.uid, who);
    } else {
        ctl_srv.peer_uid = cred.uid;
        ctl_srv.peer_pid = cred.pid;
        hello(&o);
        if (ctl_out_flush(&o) == 0) {
            char line[CTL_REQ_MAX];
            const char *why = NULL;
            struct ctl_obj req;
            char perr[128];
            if (read_request(fd, line, sizeof(line), &why) != 0)
                LSTACK_DEBUG("ctl: client %s", why);
            else if (ctl_obj_parse(line, &req, perr, sizeof(perr)) != 0)
                ctl_out_error(&o, "malformed request: %s", perr);
            else
                dispatch(&o, &req);
        }
    }
    ctl_out_flush(&o);
    ctl_buf_free(&o.buf);
}

static void *ctl_thread(void *arg)
{
    (void)arg;
    for (;;) {
        struct pollfd p[2] = {{.fd = srv.listen_fd, .events = POLLIN}, {.fd = srv.wake[0], .events = POLLIN}};
        int n = libc.poll(p, 2, -1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 || p[1].revents != 0)
            break;
        int fd = libc.accept4(srv.listen_fd, NULL, NULL, SOCK_CLOEXEC);
        if (fd < 0)
            continue; /* the client gave up already, or EMFILE: try the next */
        srv.client_fd = fd;
        serve(fd);
        srv.client_fd = -1;
        libc.close(fd);
    }
    return NULL;
}

/* ---- life cycle ---- */

/* In a child forked while serving: the thread is gone; drop our copies of
 * its fds, keep the parent's socket file. */
static void after_fork_child(void)
{
    if (!srv.started)
        return;
    if (srv.client_fd >= 0)
        libc.close(srv.client_fd);
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
     * block the thread (accepted fds do not inherit it). */
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
    if (!atfork_set) {
        pthread_atfork(NULL, NULL, after_fork_child);
        atfork_set = true;
    }
    srv.owner = getpid();
    srv.started = true;
    if (start_thread(err, errlen) != 0) {
        srv.started = false;
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
    libc.close(srv.listen_fd);
    libc.close(srv.wake[0]);
    libc.close(srv.wake[1]);
    unlink(srv.path);
    srv.started = false;
}

size_t ctl_server_fds(int *out, size_t max)
{
    const int fds[] = {srv.listen_fd, srv.wake[0], srv.wake[1]};
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
