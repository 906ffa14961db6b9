/*
 * sockopt.c - setsockopt / getsockopt of an lsock, in Linux's numbers.
 *
 * Options are stored in s->o (Linux units) and pushed to the pcb by
 * pcb_opts.c, now if the pcb exists, else when bind / listen / connect /
 * accept creates it.
 *
 * Lengths follow Linux: a value to set must be at least an int (a struct
 * linger / timeval for those options), else -EINVAL; a value read is
 * truncated to the caller's length, which is updated.
 */
#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>

#include "sock/lsock_lwip.h"

/*
 * SO_RCVBUF / SO_SNDBUF act as on Linux: the value set is doubled (at least
 * 2304 / 4608) and reported so; the connection then announces at most the
 * value set as its window and queues at most the doubled value (never more
 * than the stack's tcp_rcv_wnd / tcp_snd_buf). Before a set they report the
 * stack's window and send buffer.
 */

/* Linux's bounds (include/net/tcp.h MAX_TCP_KEEPIDLE / INTVL / CNT). */
#define KEEP_TIME_MAX 32767
#define KEEP_CNT_MAX 127
/* TCP_SYNCNT: Linux takes 1..MAX_TCP_SYNCNT (127); unset reads as the
 * stack's tcp_syn_retries. */
#define SYNCNT_MAX 127
/* Linux's TCP_MAXSEG for a socket without a connection (TCP_MSS_DEFAULT). */
#define MSS_UNCONNECTED 536

static int read_int(const void *val, socklen_t len, int *out)
{
    if (val == NULL || len < (socklen_t)sizeof(int))
        return -EINVAL;
    memcpy(out, val, sizeof(int));
    return 0;
}

/* timeval -> ms (0: no timeout), as Linux's sock_set_timeout. */
static int read_timeout(const void *val, socklen_t len, long *ms)
{
    struct timeval tv;
    if (val == NULL || len < (socklen_t)sizeof(tv))
        return -EINVAL;
    memcpy(&tv, val, sizeof(tv));
    if (tv.tv_usec < 0 || tv.tv_usec >= 1000000)
        return -EDOM;
    if (tv.tv_sec < 0 || tv.tv_sec >= LONG_MAX / 1000 - 1)
        *ms = 0; /* negative: none (Linux warns); huge: forever */
    else
        *ms = (long)tv.tv_sec * 1000 + (long)((tv.tv_usec + 999) / 1000);
    return 0;
}

static int set_socket(struct lsock *s, int name, const void *val, socklen_t len)
{
    int v = 0, rc;
    switch (name) {
    case SO_LINGER: {
        struct linger l;
        if (val == NULL || len < (socklen_t)sizeof(l))
            return -EINVAL;
        memcpy(&l, val, sizeof(l));
        s->o.linger_on = l.l_onoff != 0;
        s->o.linger_s = l.l_linger < 0 ? 0 : l.l_linger;
        return 0;
    }
    case SO_RCVTIMEO:
        return read_timeout(val, len, &s->o.rcvtimeo_ms);
    case SO_SNDTIMEO:
        return read_timeout(val, len, &s->o.sndtimeo_ms);
    case SO_REUSEADDR:
    case SO_REUSEPORT:
    case SO_KEEPALIVE:
    case SO_RCVBUF:
    case SO_SNDBUF:
        break;
    default:
        return -ENOPROTOOPT;
    }
    rc = read_int(val, len, &v);
    if (rc != 0)
        return rc;
    switch (name) {
    case SO_REUSEADDR:
        s->o.reuseaddr = v != 0;
        break;
    case SO_REUSEPORT:
        s->o.reuseport = v != 0;
        break;
    case SO_KEEPALIVE:
        s->o.keepalive = v != 0;
        break;
    case SO_RCVBUF:
        s->o.rcvbuf = v < LSOCK_RCVBUF_MIN / 2 ? LSOCK_RCVBUF_MIN / 2 : v > INT_MAX / 2 ? INT_MAX / 2 : v;
        break;
    default: /* SO_SNDBUF */
        s->o.sndbuf = v < LSOCK_SNDBUF_MIN / 2 ? LSOCK_SNDBUF_MIN / 2 : v > INT_MAX / 2 ? INT_MAX / 2 : v;
        break;
    }
    lsock_pcb_apply_opts(s);
    return 0;
}

