/*
 * conf_keys.c - the key table (built from conf_keys.def) and the questions
 * asked about it: find a key, suggest one for a typo, describe what a key
 * accepts. Contracts in conf_keys.h.
 */
#include "conf/conf_keys.h"

#include "conf/conf.h"
#include "conf/conf_report.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FIELD(member) offsetof(struct lstack_conf, member)
#define NO_FIELD LSTACK_CONF_NO_FIELD
#define LSTACK_CONF_KEY(name_, kind_, flags_, def_, min_, max_, values_, field_, example_, help_, \
                        note_)                                                                    \
    {                                                                                             \
        .name = #name_,                                                                           \
        .kind = LSTACK_KIND_##kind_,                                                              \
        .flags = (flags_),                                                                        \
        .def = (def_),                                                                            \
        .min = (min_),                                                                            \
        .max = (max_),                                                                            \
        .values = (values_),                                                                      \
        .field = (field_),                                                                        \
        .example = (example_),                                                                    \
        .help = (help_),                                                                          \
        .note = (note_),                                                                          \
    },

const struct lstack_conf_key lstack_conf_keys[LSTACK_CONF_NKEYS] = {
#include "conf/conf_keys.def"
};

#undef LSTACK_CONF_KEY
#undef FIELD
#undef NO_FIELD

const size_t lstack_conf_nkeys = LSTACK_CONF_NKEYS;

const struct lstack_conf_key *lstack_conf_key_find(const char *name)
{
    for (size_t i = 0; i < lstack_conf_nkeys; i++) {
        if (strcmp(lstack_conf_keys[i].name, name) == 0)
            return &lstack_conf_keys[i];
    }
    return NULL;
}

/* Levenshtein distance, case-insensitive, of two short strings. Names
 * longer than the buffer are reported as far apart. */
static size_t edit_distance(const char *a, const char *b)
{
    enum { MAXLEN = 64 };
    size_t la = strlen(a), lb = strlen(b);
    size_t row[MAXLEN + 1];

    if (la > MAXLEN || lb > MAXLEN)
        return (size_t)-1;
    for (size_t j = 0; j <= lb; j++)
        row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t diag = row[0];

        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t up = row[j];
            size_t cost = tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]);
            size_t best = diag + cost;

            if (up + 1 < best)
                best = up + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[lb];
}

const struct lstack_conf_key *lstack_conf_key_suggest(const char *name)
{
    const struct lstack_conf_key *best = NULL;
    size_t best_d = (size_t)-1;
    /* A typo: a third of the name's letters at most, at least one. */
    size_t limit = strlen(name) / 3;

    if (limit < 1)
        limit = 1;
    for (size_t i = 0; i < lstack_conf_nkeys; i++) {
        size_t d = edit_distance(name, lstack_conf_keys[i].name);

        if (d < best_d) {
            best_d = d;
            best = &lstack_conf_keys[i];
        }
    }
    return best_d <= limit ? best : NULL;
}

const char *lstack_conf_kind_name(enum lstack_conf_kind kind)
{
    switch (kind) {
    case LSTACK_KIND_INT:
        return "integer";
    case LSTACK_KIND_BOOL:
        return "0/1";
    case LSTACK_KIND_ENUM:
        return "string";
    case LSTACK_KIND_STRING:
        return "string";
    case LSTACK_KIND_IPV4:
        return "IPv4 string";
    case LSTACK_KIND_MASK:
        return "netmask string";
    case LSTACK_KIND_MAC:
        return "MAC string";
    case LSTACK_KIND_CPULIST:
    case LSTACK_KIND_CPUSET:
        return "CPU list string";
    case LSTACK_KIND_STRLIST:
        return "list of strings";
    }
    return "?";
}

/* Walk k->values ("name=num|~name=num"). For each entry calls fn; stops
 * early when fn returns true. Returns whether it stopped early. */
typedef bool (*enum_fn)(const char *name, size_t namelen, int value, bool supported, void *arg);

static bool enum_walk(const struct lstack_conf_key *k, enum_fn fn, void *arg)
{
    const char *p = k->values;

    while (p != NULL && *p != '\0') {
        bool supported = true;
        const char *eq, *end;
        int value;

        if (*p == '~') {
            supported = false;
            p++;
        }
        eq = strchr(p, '=');
        end = strchr(p, '|');
        if (end == NULL)
            end = p + strlen(p);
        if (eq == NULL || eq > end)
            return false; /* malformed row; the table test catches it */
        value = (int)strtol(eq + 1, NULL, 10);
        if (fn(p, (size_t)(eq - p), value, supported, arg))
            return true;
        p = *end == '|' ? end + 1 : end;
    }
    return false;
}

