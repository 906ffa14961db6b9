/*
 * conf_values.h - parsers and checks for the textual values of lstack.conf:
 * IPv4 addresses, netmasks, MAC addresses, CPU lists.
 *
 * Pure string -> value functions: no libconfig, no allocation, no global
 * state. They say what is wrong in a short phrase the caller puts into a
 * "FILE:LINE: key 'K': value 'V': <phrase>" message.
 */
#ifndef LSTACK_CONF_VALUES_H
#define LSTACK_CONF_VALUES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Dotted-quad "a.b.c.d" (inet_pton rules: exactly 4 decimal parts 0..255)
 * into *out, network byte order. Returns 0, or -1 if s is not one. */
int lstack_parse_ipv4(const char *s, uint32_t *out);

/* NULL if addr (network order) can be a host's or a gateway's address,
 * else why not, e.g. "is a loopback address (127.0.0.0/8)". */
const char *lstack_ipv4_unusable(uint32_t addr);

/* Prefix length (0..32) of mask (network order), or -1 if its one bits are
 * not contiguous from the top. */
int lstack_mask_prefix(uint32_t mask);

/* "aa:bb:cc:dd:ee:ff" (hex, either case, exactly 6 pairs) into mac.
 * Returns 0, or -1 if s is not one. */
int lstack_parse_mac(const char *s, uint8_t mac[6]);

/* NULL if mac can be a port's address, else why not. */
const char *lstack_mac_unusable(const uint8_t mac[6]);

/* CPU list "2", "2,4", "1-3,6" (spaces around items ignored) into
 * cpus[0..*n-1] in the order given. Each id must be in [min, max], listed
 * once, and at most maxn ids in all.
 * Returns 0; or -1 with a phrase saying what is wrong written into why. */
int lstack_parse_cpulist(const char *s, int min, int max, int *cpus, int maxn, int *n, char *why,
                         size_t whylen);

/* A CPU set: "" (no CPU) or a CPU list as for lstack_parse_cpulist (each
 * id in [min, max], listed once; max < LSTACK_CONF_CPU_WORDS * 64) into
 * *out. Returns 0; or -1 with a phrase saying what is wrong in why. */
struct lstack_cpu_mask;
int lstack_parse_cpumask(const char *s, int min, int max, struct lstack_cpu_mask *out, char *why,
                         size_t whylen);

/* *m as a CPU list, ranges folded ("0-3,7"; "" when empty), into buf.
 * Returns the length needed, like snprintf. */
int lstack_cpu_mask_format(const struct lstack_cpu_mask *m, char *buf, size_t len);

/* True if v is a power of two (v > 0). */
bool lstack_is_pow2(long long v);

#endif