static int set_tcp(struct lsock *s, int name, const void *val, socklen_t len)
{
    switch (name) {
    case TCP_NODELAY:
    case TCP_KEEPIDLE:
    case TCP_KEEPINTVL:
    case TCP_KEEPCNT:
    case TCP_MAXSEG:
    case TCP_SYNCNT:
        break;
    default:
        return -ENOPROTOOPT;
    }
    int v = 0;
    int rc = read_int(val, len, &v);
    if (rc != 0)
        return rc;
    switch (name) {
    case TCP_NODELAY:
        s->o.nodelay = v != 0;
        break;
    case TCP_KEEPIDLE:
    case TCP_KEEPINTVL:
        if (v < 1 || v > KEEP_TIME_MAX)
            return -EINVAL;
        if (name == TCP_KEEPIDLE)
            s->o.keep_idle = v;
        else
            s->o.keep_intvl = v;
        break;
    case TCP_KEEPCNT:
        if (v < 1 || v > KEEP_CNT_MAX)
            return -EINVAL;
        s->o.keep_cnt = v;
        break;
    case TCP_SYNCNT:
        if (v < 1 || v > SYNCNT_MAX)
            return -EINVAL;
        s->o.syncnt = v; /* read at connect (tcp_connect_timer.c) */
        return 0;
    case TCP_MAXSEG:
        if (v != 0 && (v < 88 || v > 65535)) /* Linux: TCP_MIN_MSS .. MAX_TCP_WINDOW */
            return -EINVAL;
        return 0; /* accepted and ignored: lwIP's MSS is fixed (TCP_MSS 1460) */
    }
    lsock_pcb_apply_opts(s);
    return 0;
}

int lsock_setsockopt(struct lsock *s, int level, int name, const void *val, socklen_t len)
{
    if (level == SOL_SOCKET)
        return set_socket(s, name, val, len);
    if (level == IPPROTO_TCP)
        return set_tcp(s, name, val, len);
    return -ENOPROTOOPT;
}

/* Copy size bytes of v out, truncated to *len like Linux. */
static int put(void *val, socklen_t *len, const void *v, size_t size)
{
    if (len == NULL || (int)*len < 0)
        return -EINVAL;
    size_t n = *len < size ? *len : size;
    if (n > 0 && val == NULL)
        return -EFAULT;
    memcpy(val, v, n);
    *len = (socklen_t)n;
    return 0;
}

static int put_int(void *val, socklen_t *len, int v)
{
    return put(val, len, &v, sizeof(v));
}

static int put_timeout(void *val, socklen_t *len, long ms)
{
    struct timeval tv = {.tv_sec = ms / 1000, .tv_usec = (ms % 1000) * 1000};
    return put(val, len, &tv, sizeof(tv));
}

static int get_socket(struct lsock *s, int name, void *val, socklen_t *len)
{
    switch (name) {
    case SO_ERROR: {
        int e = s->so_error;
        s->so_error = 0;
        if (e != 0)
            lsock_notify(s, false);
        return put_int(val, len, e);
    }
    case SO_TYPE:
        return put_int(val, len, SOCK_STREAM);
    case SO_DOMAIN:
        return put_int(val, len, AF_INET);
    case SO_PROTOCOL:
        return put_int(val, len, IPPROTO_TCP);
    case SO_ACCEPTCONN:
        return put_int(val, len, s->state == LS_LISTEN);
    case SO_REUSEADDR:
        return put_int(val, len, s->o.reuseaddr);
    case SO_REUSEPORT:
        return put_int(val, len, s->o.reuseport);
    case SO_KEEPALIVE:
        return put_int(val, len, s->o.keepalive);
    case SO_RCVBUF:
        return put_int(val, len, s->o.rcvbuf ? s->o.rcvbuf * 2 : (int)s->ss->tcp.rcv_wnd);
    case SO_SNDBUF:
        return put_int(val, len, s->o.sndbuf ? s->o.sndbuf * 2 : (int)s->ss->tcp.snd_buf);
    case SO_LINGER: {
        struct linger l = {.l_onoff = s->o.linger_on, .l_linger = s->o.linger_s};
        return put(val, len, &l, sizeof(l));
    }
    case SO_RCVTIMEO:
        return put_timeout(val, len, s->o.rcvtimeo_ms);
    case SO_SNDTIMEO:
        return put_timeout(val, len, s->o.sndtimeo_ms);
    default:
        return -ENOPROTOOPT;
    }
}

