/*
 * conf_check.c - one key's value against its table row: range and syntax
 * checks, "not supported yet" for features not built, the store into
 * struct lstack_conf, the defaults, and the self-check of the table.
 * Contracts in conf_check.h and conf.h.
 */
#include "conf/conf_check.h"

#include "conf/conf_report.h"
#include "conf/conf_values.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ENUM values are stored through an int; the enums must be int-sized. */
_Static_assert(sizeof(enum lstack_stack_mode) == sizeof(int), "enum size");
_Static_assert(sizeof(enum lstack_init_fail) == sizeof(int), "enum size");

struct conf_raw conf_raw_default(const struct lstack_conf_key *k)
{
    struct conf_raw raw = { .s = k->def };

    if (k->kind == LSTACK_KIND_INT || k->kind == LSTACK_KIND_BOOL) {
        raw.is_int = true;
        raw.i = strtoll(k->def, NULL, 0);
    }
    return raw;
}

/* "is not supported yet (<note without its final period>)". */
static void not_yet(const struct lstack_conf_key *k, char *why, size_t whylen)
{
    int n = (int)strlen(k->note);

    if (n > 0 && k->note[n - 1] == '.')
        n--;
    if (n > 0)
        snprintf(why, whylen, "is not supported yet (%.*s)", n, k->note);
    else
        snprintf(why, whylen, "is not supported yet");
}

/* Syntax and range checks by kind. Returns CONF_OK or CONF_BAD / LATER
 * with why (allowed is filled by the caller for CONF_BAD). */
static enum conf_verdict check_kind(const struct lstack_conf_key *k, const struct conf_raw *raw,
                                    struct conf_value *v, char *why, size_t whylen,
                                    char *allowed, size_t allowedlen)
{
    int prefix;
    bool supported;
    int value;
    const char *bad;

    switch (k->kind) {
    case LSTACK_KIND_INT:
    case LSTACK_KIND_BOOL:
        v->i = raw->i;
        if (raw->i < k->min || raw->i > k->max) {
            snprintf(why, whylen, "is out of range");
            return CONF_BAD;
        }
        if ((k->flags & LSTACK_KEY_POW2) && !lstack_is_pow2(raw->i)) {
            snprintf(why, whylen, "is not a power of 2");
            return CONF_BAD;
        }
        return CONF_OK;
    case LSTACK_KIND_ENUM:
        if (!lstack_conf_enum_lookup(k, raw->s, &value, &supported)) {
            snprintf(why, whylen, "is not a known value");
            return CONF_BAD;
        }
        if (!supported) {
            not_yet(k, why, whylen);
            lstack_conf_enum_list(k, true, allowed, allowedlen);
            return CONF_LATER;
        }
        v->i = value;
        return CONF_OK;
    case LSTACK_KIND_STRING:
        if ((long long)strlen(raw->s) > k->max) {
            snprintf(why, whylen, "is too long (%zu bytes)", strlen(raw->s));
            return CONF_BAD;
        }
        v->s = raw->s;
        return CONF_OK;
    case LSTACK_KIND_IPV4:
        if (lstack_parse_ipv4(raw->s, &v->addr) != 0) {
            snprintf(why, whylen, "is not an IPv4 address");
            return CONF_BAD;
        }
        bad = lstack_ipv4_unusable(v->addr);
        if (bad != NULL) {
            snprintf(why, whylen, "%s", bad);
            return CONF_BAD;
        }
        return CONF_OK;
    case LSTACK_KIND_MASK:
        if (lstack_parse_ipv4(raw->s, &v->addr) != 0) {
            snprintf(why, whylen, "is not an IPv4 netmask");
            return CONF_BAD;
        }
        prefix = lstack_mask_prefix(v->addr);
        if (prefix < 0)
            snprintf(why, whylen, "is not contiguous (its one bits have gaps)");
        else if (prefix == 0)
            snprintf(why, whylen, "is empty (/0)");
        else if (prefix == 32)
            snprintf(why, whylen, "leaves no address for a gateway (/32)");
        else
            return CONF_OK;
        return CONF_BAD;
    case LSTACK_KIND_MAC:
        if (lstack_parse_mac(raw->s, v->mac) != 0) {
            snprintf(why, whylen, "is not a MAC address");
            return CONF_BAD;
        }
        bad = lstack_mac_unusable(v->mac);
        if (bad != NULL) {
            snprintf(why, whylen, "%s", bad);
            return CONF_BAD;
        }
        return CONF_OK;
    case LSTACK_KIND_CPULIST:
        if (lstack_parse_cpulist(raw->s, (int)k->min, (int)k->max, v->cpus, LSTACK_CONF_MAX_CPUS,
                                 &v->ncpus, why, whylen) != 0)
            return CONF_BAD;
        if (v->ncpus > LSTACK_CONF_STACKS_SUPPORTED) {
            snprintf(why, whylen, "lists %d CPUs: more than %d stacks are not supported yet",
                     v->ncpus, LSTACK_CONF_STACKS_SUPPORTED);
            snprintf(allowed, allowedlen, "1 to %d CPU ids %lld..%lld, e.g. \"2\" or \"2,3\"",
                     LSTACK_CONF_STACKS_SUPPORTED, k->min, k->max);
            return CONF_LATER;
        }
        return CONF_OK;
    case LSTACK_KIND_CPUSET:
        if (lstack_parse_cpumask(raw->s, (int)k->min, (int)k->max, &v->mask, why, whylen) != 0)
            return CONF_BAD;
        return CONF_OK;
    case LSTACK_KIND_STRLIST:
        break;
    }
    snprintf(why, whylen, "cannot be checked as a scalar");
    return CONF_BAD;
}

