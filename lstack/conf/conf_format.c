/*
 * conf_format.c - struct lstack_conf -> lstack.conf text: every key of the
 * table, in table order, with the value in effect (defaults included), so
 * that the output parses back to the same struct. Contract in conf.h.
 */
#include "conf/conf.h"

#include "conf/conf_keys.h"
#include "conf/conf_report.h"
#include "conf/conf_values.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

/* s as a libconfig string literal, quotes included. */
static void add_quoted(struct conf_text *t, const char *s)
{
    conf_text_add(t, "\"");
    for (const unsigned char *p = (const unsigned char *)s; *p != '\0'; p++) {
        switch (*p) {
        case '"':
            conf_text_add(t, "\\\"");
            break;
        case '\\':
            conf_text_add(t, "\\\\");
            break;
        case '\n':
            conf_text_add(t, "\\n");
            break;
        case '\t':
            conf_text_add(t, "\\t");
            break;
        default:
            if (*p < 0x20 || *p == 0x7f)
                conf_text_add(t, "\\x%02x", *p);
            else
                conf_text_add(t, "%c", *p);
            break;
        }
    }
    conf_text_add(t, "\"");
}

/* The value of a key that has no field: its default, the only value such
 * a key accepts. */
static void add_default(struct conf_text *t, const struct lstack_conf_key *k)
{
    if (k->kind == LSTACK_KIND_INT || k->kind == LSTACK_KIND_BOOL)
        conf_text_add(t, "%s", k->def);
    else
        add_quoted(t, k->def);
}

static void add_value(struct conf_text *t, const struct lstack_conf_key *k,
                      const struct lstack_conf *c)
{
    const char *at = (const char *)c + k->field;
    char s[INET_ADDRSTRLEN + LSTACK_CONF_STR_MAX];
    uint32_t u32;
    bool b;
    int i;

    switch (k->kind) {
    case LSTACK_KIND_STRLIST:
        conf_text_add(t, "[");
        for (int a = 0; a < c->dpdk_argc; a++) {
            conf_text_add(t, "%s", a > 0 ? ", " : "");
            add_quoted(t, c->dpdk_argv[a]);
        }
        conf_text_add(t, "]");
        break;
    case LSTACK_KIND_INT:
        memcpy(&u32, at, sizeof(u32));
        conf_text_add(t, "%u", u32);
        break;
    case LSTACK_KIND_BOOL:
        memcpy(&b, at, sizeof(b));
        conf_text_add(t, "%d", b ? 1 : 0);
        break;
    case LSTACK_KIND_ENUM:
        memcpy(&i, at, sizeof(i));
        add_quoted(t, lstack_conf_enum_name(k, i, s, sizeof(s)));
        break;
    case LSTACK_KIND_STRING:
        add_quoted(t, at);
        break;
    case LSTACK_KIND_IPV4:
    case LSTACK_KIND_MASK:
        add_quoted(t, inet_ntop(AF_INET, at, s, sizeof(s)));
        break;
    case LSTACK_KIND_MAC:
        snprintf(s, sizeof(s), "%02x:%02x:%02x:%02x:%02x:%02x", c->devices[0], c->devices[1],
                 c->devices[2], c->devices[3], c->devices[4], c->devices[5]);
        add_quoted(t, s);
        break;
    case LSTACK_KIND_CPUSET: {
        struct lstack_cpu_mask m;
        char list[LSTACK_CONF_CPU_WORDS * 64 * 5];

        memcpy(&m, at, sizeof(m));
        lstack_cpu_mask_format(&m, list, sizeof(list));
        add_quoted(t, list);
        break;
    }
    case LSTACK_KIND_CPULIST:
        conf_text_add(t, "\"");
        for (int n = 0; n < c->num_cpus && n < LSTACK_CONF_MAX_CPUS; n++)
            conf_text_add(t, "%s%d", n > 0 ? "," : "", c->cpus[n]);
        conf_text_add(t, "\"");
        break;
    }
}

int lstack_conf_format(const struct lstack_conf *c, char *buf, size_t len)
{
    struct conf_text t = { .buf = buf, .len = len };

    if (len > 0)
        buf[0] = '\0';
    conf_text_add(&t, "# lstack configuration in effect (defaults included)\n");
    for (size_t i = 0; i < lstack_conf_nkeys; i++) {
        const struct lstack_conf_key *k = &lstack_conf_keys[i];

        if (k->kind == LSTACK_KIND_MAC && !c->has_devices) {
            conf_text_add(&t, "# %s: not set, the only port is used\n", k->name);
            continue;
        }
        conf_text_add(&t, "%s = ", k->name);
        if (k->field == LSTACK_CONF_NO_FIELD)
            add_default(&t, k);
        else
            add_value(&t, k, c);
        conf_text_add(&t, "\n");
    }
    return (int)t.need;
}
