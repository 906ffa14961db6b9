/*
 * stackctl_ltran.c - `stackctl ltran [SOCKET]`: ltran's clients (lstack
 * processes sharing its port), their addresses and listeners, frames
 * in/out/dropped and ring depths, and ltran's own counters and forwarding
 * cost; a table, or one JSON document with --json.
 *
 * Talks ltran's protocol (lstack/common/ltran_proto.h: one STATS request);
 * SOCKET defaults to $LTRAN_SOCKET, else /var/run/ltran/ltran.sock.
 * Design: docs/design.md#ltran-is-shown-by-stackctl
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/ltran_proto.h"
#include "stackctl.h"

#define LTRAN_SOCKET_DEFAULT "/var/run/ltran/ltran.sock"

static double ns_per(uint64_t cycles, uint64_t frames, uint64_t hz)
{
    return frames && hz ? (double)cycles * 1e9 / (double)hz / (double)frames : 0.0;
}

/* The own-cost histogram's q-quantile (0..1), as the ns bounds of its
 * bucket; false if no frame was counted. */
static bool own_quantile(const struct ltran_stats *s, double q, double *lo, double *hi)
{
    uint64_t total = 0, seen = 0;
    for (int i = 0; i < LTRAN_HIST_BUCKETS; i++)
        total += s->own_hist[i];
    if (total == 0 || s->tsc_hz == 0)
        return false;
    for (int i = 0; i < LTRAN_HIST_BUCKETS; i++) {
        seen += s->own_hist[i];
        if ((double)seen >= q * (double)total) {
            *lo = (double)(i ? 1ull << i : 0) * 1e9 / (double)s->tsc_hz;
            *hi = (double)(2ull << i) * 1e9 / (double)s->tsc_hz;
            return true;
        }
    }
    return false;
}

static void render_table(const struct ltran_stats *s, const struct ltran_client_info *c, FILE *out)
{
    fprintf(out, "ltran: %u clients, port rx %llu tx %llu, forwarded %llu, unclaimed %llu (RST %llu), "
                 "other %llu, tx full %llu, ARP answered %llu, hairpin %llu, 4-tuples %llu, mbufs free %u/%u\n",
            s->nclients, (unsigned long long)s->rx_frames, (unsigned long long)s->tx_frames,
            (unsigned long long)s->fwd_frames, (unsigned long long)s->drop_unclaimed,
            (unsigned long long)s->rst_sent, (unsigned long long)s->drop_other, (unsigned long long)s->drop_tx_full,
            (unsigned long long)s->arp_answered, (unsigned long long)s->hairpin, (unsigned long long)s->conns,
            s->mbuf_free, s->mbuf_total);
    fprintf(out, "cost: %.1f ns busy per frame forwarded, %.1f ns of it in the port's bursts, %.1f ns in waking "
                 "sleeping clients, %.1f ns ltran's own\n",
            ns_per(s->busy_cycles, s->fwd_frames, s->tsc_hz), ns_per(s->io_cycles, s->fwd_frames, s->tsc_hz),
            ns_per(s->wake_cycles, s->fwd_frames, s->tsc_hz),
            ns_per(s->busy_cycles - s->io_cycles - s->wake_cycles, s->fwd_frames, s->tsc_hz));
    fprintf(out, "low power: ltran slept %llu times (ended by a client's frames %llu, by the port's %llu), "
                 "woke sleeping clients %llu times\n",
            (unsigned long long)s->sleeps, (unsigned long long)s->woken_by_client,
            (unsigned long long)s->woken_by_port, (unsigned long long)s->wakeups_sent);
    double lo, hi, lo9, hi9;
    if (own_quantile(s, 0.5, &lo, &hi) && own_quantile(s, 0.9, &lo9, &hi9))
        fprintf(out, "ltran's own cost per frame by round: median %.0f-%.0f ns, 90th percentile %.0f-%.0f ns\n", lo, hi,
                lo9, hi9);
    fprintf(out, "%-3s %-8s %-16s %-15s %-24s %6s %10s %10s %8s %5s %5s\n", "ID", "PID", "NAME", "ADDRESS",
            "LISTEN", "CONNS", "RX", "TX", "RXDROP", "RXQ", "TXQ");
    for (uint32_t i = 0; i < s->nclients; i++) {
        char ip[INET_ADDRSTRLEN], ports[128] = "";
        inet_ntop(AF_INET, &c[i].ip, ip, sizeof(ip));
        size_t w = 0;
        for (uint32_t k = 0; k < c[i].nlisten && k < LTRAN_LISTEN_SHOWN && w < sizeof(ports); k++)
            w += (size_t)snprintf(ports + w, sizeof(ports) - w, "%s%u", k ? "," : "", ntohs(c[i].listen_port[k]));
        if (c[i].nlisten > LTRAN_LISTEN_SHOWN && w < sizeof(ports))
            snprintf(ports + w, sizeof(ports) - w, ",...");
        fprintf(out, "%-3u %-8d %-16.16s %-15s %-24.24s %6u %10llu %10llu %8llu %5u %5u\n", c[i].id, c[i].pid,
                c[i].name, ip, ports[0] ? ports : "-", c[i].conns, (unsigned long long)c[i].rx_frames,
                (unsigned long long)c[i].tx_frames, (unsigned long long)c[i].drop_rx_full, c[i].rx_ring_depth,
                c[i].tx_ring_depth);
    }
}