/* lwIP's state (enum lsock_tcp_state order) -> Linux's TCP_* states. */
static const uint8_t linux_state[] = {
    [LSOCK_TCP_CLOSED] = TCP_CLOSE,           [LSOCK_TCP_LISTEN] = TCP_LISTEN,
    [LSOCK_TCP_SYN_SENT] = TCP_SYN_SENT,      [LSOCK_TCP_SYN_RCVD] = TCP_SYN_RECV,
    [LSOCK_TCP_ESTABLISHED] = TCP_ESTABLISHED, [LSOCK_TCP_FIN_WAIT_1] = TCP_FIN_WAIT1,
    [LSOCK_TCP_FIN_WAIT_2] = TCP_FIN_WAIT2,   [LSOCK_TCP_CLOSE_WAIT] = TCP_CLOSE_WAIT,
    [LSOCK_TCP_CLOSING] = TCP_CLOSING,        [LSOCK_TCP_LAST_ACK] = TCP_LAST_ACK,
    [LSOCK_TCP_TIME_WAIT] = TCP_TIME_WAIT,
};

static int get_tcp_info(const struct lsock *s, void *val, socklen_t *len)
{
    struct lsock_tcpinfo ti;
    lsock_pcb_info(s, &ti);
    struct tcp_info out;
    memset(&out, 0, sizeof(out));
    out.tcpi_state = (unsigned)ti.state < sizeof(linux_state) ? linux_state[ti.state] : TCP_CLOSE;
    out.tcpi_retransmits = (uint8_t)(ti.retransmits > 255 ? 255 : ti.retransmits);
    out.tcpi_rto = ti.rto_us;
    out.tcpi_snd_mss = ti.mss;
    out.tcpi_rcv_mss = ti.mss;
    out.tcpi_advmss = ti.mss;
    out.tcpi_unacked = ti.unacked;
    out.tcpi_rtt = ti.rtt_us;
    out.tcpi_rttvar = ti.rttvar_us;
    out.tcpi_snd_cwnd = ti.snd_cwnd;
    out.tcpi_snd_ssthresh = ti.snd_ssthresh;
    out.tcpi_rcv_space = ti.rcv_wnd;
    return put(val, len, &out, sizeof(out));
}

static int get_tcp(struct lsock *s, int name, void *val, socklen_t *len)
{
    switch (name) {
    case TCP_NODELAY:
        return put_int(val, len, s->o.nodelay);
    case TCP_KEEPIDLE:
        return put_int(val, len, s->o.keep_idle);
    case TCP_KEEPINTVL:
        return put_int(val, len, s->o.keep_intvl);
    case TCP_KEEPCNT:
        return put_int(val, len, s->o.keep_cnt);
    case TCP_SYNCNT:
        return put_int(val, len, lsock_syncnt(s));
    case TCP_MAXSEG: {
        unsigned mss = lsock_pcb_mss(s);
        return put_int(val, len, mss != 0 ? (int)mss : MSS_UNCONNECTED);
    }
    case TCP_INFO:
        return get_tcp_info(s, val, len);
    default:
        return -ENOPROTOOPT;
    }
}

int lsock_getsockopt(struct lsock *s, int level, int name, void *val, socklen_t *len)
{
    if (level == SOL_SOCKET)
        return get_socket(s, name, val, len);
    if (level == IPPROTO_TCP)
        return get_tcp(s, name, val, len);
    return -ENOPROTOOPT;
}

void lsock_timeouts(const struct lsock *s, long *rcv_ms, long *snd_ms)
{
    *rcv_ms = s->o.rcvtimeo_ms;
    *snd_ms = s->o.sndtimeo_ms;
}