struct lookup_arg {
    const char *name;
    int value;
    bool supported;
};

static bool match_name(const char *name, size_t namelen, int value, bool supported, void *arg)
{
    struct lookup_arg *a = arg;

    if (strlen(a->name) != namelen || strncmp(a->name, name, namelen) != 0)
        return false;
    a->value = value;
    a->supported = supported;
    return true;
}

bool lstack_conf_enum_lookup(const struct lstack_conf_key *k, const char *name, int *value,
                             bool *supported)
{
    struct lookup_arg a = { .name = name };

    if (!enum_walk(k, match_name, &a))
        return false;
    *value = a.value;
    *supported = a.supported;
    return true;
}

struct name_arg {
    int value;
    char *buf;
    size_t len;
};

static bool match_value(const char *name, size_t namelen, int value, bool supported, void *arg)
{
    struct name_arg *a = arg;

    (void)supported;
    if (value != a->value)
        return false;
    snprintf(a->buf, a->len, "%.*s", (int)namelen, name);
    return true;
}

const char *lstack_conf_enum_name(const struct lstack_conf_key *k, int value, char *buf,
                                  size_t len)
{
    struct name_arg a = { .value = value, .buf = buf, .len = len };

    if (len > 0)
        buf[0] = '\0';
    enum_walk(k, match_value, &a);
    return buf;
}

struct list_arg {
    bool supported;
    int total; /* entries of the wanted kind */
    int seen;
    struct conf_text *o;
};

static bool count_entry(const char *name, size_t namelen, int value, bool supported, void *arg)
{
    struct list_arg *a = arg;

    (void)name, (void)namelen, (void)value;
    if (supported == a->supported)
        a->total++;
    return false;
}

static bool list_entry(const char *name, size_t namelen, int value, bool supported, void *arg)
{
    struct list_arg *a = arg;
    const char *sep = "";

    (void)value;
    if (supported != a->supported)
        return false;
    a->seen++;
    if (a->seen > 1)
        sep = a->seen == a->total ? " or " : ", ";
    conf_text_add(a->o, "%s\"%.*s\"", sep, (int)namelen, name);
    return false;
}

int lstack_conf_enum_list(const struct lstack_conf_key *k, bool supported, char *buf, size_t len)
{
    struct conf_text o = { .buf = buf, .len = len };
    struct list_arg a = { .supported = supported, .o = &o };

    if (len > 0)
        buf[0] = '\0';
    enum_walk(k, count_entry, &a);
    enum_walk(k, list_entry, &a);
    return (int)o.need;
}

int lstack_conf_key_allowed(const struct lstack_conf_key *k, char *buf, size_t len)
{
    struct conf_text o = { .buf = buf, .len = len };

    if (len > 0)
        buf[0] = '\0';
    switch (k->kind) {
    case LSTACK_KIND_INT:
        conf_text_add(&o, "integer %lld..%lld%s", k->min, k->max,
                      k->flags & LSTACK_KEY_POW2 ? ", a power of 2" : "");
        break;
    case LSTACK_KIND_BOOL:
        conf_text_add(&o, "0 or 1");
        break;
    case LSTACK_KIND_ENUM:
        return lstack_conf_enum_list(k, true, buf, len);
    case LSTACK_KIND_STRING:
        conf_text_add(&o, "string of at most %lld bytes", k->max);
        break;
    case LSTACK_KIND_IPV4:
        conf_text_add(&o, "unicast IPv4 address a.b.c.d, not in 0/8, 127/8, 224/4 or 240/4");
        break;
    case LSTACK_KIND_MASK:
        conf_text_add(&o, "contiguous netmask a.b.c.d, /1 to /31");
        break;
    case LSTACK_KIND_MAC:
        conf_text_add(&o, "unicast MAC address aa:bb:cc:dd:ee:ff, not all-zero");
        break;
    case LSTACK_KIND_CPULIST:
        conf_text_add(&o, "CPU ids %lld..%lld, each once, as \"2\", \"2,4\" or \"1-3\"",
                      k->min, k->max);
        break;
    case LSTACK_KIND_CPUSET:
        conf_text_add(&o, "\"\" (none) or CPU ids %lld..%lld, each once, as \"7\", \"7,9\" or \"6-8\"",
                      k->min, k->max);
        break;
    case LSTACK_KIND_STRLIST:
        conf_text_add(&o, "list of %lld..%lld non-empty strings of at most %d bytes", k->min,
                      k->max, LSTACK_CONF_ARG_MAX);
        break;
    }
    return (int)o.need;
}