enum conf_verdict conf_check_value(const struct lstack_conf_key *k, const struct conf_raw *raw,
                                   struct conf_value *v, char *why, size_t whylen, char *allowed,
                                   size_t allowedlen)
{
    enum conf_verdict verdict;
    struct conf_raw defraw;
    bool same;

    memset(v, 0, sizeof(*v));
    verdict = check_kind(k, raw, v, why, whylen, allowed, allowedlen);
    if (verdict == CONF_BAD)
        lstack_conf_key_allowed(k, allowed, allowedlen);
    if (verdict != CONF_OK || !(k->flags & LSTACK_KEY_PENDING))
        return verdict;

    /* A feature not built yet: only the default describes what lstack does. */
    defraw = conf_raw_default(k);
    same = defraw.is_int ? raw->i == defraw.i : strcmp(raw->s, defraw.s) == 0;
    if (same)
        return CONF_OK;
    not_yet(k, why, whylen);
    if (defraw.is_int)
        snprintf(allowed, allowedlen, "only %lld", defraw.i);
    else
        snprintf(allowed, allowedlen, "only \"%s\"", defraw.s);
    return CONF_LATER;
}

void conf_store(const struct lstack_conf_key *k, const struct conf_value *v,
                struct lstack_conf *c)
{
    char *at;
    uint32_t u32;
    bool b;
    int i;

    if (k->field == LSTACK_CONF_NO_FIELD)
        return;
    at = (char *)c + k->field; /* not before the check: c + NO_FIELD overflows */
    switch (k->kind) {
    case LSTACK_KIND_INT:
        u32 = (uint32_t)v->i; /* min >= 0 for stored keys: checked by the table test */
        memcpy(at, &u32, sizeof(u32));
        break;
    case LSTACK_KIND_BOOL:
        b = v->i != 0;
        memcpy(at, &b, sizeof(b));
        break;
    case LSTACK_KIND_ENUM:
        i = (int)v->i;
        memcpy(at, &i, sizeof(i));
        break;
    case LSTACK_KIND_STRING:
        /* Length <= max < LSTACK_CONF_STR_MAX: checked above and by the table test. */
        memcpy(at, v->s, strlen(v->s) + 1);
        break;
    case LSTACK_KIND_IPV4:
    case LSTACK_KIND_MASK:
        memcpy(at, &v->addr, sizeof(v->addr));
        break;
    case LSTACK_KIND_MAC:
        /* The only MAC key is devices: it also sets has_devices. */
        memcpy(c->devices, v->mac, sizeof(c->devices));
        c->has_devices = true;
        break;
    case LSTACK_KIND_CPULIST:
        /* The only CPU list key is num_cpus: cpus[] and its count. */
        memcpy(c->cpus, v->cpus, sizeof(c->cpus));
        c->num_cpus = v->ncpus;
        break;
    case LSTACK_KIND_CPUSET:
        memcpy(at, &v->mask, sizeof(v->mask));
        break;
    case LSTACK_KIND_STRLIST:
        break; /* stored by the parser, element by element */
    }
}

void lstack_conf_defaults(struct lstack_conf *out)
{
    memset(out, 0, sizeof(*out));
    for (size_t i = 0; i < lstack_conf_nkeys; i++) {
        const struct lstack_conf_key *k = &lstack_conf_keys[i];
        struct conf_raw raw;
        struct conf_value v;
        char why[8], allowed[8];

        if (k->def == NULL || k->kind == LSTACK_KIND_STRLIST)
            continue;
        raw = conf_raw_default(k);
        /* Cannot fail: the table test checks every default. */
        if (conf_check_value(k, &raw, &v, why, sizeof(why), allowed, sizeof(allowed)) == CONF_OK)
            conf_store(k, &v, out);
    }
}

