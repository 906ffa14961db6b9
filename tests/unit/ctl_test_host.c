/*
 * ctl_test_host.c - the host and the clients of the control-server tests
 * (see ctl_test_host.h).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "conf/conf.h"
#include "ctl_test_host.h"
#include "pair_conf.h"

int ctl_test_pair(const char *extra, struct lstack_conf *cb, struct stack **a, struct stack **b)
{
    struct lstack_conf ca;
    char err[512];
    if (pair_conf(&ca, "198.18.0.2", "198.18.0.1", extra) != 0 || pair_conf(cb, "198.18.0.1", "198.18.0.2", extra) != 0) {
        printf("not ok 1 - configs parse\n1..1\n");
        return -1;
    }
    int rc = pair_open(&ca, cb, a, b, err, sizeof(err));
    lstack_conf_free(&ca); /* read only while the stacks open */
    if (rc != 0) {
        printf("not ok 1 - stacks open\n# %s\n1..1\n", err);
        return -1;
    }
    return 0;
}

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct stack *the_stack;
static atomic_int n_stacks;

static void host_lock(int index)
{
    (void)index;
    pthread_mutex_lock(&mu);
}

static void host_unlock(int index)
{
    (void)index;
    pthread_mutex_unlock(&mu);
}

static struct stack *host_stack(int i)
{
    return i >= 0 && i < atomic_load(&n_stacks) ? the_stack : NULL;
}

static const struct ctl_host host = {.stack = host_stack, .lock = host_lock, .unlock = host_unlock};

const struct ctl_host *ctl_test_host(struct stack *s, int nstacks)
{
    the_stack = s;
    atomic_store(&n_stacks, nstacks);
    return &host;
}

void ctl_test_host_stacks(int nstacks)
{
    atomic_store(&n_stacks, nstacks);
}

char *ctl_test_ask(const char *req, ctl_test_render fn, bool json, int *rc, char *err, size_t errlen)
{
    struct sc_opts o = {.pid = getpid(), .timeout_ms = 5000, .port = -1};
    struct sc_target t;
    struct sc_conn c;
    *rc = sc_find_target(&o, &t, err, errlen);
    if (*rc == SC_OK)
        *rc = sc_connect(&t, 5000, &c, err, errlen);
    if (*rc != SC_OK)
        return NULL;
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    *rc = sc_send(&c, req, err, errlen) == 0 ? SC_OK : SC_FAIL;
    if (*rc == SC_OK) {
        struct sc_src src;
        sc_src_conn(&src, &c);
        *rc = fn(&src, json, f, err, errlen);
    }
    sc_close(&c);
    fclose(f);
    return text;
}

int ctl_test_connect_fd(int fd, const char *path)
{
    struct sockaddr_un un = {.sun_family = AF_UNIX};
    size_t n = strlen(path);
    if (n >= sizeof(un.sun_path))
        return -1;
    memcpy(un.sun_path, path, n + 1);
    return connect(fd, (struct sockaddr *)&un, sizeof(un));
}

int ctl_test_connect(const char *path)
{
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd >= 0 && ctl_test_connect_fd(fd, path) != 0) {
        close(fd);
        fd = -1;
    }
    return fd;
}

char *ctl_test_raw(const char *path, const char *line)
{
    static char buf[8192];
    buf[0] = '\0';
    int fd = ctl_test_connect(path);
    if (fd < 0)
        return buf;
    if (write(fd, line, strlen(line)) < 0) {
        close(fd);
        return buf;
    }
    shutdown(fd, SHUT_WR); /* no request at all: EOF at once, not the server's timeout */
    size_t got = 0;
    ssize_t n;
    while (got < sizeof(buf) - 1 && (n = read(fd, buf + got, sizeof(buf) - 1 - got)) > 0)
        got += (size_t)n;
    buf[got] = '\0';
    close(fd);
    return buf;
}