static void json_str(FILE *out, const char *s)
{
    fputc('"', out);
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            fprintf(out, "\\%c", ch);
        else if (ch < 0x20)
            fprintf(out, "\\u%04x", ch);
        else
            fputc(ch, out);
    }
    fputc('"', out);
}

static void render_json(const char *path, const struct ltran_stats *s, const struct ltran_client_info *c, FILE *out)
{
    fprintf(out, "{\"ltran\":{\"socket\":");
    json_str(out, path);
    fprintf(out, ",\"protocol_version\":%d,\"rx_frames\":%llu,\"tx_frames\":%llu,\"fwd_frames\":%llu,"
                 "\"busy_ns_per_frame\":%.1f,\"io_ns_per_frame\":%.1f,\"wake_ns_per_frame\":%.1f,"
                 "\"own_ns_per_frame\":%.1f,"
                 "\"drop_unclaimed\":%llu,\"rst_sent\":%llu,\"drop_other\":%llu,\"drop_tx_full\":%llu,"
                 "\"arp_answered\":%llu,\"conns\":%llu,\"mbuf_free\":%u,\"mbuf_total\":%u,"
                 "\"hairpin\":%llu,\"sleeps\":%llu,\"woken_by_client\":%llu,\"woken_by_port\":%llu,\"wakeups_sent\":%llu,",
            LTRAN_VERSION, (unsigned long long)s->rx_frames, (unsigned long long)s->tx_frames,
            (unsigned long long)s->fwd_frames, ns_per(s->busy_cycles, s->fwd_frames, s->tsc_hz),
            ns_per(s->io_cycles, s->fwd_frames, s->tsc_hz),
            ns_per(s->wake_cycles, s->fwd_frames, s->tsc_hz),
            ns_per(s->busy_cycles - s->io_cycles - s->wake_cycles, s->fwd_frames, s->tsc_hz),
            (unsigned long long)s->drop_unclaimed,
            (unsigned long long)s->rst_sent, (unsigned long long)s->drop_other, (unsigned long long)s->drop_tx_full,
            (unsigned long long)s->arp_answered, (unsigned long long)s->conns, s->mbuf_free, s->mbuf_total,
            (unsigned long long)s->hairpin, (unsigned long long)s->sleeps, (unsigned long long)s->woken_by_client,
            (unsigned long long)s->woken_by_port, (unsigned long long)s->wakeups_sent);
    double lo = 0, hi = 0, lo9 = 0, hi9 = 0;
    own_quantile(s, 0.5, &lo, &hi);
    own_quantile(s, 0.9, &lo9, &hi9);
    fprintf(out, "\"own_ns_median\":[%.1f,%.1f],\"own_ns_p90\":[%.1f,%.1f],\"clients\":[", lo, hi, lo9, hi9);
    for (uint32_t i = 0; i < s->nclients; i++) {
        char ip[INET_ADDRSTRLEN];
        inet_ntop(AF_INET, &c[i].ip, ip, sizeof(ip));
        fprintf(out, "%s{\"id\":%u,\"pid\":%d,\"name\":", i ? "," : "", c[i].id, c[i].pid);
        json_str(out, c[i].name);
        fprintf(out, ",\"addr\":\"%s\",\"listen\":[", ip);
        for (uint32_t k = 0; k < c[i].nlisten && k < LTRAN_LISTEN_SHOWN; k++)
            fprintf(out, "%s%u", k ? "," : "", ntohs(c[i].listen_port[k]));
        fprintf(out, "],\"listeners\":%u,\"conns\":%u,\"rx_frames\":%llu,\"tx_frames\":%llu,\"drop_rx_full\":%llu,"
                     "\"rx_ring_depth\":%u,\"tx_ring_depth\":%u}",
                c[i].nlisten, c[i].conns, (unsigned long long)c[i].rx_frames, (unsigned long long)c[i].tx_frames,
                (unsigned long long)c[i].drop_rx_full, c[i].rx_ring_depth, c[i].tx_ring_depth);
    }
    fprintf(out, "]}}\n");
}