static void check_row(const struct lstack_conf_key *k, struct conf_report *r)
{
    bool stored = k->field != LSTACK_CONF_NO_FIELD;
    bool pending_kind = k->kind == LSTACK_KIND_INT || k->kind == LSTACK_KIND_BOOL ||
                        k->kind == LSTACK_KIND_STRING || k->kind == LSTACK_KIND_ENUM;

    if (lstack_conf_key_find(k->name) != k)
        conf_report_add(r, "conf_keys.def: key '%s': listed twice", k->name);
    if (k->help == NULL || *k->help == '\0' || k->note == NULL)
        conf_report_add(r, "conf_keys.def: key '%s': help missing or note NULL", k->name);
    if ((k->flags & LSTACK_KEY_MANDATORY) && k->def != NULL)
        conf_report_add(r, "conf_keys.def: key '%s': mandatory with a default", k->name);
    if (k->def == NULL && k->example == NULL)
        conf_report_add(r, "conf_keys.def: key '%s': no default and no example", k->name);
    if ((k->flags & LSTACK_KEY_PENDING) && (!pending_kind || k->def == NULL))
        conf_report_add(r, "conf_keys.def: key '%s': PENDING needs a scalar default", k->name);
    if ((k->flags & LSTACK_KEY_POW2) && k->kind != LSTACK_KIND_INT)
        conf_report_add(r, "conf_keys.def: key '%s': POW2 on a non-integer", k->name);
    if ((k->kind == LSTACK_KIND_ENUM) != (k->values != NULL))
        conf_report_add(r, "conf_keys.def: key '%s': values only for ENUM keys", k->name);
    if (stored && k->kind == LSTACK_KIND_INT && (k->min < 0 || k->max > UINT32_MAX))
        conf_report_add(r, "conf_keys.def: key '%s': range does not fit uint32_t", k->name);
    if (stored && k->kind == LSTACK_KIND_STRING && k->max >= LSTACK_CONF_STR_MAX)
        conf_report_add(r, "conf_keys.def: key '%s': max length does not fit", k->name);
    if (k->kind == LSTACK_KIND_STRLIST && (k->min < 1 || k->max > LSTACK_CONF_MAX_DPDK_ARGS))
        conf_report_add(r, "conf_keys.def: key '%s': count does not fit dpdk_argv", k->name);
    if ((k->kind == LSTACK_KIND_CPULIST || k->kind == LSTACK_KIND_CPUSET) && k->min < 0)
        conf_report_add(r, "conf_keys.def: key '%s': negative CPU id", k->name);
    if (k->kind == LSTACK_KIND_CPUSET && k->max >= LSTACK_CONF_CPU_WORDS * 64)
        conf_report_add(r, "conf_keys.def: key '%s': CPU ids do not fit a CPU mask", k->name);
}

int lstack_conf_check_table(char *err, size_t errlen)
{
    struct conf_report r;

    conf_report_init(&r, err, errlen);
    for (size_t i = 0; i < lstack_conf_nkeys; i++) {
        const struct lstack_conf_key *k = &lstack_conf_keys[i];
        const char *texts[2] = { k->def, k->example };

        check_row(k, &r);
        if (k->kind == LSTACK_KIND_STRLIST)
            continue; /* its example is checked by parsing conf/lstack.conf */
        for (int t = 0; t < 2; t++) {
            struct conf_raw raw;
            struct conf_value v;
            char why[256], allowed[256];

            if (texts[t] == NULL)
                continue;
            raw.s = texts[t];
            raw.is_int = k->kind == LSTACK_KIND_INT || k->kind == LSTACK_KIND_BOOL;
            raw.i = 0;
            if (raw.is_int) {
                char *end;

                raw.i = strtoll(texts[t], &end, 0);
                if (end == texts[t] || *end != '\0') {
                    conf_report_add(&r, "conf_keys.def: key '%s': '%s' is not an integer",
                                    k->name, texts[t]);
                    continue;
                }
            }
            if (conf_check_value(k, &raw, &v, why, sizeof(why), allowed, sizeof(allowed)) !=
                CONF_OK)
                conf_report_add(&r, "conf_keys.def: key '%s': %s '%s' %s; allowed: %s", k->name,
                                t == 0 ? "default" : "example", texts[t], why, allowed);
        }
    }
    return r.count > 0 ? -1 : 0;
}
