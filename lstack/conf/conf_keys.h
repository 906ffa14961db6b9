/*
 * conf_keys.h - the table of lstack.conf keys, as data.
 *
 * Owns: the description of one key (struct lstack_conf_key), the kinds of
 * value a key can hold, and the read-only access to the table built from
 * conf_keys.def. The parser (conf.c), the formatter (conf_format.c), the doc
 * generator (tools/lstack-conf-doc.c) and the tests all read the same rows,
 * so a default, a range or a meaning is written exactly once.
 */
#ifndef LSTACK_CONF_KEYS_H
#define LSTACK_CONF_KEYS_H

#include <stdbool.h>
#include <stddef.h>

/* What a key holds, and so which syntax and checks apply to it. */
enum lstack_conf_kind {
    LSTACK_KIND_INT,     /* integer (or integer64) in [min, max] */
    LSTACK_KIND_BOOL,    /* 0 or 1 (libconfig true/false also accepted) */
    LSTACK_KIND_ENUM,    /* string, one of the names in .values */
    LSTACK_KIND_STRING,  /* string of at most .max bytes */
    LSTACK_KIND_IPV4,    /* string a.b.c.d, a unicast address */
    LSTACK_KIND_MASK,    /* string a.b.c.d, a contiguous netmask */
    LSTACK_KIND_MAC,     /* string aa:bb:cc:dd:ee:ff, unicast, not zero */
    LSTACK_KIND_CPULIST, /* string "2,4" / "1-3": CPU ids in [min, max] */
    LSTACK_KIND_CPUSET,  /* string "" (none) or a CPU list: a struct lstack_cpu_mask */
    LSTACK_KIND_STRLIST, /* list/array of [min, max] non-empty strings */
};

/* Key flags. */
#define LSTACK_KEY_MANDATORY 0x1u /* no default: the file must set it */
#define LSTACK_KEY_PENDING 0x2u   /* feature not built: only .def is accepted */
#define LSTACK_KEY_POW2 0x4u      /* integer must also be a power of two */

/* .field of a key that has no member in struct lstack_conf (its only
 * accepted value is its default, so nothing needs to read it). */
#define LSTACK_CONF_NO_FIELD ((size_t)-1)

/* Longest element of a list-of-strings key (dpdk_args). */
#define LSTACK_CONF_ARG_MAX 4095

/* The most stacks (CPUs in num_cpus) a process runs: run-to-wakeup runs
 * one per CPU listed, run-to-completion one. */
#define LSTACK_CONF_STACKS_SUPPORTED 8

/* One row of conf_keys.def. All strings are literals; never NULL except
 * where said. */
struct lstack_conf_key {
    const char *name;
    enum lstack_conf_kind kind;
    unsigned flags;        /* LSTACK_KEY_* */
    const char *def;       /* default, as raw text ("1500", "kernel");
                              NULL if the key has none (mandatory/devices) */
    long long min, max;    /* INT: value; STRING: max length; CPULIST: CPU
                              id (CPUSET too); STRLIST: element count.
                              Else unused. */
    const char *values;    /* ENUM: "name=num|name=num"; a name written
                              "~name=num" is known but not supported yet.
                              NULL for other kinds. */
    size_t field;          /* offsetof in struct lstack_conf, or
                              LSTACK_CONF_NO_FIELD */
    const char *example;   /* value for the sample conf when .def is NULL
                              (STRLIST: elements separated by spaces), or
                              NULL */
    const char *help;      /* what the key means, one sentence or two */
    const char *note;      /* extra remark (Gazelle difference, why not
                              yet), or "" */
};

/* Index of each key in lstack_conf_keys[]: LSTACK_CONF_KEY_host_addr... */
enum lstack_conf_key_id {
#define LSTACK_CONF_KEY(name, ...) LSTACK_CONF_KEY_##name,
#include "conf/conf_keys.def"
#undef LSTACK_CONF_KEY
    LSTACK_CONF_NKEYS
};

extern const struct lstack_conf_key lstack_conf_keys[LSTACK_CONF_NKEYS];
extern const size_t lstack_conf_nkeys; /* == LSTACK_CONF_NKEYS */

/* The row named name, or NULL. Exact, case-sensitive match. */
const struct lstack_conf_key *lstack_conf_key_find(const char *name);

/* The known key closest to name (cheap edit distance, case-insensitive),
 * or NULL if none is close enough to be a plausible typo. */
const struct lstack_conf_key *lstack_conf_key_suggest(const char *name);

/* Human name of what k accepts: "integer", "string", "IPv4 string"... */
const char *lstack_conf_kind_name(enum lstack_conf_kind kind);

/* Write into buf what values k accepts in full, as used after "allowed: "
 * in error messages and in docs ("integer 512..8192, power of 2"). For a
 * PENDING key this is the eventual range, not "only the default".
 * Returns the length needed, like snprintf. */
int lstack_conf_key_allowed(const struct lstack_conf_key *k, char *buf, size_t len);

/* ENUM keys: look name up in k->values. Returns true and sets *value and
 * *supported if found; false otherwise. */
bool lstack_conf_enum_lookup(const struct lstack_conf_key *k, const char *name, int *value,
                             bool *supported);

/* ENUM keys: the name of value in k->values (copied into buf, "" if
 * absent). Returns buf. */
const char *lstack_conf_enum_name(const struct lstack_conf_key *k, int value, char *buf,
                                  size_t len);

/* ENUM keys: write into buf the names of the supported values (supported
 * true) or of the not-yet-supported ones (false), each quoted, joined by
 * " or ". Returns the length needed, like snprintf. */
int lstack_conf_enum_list(const struct lstack_conf_key *k, bool supported, char *buf, size_t len);

#endif
