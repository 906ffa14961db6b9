/*
 * conf_values.c - parsers and checks for IPv4 addresses, netmasks, MAC
 * addresses and CPU lists written in lstack.conf. Contracts in
 * conf_values.h.
 */
#include "conf/conf_values.h"

#include "conf/conf.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <stdio.h>
#include <string.h>

int lstack_parse_ipv4(const char *s, uint32_t *out)
{
    struct in_addr a;

    if (inet_pton(AF_INET, s, &a) != 1)
        return -1;
    *out = a.s_addr;
    return 0;
}

const char *lstack_ipv4_unusable(uint32_t addr)
{
    uint32_t h = ntohl(addr);
    uint32_t top = h >> 24;

    if (top == 0)
        return "is in 0.0.0.0/8 (\"this network\")";
    if (top == 127)
        return "is a loopback address (127.0.0.0/8)";
    if (top >= 224 && top <= 239)
        return "is a multicast address (224.0.0.0/4)";
    if (top >= 240)
        return "is a reserved or broadcast address (240.0.0.0/4)";
    return NULL;
}

int lstack_mask_prefix(uint32_t mask)
{
    uint32_t h = ntohl(mask);
    uint32_t inv = ~h;

    /* Contiguous from the top <=> the zero bits form 0...01...1, i.e. the
     * inverse plus one is a power of two (or zero for an all-ones mask). */
    if ((inv & (inv + 1)) != 0)
        return -1;
    return __builtin_popcount(h);
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

int lstack_parse_mac(const char *s, uint8_t mac[6])
{
    /* Exactly "hh:hh:hh:hh:hh:hh": 17 characters. */
    if (strlen(s) != 17)
        return -1;
    for (int i = 0; i < 6; i++) {
        const char *p = s + 3 * i;
        int hi = hexval(p[0]);
        int lo = hexval(p[1]);

        if (hi < 0 || lo < 0)
            return -1;
        if (i < 5 && p[2] != ':')
            return -1;
        mac[i] = (uint8_t)(hi << 4 | lo);
    }
    return 0;
}

const char *lstack_mac_unusable(const uint8_t mac[6])
{
    static const uint8_t zero[6];

    if (memcmp(mac, zero, sizeof(zero)) == 0)
        return "is the all-zero address";
    if (mac[0] & 0x01)
        return "is a multicast address (lowest bit of the first byte set)";
    return NULL;
}

/* Read a CPU id at *p (after optional spaces). Returns 0 and advances *p,
 * or -1 if there is no decimal number there. Caps at a value > any max. */
static int read_id(const char **p, long *id)
{
    const char *q = *p;
    long v = 0;

    while (*q == ' ')
        q++;
    if (!isdigit((unsigned char)*q))
        return -1;
    while (isdigit((unsigned char)*q)) {
        if (v < 1000000)
            v = v * 10 + (*q - '0');
        q++;
    }
    while (*q == ' ')
        q++;
    *id = v;
    *p = q;
    return 0;
}

static int add_cpu(long id, int min, int max, int *cpus, int maxn, int *n, char *why,
                   size_t whylen)
{
    if (id < min || id > max) {
        snprintf(why, whylen, "CPU %ld is out of range", id);
        return -1;
    }
    for (int i = 0; i < *n; i++) {
        if (cpus[i] == id) {
            snprintf(why, whylen, "CPU %ld is listed twice", id);
            return -1;
        }
    }
    if (*n >= maxn) {
        snprintf(why, whylen, "more than %d CPUs", maxn);
        return -1;
    }
    cpus[(*n)++] = (int)id;
    return 0;
}

int lstack_parse_cpulist(const char *s, int min, int max, int *cpus, int maxn, int *n, char *why,
                         size_t whylen)
{
    const char *p = s;

    *n = 0;
    for (;;) {
        long first, last;

        if (read_id(&p, &first) != 0) {
            snprintf(why, whylen, "expected a CPU id at offset %d", (int)(p - s));
            return -1;
        }
        last = first;
        if (*p == '-') {
            p++;
            if (read_id(&p, &last) != 0) {
                snprintf(why, whylen, "expected a CPU id after '-' at offset %d",
                         (int)(p - s));
                return -1;
            }
            if (last < first) {
                snprintf(why, whylen, "range %ld-%ld is reversed", first, last);
                return -1;
            }
        }
        for (long id = first; id <= last; id++) {
            if (add_cpu(id, min, max, cpus, maxn, n, why, whylen) != 0)
                return -1;
        }
        if (*p == '\0')
            return 0;
        if (*p != ',') {
            snprintf(why, whylen, "unexpected '%c' at offset %d", *p, (int)(p - s));
            return -1;
        }
        p++;
    }
}

int lstack_parse_cpumask(const char *s, int min, int max, struct lstack_cpu_mask *out, char *why,
                         size_t whylen)
{
    int ids[LSTACK_CONF_CPU_WORDS * 64];
    int n = 0;

    memset(out, 0, sizeof(*out));
    if (*s == '\0')
        return 0;
    if (max >= LSTACK_CONF_CPU_WORDS * 64)
        max = LSTACK_CONF_CPU_WORDS * 64 - 1;
    if (lstack_parse_cpulist(s, min, max, ids, LSTACK_CONF_CPU_WORDS * 64, &n, why, whylen) != 0)
        return -1;
    for (int i = 0; i < n; i++)
        out->bits[ids[i] / 64] |= (uint64_t)1 << (ids[i] % 64);
    return 0;
}

int lstack_cpu_mask_format(const struct lstack_cpu_mask *m, char *buf, size_t len)
{
    size_t need = 0;
    int cpu = 0;

    if (len > 0)
        buf[0] = '\0';
    while (cpu < LSTACK_CONF_CPU_WORDS * 64) {
        int last;
        int w;

        if (!lstack_cpu_mask_has(m, cpu)) {
            cpu++;
            continue;
        }
        last = cpu;
        while (last + 1 < LSTACK_CONF_CPU_WORDS * 64 && lstack_cpu_mask_has(m, last + 1))
            last++;
        if (last == cpu)
            w = snprintf(need < len ? buf + need : NULL, need < len ? len - need : 0, "%s%d",
                         need > 0 ? "," : "", cpu);
        else
            w = snprintf(need < len ? buf + need : NULL, need < len ? len - need : 0, "%s%d-%d",
                         need > 0 ? "," : "", cpu, last);
        need += (size_t)w;
        cpu = last + 1;
    }
    return (int)need;
}

bool lstack_is_pow2(long long v)
{
    return v > 0 && (v & (v - 1)) == 0;
}
