/*
 * stackctl_target.c - which process stackctl talks to, and the opening of
 * the conversation (connect, hello, version check).
 *
 * Every lstack process has a socket <run dir>/<prefix>lstack.<pid>.sock
 * (ctl_path.h), so the run dir is the list of lstack processes: -p PID
 * picks by pid, -n NAME by program name (comm, argv[0] or the executable's
 * file name), neither picks the only live one. A socket whose pid is dead
 * is a leftover (a process killed by SIGKILL cannot remove it) and is
 * ignored. Each failure says which of the cases it is: no such process,
 * not an lstack process, none or several found, permission denied.
 *
 * Design: docs/design.md#stackctl-finds-a-process-by-its-control-socket
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "stackctl.h"

#define MAX_CANDS 256

struct cand {
    pid_t pid;
    bool alive;
    char prefix[CTL_PREFIX_MAX];
    char prog[64];
    char path[CTL_PREFIX_MAX + 256];
};

static bool pid_alive(pid_t pid)
{
    return kill(pid, 0) == 0 || errno == EPERM;
}

/* The first line of /proc/PID/<file> (comm), or "" if unreadable. */
static void proc_read(pid_t pid, const char *file, char *out, size_t len)
{
    char p[64];
    out[0] = '\0';
    snprintf(p, sizeof(p), "/proc/%ld/%s", (long)pid, file);
    int fd = open(p, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    ssize_t n = read(fd, out, len - 1);
    close(fd);
    out[n > 0 ? n : 0] = '\0';
    out[strcspn(out, "\n")] = '\0';
}

/* Does pid's program go by name? comm (15 bytes at most), argv[0]'s base
 * name, or the executable's (redis-server is a link to redis-check-rdb). */
static bool name_matches(pid_t pid, const char *comm, const char *name)
{
    if (strcmp(comm, name) == 0)
        return true;
    char buf[PATH_MAX];
    proc_read(pid, "cmdline", buf, sizeof(buf)); /* argv[0] ends at its NUL */
    if (buf[0] != '\0' && strcmp(basename(buf), name) == 0)
        return true;
    char p[64];
    snprintf(p, sizeof(p), "/proc/%ld/exe", (long)pid);
    ssize_t n = readlink(p, buf, sizeof(buf) - 1);
    if (n <= 0)
        return false;
    buf[n] = '\0';
    return strcmp(basename(buf), name) == 0;
}

/* Every control socket in the run dir (matching --prefix if given). */
static int scan(const struct sc_opts *o, struct cand *c, int *n, char *err, size_t errlen)
{
    const char *dir = ctl_run_dir();
    *n = 0;
    DIR *d = opendir(dir);
    if (d == NULL) {
        if (errno == ENOENT)
            return SC_OK; /* no lstack process ever ran here */
        snprintf(err, errlen, "cannot read %s: %s", dir, strerror(errno));
        return errno == EACCES ? SC_DENIED : SC_FAIL;
    }
    struct dirent *e;
    while ((e = readdir(d)) != NULL && *n < MAX_CANDS) {
        struct cand *x = &c[*n];
        if (!ctl_sock_name_parse(e->d_name, x->prefix, &x->pid))
            continue;
        if (o->prefix != NULL && strcmp(o->prefix, x->prefix) != 0)
            continue;
        if (ctl_sock_path(x->path, sizeof(x->path), dir, x->prefix, x->pid) != 0)
            continue;
        x->alive = pid_alive(x->pid);
        proc_read(x->pid, "comm", x->prog, sizeof(x->prog));
        (*n)++;
    }
    closedir(d);
    return SC_OK;
}

/* "123 (redis-server), 456 (lstackd)" of the live candidates. */
static void describe(const struct cand *c, int n, char *out, size_t len)
{
    size_t used = 0;
    out[0] = '\0';
    for (int i = 0; i < n && used < len; i++)
        if (c[i].alive)
            used += (size_t)snprintf(out + used, len - used, "%s%ld (%s%s%s)", used ? ", " : "", (long)c[i].pid,
                                     c[i].prog, c[i].prefix[0] ? ", prefix " : "", c[i].prefix);
    if (used == 0)
        snprintf(out, len, "none");
}

static void take(const struct cand *x, struct sc_target *t)
{
    t->pid = x->pid;
    snprintf(t->prog, sizeof(t->prog), "%s", x->prog);
    snprintf(t->path, sizeof(t->path), "%s", x->path);
}

static int by_pid(const struct sc_opts *o, const struct cand *c, int n, struct sc_target *t, char *err,
                  size_t errlen)
{
    char comm[64];
    if (!pid_alive(o->pid)) {
        snprintf(err, errlen, "no process with PID %ld", (long)o->pid);
        return SC_NOTARGET;
    }
    proc_read(o->pid, "comm", comm, sizeof(comm));
    int found = -1, count = 0;
    for (int i = 0; i < n; i++)
        if (c[i].pid == o->pid) {
            found = found < 0 ? i : found;
            count++;
        }
    if (count > 1) {
        snprintf(err, errlen, "process %ld has several control sockets in %s (other PID namespaces?): choose "
                              "one with --prefix", (long)o->pid, ctl_run_dir());
        return SC_NOTARGET;
    }
    if (found < 0) {
        snprintf(err, errlen,
                 "process %ld (%s) is not an lstack process: no control socket %s%ld%s in %s (or its stack has "
                 "not started yet, or it runs with another %s)",
                 (long)o->pid, comm, CTL_SOCK_STEM, (long)o->pid, CTL_SOCK_SUFFIX, ctl_run_dir(), CTL_RUN_DIR_ENV);
        return SC_NOTARGET;
    }
    if (o->name != NULL && !name_matches(o->pid, comm, o->name)) {
        snprintf(err, errlen, "process %ld is '%s', not '%s'", (long)o->pid, comm, o->name);
        return SC_NOTARGET;
    }
    take(&c[found], t);
    return SC_OK;
}

int sc_find_target(const struct sc_opts *o, struct sc_target *t, char *err, size_t errlen)
{
    static struct cand c[MAX_CANDS];
    int n = 0;
    int rc = scan(o, c, &n, err, errlen);
    if (rc != SC_OK)
        return rc;
    if (o->pid > 0)
        return by_pid(o, c, n, t, err, errlen);
    char list[2048];
    describe(c, n, list, sizeof(list));
    int found = -1, count = 0;
    for (int i = 0; i < n; i++) {
        if (!c[i].alive || (o->name != NULL && !name_matches(c[i].pid, c[i].prog, o->name)))
            continue;
        found = found < 0 ? i : found;
        count++;
    }
    if (count == 1) {
        take(&c[found], t);
        return SC_OK;
    }
    if (o->name != NULL && count == 0)
        snprintf(err, errlen, "no running lstack process is named '%s' (lstack processes: %s)", o->name, list);
    else if (o->name != NULL)
        snprintf(err, errlen, "several lstack processes are named '%s': %s; choose one with -p PID", o->name, list);
    else if (count == 0)
        snprintf(err, errlen, "no running lstack process found (no live control socket in %s)", ctl_run_dir());
    else
        snprintf(err, errlen, "several lstack processes are running: %s; choose one with -p PID or -n NAME", list);
    return SC_NOTARGET;
}

int sc_list(const struct sc_opts *o, FILE *out)
{
    static struct cand c[MAX_CANDS];
    int n = 0;
    char err[512];
    int rc = scan(o, c, &n, err, sizeof(err));
    if (rc != SC_OK) {
        fprintf(stderr, "stackctl: %s\n", err);
        return rc;
    }
    static const char *const head[] = {"PID", "PROGRAM", "PREFIX", "STATE", "SOCKET", NULL};
    struct sc_table tb;
    sc_table_init(&tb, head, "rllll");
    for (int i = 0; i < n; i++) {
        char pid[16];
        snprintf(pid, sizeof(pid), "%ld", (long)c[i].pid);
        const char *row[] = {pid, c[i].alive ? c[i].prog : "-", c[i].prefix[0] ? c[i].prefix : "-",
                             c[i].alive ? "running" : "gone (leftover socket)", c[i].path};
        sc_table_row(&tb, row);
    }
    sc_table_print(&tb, out);
    sc_table_free(&tb);
    return SC_OK;
}

/* ---- connect and hello ---- */

static int connect_error(const struct sc_target *t, char *err, size_t errlen)
{
    int e = errno;
    struct stat st;
    if (e == EACCES || e == EPERM) {
        long owner = stat(t->path, &st) == 0 ? (long)st.st_uid : -1;
        snprintf(err, errlen,
                 "permission denied: cannot connect to %s (process %ld runs as uid %ld, stackctl as uid %ld); "
                 "run stackctl as that user or as root",
                 t->path, (long)t->pid, owner, (long)geteuid());
        return SC_DENIED;
    }
    if (e == ECONNREFUSED || e == ENOENT) {
        snprintf(err, errlen, "process %ld (%s) does not answer on %s: %s", (long)t->pid, t->prog, t->path,
                 pid_alive(t->pid) ? "its control thread is not running" : "it has exited");
        return SC_NOTARGET;
    }
    snprintf(err, errlen, "cannot connect to %s: %s", t->path, strerror(e));
    return SC_FAIL;
}

/* Check the hello (c->hello). */
static int check_hello(const struct sc_target *t, struct sc_conn *c, char *err, size_t errlen)
{
    const char *type = ctl_obj_str(&c->hello, "type");
    const char *proto = ctl_obj_str(&c->hello, "proto");
    int64_t version = -1;
    if (type != NULL && strcmp(type, "error") == 0) { /* refused, busy, out of fds: instead of the hello */
        const char *why = ctl_obj_str(&c->hello, "error");
        bool denied = why != NULL && strstr(why, "permission denied") != NULL;
        snprintf(err, errlen, "process %ld (%s) %s: %s", (long)t->pid, t->prog,
                 denied ? "refused" : "cannot serve the request", why != NULL ? why : "(no reason)");
        return denied ? SC_DENIED : SC_FAIL;
    }
    if (type == NULL || strcmp(type, "hello") != 0 || proto == NULL || strcmp(proto, CTL_PROTO_NAME) != 0) {
        snprintf(err, errlen, "%s does not speak the lstack control protocol", t->path);
        return SC_PROTO;
    }
    if (!ctl_obj_i64(&c->hello, "version", &version) || version != CTL_PROTO_VERSION) {
        const char *ver = ctl_obj_str(&c->hello, "lstack");
        snprintf(err, errlen,
                 "protocol version mismatch: process %ld (lstack %s) speaks %s version %lld, this stackctl "
                 "speaks version %d; use the stackctl of the lstack build the process runs",
                 (long)t->pid, ver != NULL ? ver : "?", CTL_PROTO_NAME, (long long)version, CTL_PROTO_VERSION);
        return SC_PROTO;
    }
    return SC_OK;
}

int sc_connect(const struct sc_target *t, int timeout_ms, struct sc_conn *c, char *err, size_t errlen)
{
    memset(c, 0, sizeof(*c));
    c->timeout_ms = timeout_ms;
    c->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (c->fd < 0) {
        snprintf(err, errlen, "socket: %s", strerror(errno));
        return SC_FAIL;
    }
    struct sockaddr_un un = {.sun_family = AF_UNIX};
    size_t plen = strnlen(t->path, sizeof(un.sun_path));
    if (plen == sizeof(un.sun_path)) { /* ctl_sock_path never makes one */
        snprintf(err, errlen, "socket path too long: %s", t->path);
        sc_close(c);
        return SC_FAIL;
    }
    memcpy(un.sun_path, t->path, plen + 1);
    if (connect(c->fd, (struct sockaddr *)&un, sizeof(un)) != 0) {
        int rc = connect_error(t, err, errlen);
        sc_close(c);
        return rc;
    }
    char rerr[256], perr[128];
    int r = sc_read_line(c, rerr, sizeof(rerr));
    if (r <= 0) {
        snprintf(err, errlen, "process %ld (%s) did not greet: %s", (long)t->pid, t->prog,
                 r == 0 ? "it closed the connection" : rerr);
        sc_close(c);
        return SC_FAIL;
    }
    snprintf(c->hello_text, sizeof(c->hello_text), "%s", c->line);
    if (ctl_obj_parse(c->hello_text, &c->hello, perr, sizeof(perr)) != 0) {
        snprintf(err, errlen, "%s does not speak the lstack control protocol (%s)", t->path, perr);
        sc_close(c);
        return SC_PROTO;
    }
    int rc = check_hello(t, c, err, errlen);
    if (rc != SC_OK)
        sc_close(c);
    return rc;
}

void sc_close(struct sc_conn *c)
{
    if (c->fd >= 0)
        close(c->fd);
    c->fd = -1;
    free(c->buf);
    c->buf = NULL;
    c->len = c->cap = c->start = 0;
}