int sc_ltran(const struct sc_opts *o, const char *path, FILE *out)
{
    if (path == NULL)
        path = getenv("LTRAN_SOCKET");
    if (path == NULL || path[0] == '\0')
        path = LTRAN_SOCKET_DEFAULT;
    int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        fprintf(stderr, "stackctl: socket: %s\n", strerror(errno));
        return SC_FAIL;
    }
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
    if (connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
        int e = errno;
        fprintf(stderr, "stackctl: cannot reach ltran at %s: %s\n", path, strerror(e));
        close(fd);
        return e == EACCES ? SC_DENIED : SC_NOTARGET;
    }
    struct timeval tv = {.tv_sec = o->timeout_ms / 1000, .tv_usec = (o->timeout_ms % 1000) * 1000};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    struct ltran_hdr h = {.magic = LTRAN_MAGIC, .version = LTRAN_VERSION, .type = LTRAN_STATS};
    static uint8_t buf[sizeof(struct ltran_hdr) + sizeof(struct ltran_stats) +
                       LTRAN_MAX_CLIENTS * sizeof(struct ltran_client_info)];
    ssize_t n = -1;
    if (send(fd, &h, sizeof(h), MSG_NOSIGNAL) == (ssize_t)sizeof(h))
        n = recv(fd, buf, sizeof(buf), 0);
    int e = errno;
    close(fd);
    if (n < (ssize_t)sizeof(h)) {
        fprintf(stderr, "stackctl: ltran at %s did not answer: %s\n", path, n < 0 ? strerror(e) : "short reply");
        return SC_FAIL;
    }
    struct ltran_hdr rh;
    memcpy(&rh, buf, sizeof(rh));
    if (rh.magic != LTRAN_MAGIC || rh.status == -EPROTONOSUPPORT || rh.version != LTRAN_VERSION) {
        fprintf(stderr, "stackctl: ltran at %s speaks protocol version %u, stackctl %d\n", path, rh.version,
                LTRAN_VERSION);
        return SC_PROTO;
    }
    struct ltran_stats s;
    if (rh.status != 0 || (size_t)n < sizeof(h) + sizeof(s)) {
        fprintf(stderr, "stackctl: ltran at %s refused: %s\n", path, strerror(-rh.status));
        return SC_FAIL;
    }
    memcpy(&s, buf + sizeof(h), sizeof(s));
    if (s.nclients > LTRAN_MAX_CLIENTS ||
        (size_t)n < sizeof(h) + sizeof(s) + s.nclients * sizeof(struct ltran_client_info)) {
        fprintf(stderr, "stackctl: ltran at %s: malformed reply\n", path);
        return SC_FAIL;
    }
    struct ltran_client_info c[LTRAN_MAX_CLIENTS];
    memcpy(c, buf + sizeof(h) + sizeof(s), s.nclients * sizeof(c[0]));
    if (o->json)
        render_json(path, &s, c, out);
    else
        render_table(&s, c, out);
    return SC_OK;
}
