/*
 * conf_check.h - checking one key's value against its table row, and
 * storing it into struct lstack_conf.
 *
 * Internal to the conf library. Shared by the file parser (conf.c), which
 * feeds it values read by libconfig, and by lstack_conf_defaults, which
 * feeds it the defaults written in the table: both go through the same
 * checks and the same store.
 */
#ifndef LSTACK_CONF_CHECK_H
#define LSTACK_CONF_CHECK_H

#include "conf/conf.h"
#include "conf/conf_keys.h"

/* A scalar as read: an integer (INT/BOOL keys) or a string (all others).
 * s is borrowed. */
struct conf_raw {
    bool is_int;
    long long i;
    const char *s;
};

/* A scalar once checked; which member is set depends on the key's kind. */
struct conf_value {
    long long i;     /* INT, BOOL, ENUM */
    const char *s;   /* STRING (borrowed from the raw value) */
    uint32_t addr;   /* IPV4, MASK: network order */
    uint8_t mac[6];  /* MAC */
    int ncpus;       /* CPULIST */
    int cpus[LSTACK_CONF_MAX_CPUS];
    struct lstack_cpu_mask mask; /* CPUSET */
};

enum conf_verdict {
    CONF_OK,    /* *v is filled */
    CONF_BAD,   /* not a valid value for the key */
    CONF_LATER, /* valid, but its feature is not built yet */
};

/* Check raw (already of the right type for k's kind) against k: range,
 * syntax, and for PENDING keys "is it the default". Not for STRLIST keys.
 * On CONF_BAD / CONF_LATER, why gets the problem ("is out of range") and
 * allowed what would be accepted. */
enum conf_verdict conf_check_value(const struct lstack_conf_key *k, const struct conf_raw *raw,
                                   struct conf_value *v, char *why, size_t whylen, char *allowed,
                                   size_t allowedlen);

/* Write a checked value into c at k's field (nothing if it has none). */
void conf_store(const struct lstack_conf_key *k, const struct conf_value *v,
                struct lstack_conf *c);

/* k's default as a raw value. k->def must not be NULL. */
struct conf_raw conf_raw_default(const struct lstack_conf_key *k);

/* Check the table itself: unique names, defaults that pass their own
 * checks, flags that fit the kind, fields that fit the struct.
 * Returns 0, or -1 with one line per problem in err (as for
 * lstack_conf_load). For the unit tests. */
int lstack_conf_check_table(char *err, size_t errlen);

#endif
