/*
 * lstack-conf-doc - writes, from the key table alone (conf_keys.def), the
 * annotated sample configuration, the configuration reference, the
 * installed /etc/gazelle/lstack.conf and the lstack.conf(5) manual page:
 *
 *   lstack-conf-doc conf > conf/lstack.conf
 *   lstack-conf-doc md   > docs/config.md
 *   lstack-conf-doc etc  > lstack.conf     (built and installed, not kept)
 *   lstack-conf-doc man  > lstack.conf.5   (built and installed, not kept)
 *
 * Owns: the layout of those files. Meanings, defaults and ranges come
 * from the table; a test (tests/unit/check_conf_docs.sh) regenerates the
 * first two and fails if the committed copies differ; tests/package checks
 * that the page names every key and renders without a warning.
 *
 * Exit status: 0 written; 1 the table is inconsistent (nothing written);
 * 2 usage.
 */
#include "conf/conf.h"
#include "conf/conf_check.h"
#include "conf/conf_keys.h"

#include <stdio.h>
#include <string.h>

#define WIDTH 78

static bool pending(const struct lstack_conf_key *k)
{
    return (k->flags & LSTACK_KEY_PENDING) != 0;
}

static bool mandatory(const struct lstack_conf_key *k)
{
    return (k->flags & LSTACK_KEY_MANDATORY) != 0;
}

static bool quoted_kind(const struct lstack_conf_key *k)
{
    return k->kind != LSTACK_KIND_INT && k->kind != LSTACK_KIND_BOOL &&
           k->kind != LSTACK_KIND_STRLIST;
}

/* Print text as '#' comment lines of at most WIDTH columns: the first
 * line starts with first, the next ones with more. */
static void comment(const char *first, const char *more, const char *text)
{
    const char *lead = first;
    const char *p = text;

    while (*p != '\0') {
        size_t room = WIDTH - strlen(lead);
        size_t n = strlen(p);

        if (n > room) {
            n = room;
            while (n > 0 && p[n] != ' ')
                n--;
            if (n == 0) /* one word longer than the line */
                n = strcspn(p, " ");
        }
        printf("%s%.*s\n", lead, (int)n, p);
        p += n;
        while (*p == ' ')
            p++;
        lead = more;
    }
}

/* What k accepts, said for docs: its range, and for keys not built yet
 * what is accepted now. */
static void allowed_text(const struct lstack_conf_key *k, char *buf, size_t len)
{
    char full[240], later[240];

    lstack_conf_key_allowed(k, full, sizeof(full));
    if (pending(k)) {
        snprintf(buf, len, "only %s%s%s for now (eventually %s)", quoted_kind(k) ? "\"" : "",
                 k->def, quoted_kind(k) ? "\"" : "", full);
    } else if (k->kind == LSTACK_KIND_ENUM && lstack_conf_enum_list(k, false, later,
                                                                     sizeof(later)) > 0) {
        snprintf(buf, len, "%s (%s: not supported yet)", full, later);
    } else if (k->kind == LSTACK_KIND_CPULIST) {
        snprintf(buf, len, "%s; at most %d CPUs for now", full, LSTACK_CONF_STACKS_SUPPORTED);
    } else {
        snprintf(buf, len, "%s", full);
    }
}

/* The value the sample conf sets for k, in lstack.conf syntax. */
static void print_sample_value(const struct lstack_conf_key *k)
{
    const char *v = k->def != NULL ? k->def : k->example;

    if (k->kind == LSTACK_KIND_STRLIST) {
        const char *p = v;

        printf("[");
        while (*p != '\0') {
            size_t n = strcspn(p, " ");

            printf("%s\"%.*s\"", p == v ? "" : ", ", (int)n, p);
            p += n;
            while (*p == ' ')
                p++;
        }
        printf("]");
    } else if (quoted_kind(k)) {
        printf("\"%s\"", v);
    } else {
        printf("%s", v);
    }
}

/* The sample (etc false: the test bed's values, every key set) or the
 * installed /etc/gazelle/lstack.conf (etc true: every key commented out,
 * so that nothing runs on an address the administrator did not write). */
static void gen_conf(bool etc)
{
    const char *section = NULL;

    if (etc) {
        printf("# %s - lstack's configuration, read by liblstack.so (the preload)\n"
               "# and lstackd. Reference: lstack.conf(5).\n"
               "#\n"
               "# Syntax: libconfig (key = value, # comments). Key names are Gazelle's.\n"
               "# $%s names another file; $%s (kernel|exit) overrides\n"
               "# init_fail.\n"
               "# Every key is listed below, commented out, with its meaning, default and\n"
               "# range: a key left out takes its default. The four mandatory keys\n"
               "# (dpdk_args, host_addr, mask_addr, gateway_addr) must be set for this\n"
               "# host; until they are, a process under the preload says what is missing\n"
               "# and runs on the kernel TCP/IP stack (init_fail = \"kernel\"). Their\n"
               "# example values are the test bed's (198.18.0.2/24 on an af_packet port).\n"
               "# Unknown keys and bad values are errors that name the file, line, key,\n"
               "# value and what is allowed.\n",
               LSTACK_CONF_DEFAULT_PATH, LSTACK_CONF_ENV, LSTACK_INIT_FAIL_ENV);
    } else {
        printf("# lstack.conf - sample lstack configuration, every key explained.\n"
               "#\n"
               "# Generated by `lstack-conf-doc conf` from lstack/conf/conf_keys.def: edit the\n"
               "# table, not this file (a test checks that they agree). Reference:\n"
               "# docs/config.md.\n"
               "#\n"
               "# Syntax: libconfig (key = value, # comments). Key names are Gazelle's.\n"
               "# Read from $%s, or %s if unset; $%s\n"
               "# (kernel|exit) overrides init_fail.\n"
               "# The mandatory keys are set for the network-namespace test bed: host\n"
               "# 198.18.0.2/24 on a DPDK af_packet port over the veth lsv-s. Optional keys\n"
               "# are set to their defaults. Unknown keys and bad values are errors that\n"
               "# name the file, line, key, value and what is allowed.\n",
               LSTACK_CONF_ENV, LSTACK_CONF_DEFAULT_PATH, LSTACK_INIT_FAIL_ENV);
    }
    for (size_t i = 0; i < lstack_conf_nkeys; i++) {
        const struct lstack_conf_key *k = &lstack_conf_keys[i];
        const char *sec = mandatory(k) ? "mandatory"
                          : pending(k) ? "not built yet: only the default is accepted"
                                       : "optional";
        char allowed[512], line[640];

        if (section == NULL || strcmp(section, sec) != 0) {
            printf("\n# ==== %s ====\n", sec);
            section = sec;
        }
        allowed_text(k, allowed, sizeof(allowed));
        printf("\n");
        snprintf(line, sizeof(line), "%s (%s): %s", k->name, lstack_conf_kind_name(k->kind),
                 k->help);
        comment("# ", "#   ", line);
        if (k->def != NULL) {
            snprintf(line, sizeof(line), "default: %s%s%s", quoted_kind(k) ? "\"" : "", k->def,
                     quoted_kind(k) ? "\"" : "");
            comment("#   ", "#     ", line);
        } else if (mandatory(k)) {
            comment("#   ", "#     ", "mandatory, no default; the value below is an example");
        } else {
            comment("#   ", "#     ", "no default; the line below is an example");
        }
        snprintf(line, sizeof(line), "allowed: %s", allowed);
        comment("#   ", "#     ", line);
        if (*k->note != '\0') {
            snprintf(line, sizeof(line), "note: %s", k->note);
            comment("#   ", "#     ", line);
        }
        printf("%s%s = ", etc || (k->def == NULL && !mandatory(k)) ? "# " : "", k->name);
        print_sample_value(k);
        printf("\n");
    }
}

/* Print s for a markdown table cell ('|' escaped). */
static void md_cell(const char *s)
{
    for (; *s != '\0'; s++) {
        if (*s == '|')
            fputs("\\|", stdout);
        else
            putchar(*s);
    }
}

static void gen_md(void)
{
    printf("# lstack.conf reference\n"
           "\n"
           "<!-- Generated by `lstack-conf-doc md` from lstack/conf/conf_keys.def:\n"
           "     edit the table, not this file (a test checks that they agree). -->\n"
           "\n"
           "lstack reads its configuration from `$%s`, or `%s` when that\n"
           "variable is unset or empty. The syntax is libconfig's (`key = value`, `#`\n"
           "comments) and the key names are Gazelle's: a Gazelle `lstack.conf` is read as\n"
           "is when it uses only the keys below, with values lstack supports.\n"
           "`conf/lstack.conf` is a sample that sets every key, with the same\n"
           "explanations.\n"
           "\n"
           "## Keys\n"
           "\n"
           "| Key | Type | Default | Allowed | Meaning |\n"
           "|---|---|---|---|---|\n",
           LSTACK_CONF_ENV, LSTACK_CONF_DEFAULT_PATH);
    for (size_t i = 0; i < lstack_conf_nkeys; i++) {
        const struct lstack_conf_key *k = &lstack_conf_keys[i];
        char allowed[512];

        allowed_text(k, allowed, sizeof(allowed));
        printf("| `%s` | %s | ", k->name, lstack_conf_kind_name(k->kind));
        if (mandatory(k))
            printf("**mandatory**");
        else if (k->def == NULL)
            printf("none");
        else if (quoted_kind(k))
            printf("`\"%s\"`", k->def);
        else
            printf("`%s`", k->def);
        printf(" | ");
        md_cell(allowed);
        printf(" | ");
        md_cell(k->help);
        printf(" |\n");
    }

    printf("\n## Notes by key\n\n");
    for (size_t i = 0; i < lstack_conf_nkeys; i++) {
        const struct lstack_conf_key *k = &lstack_conf_keys[i];

        if (*k->note != '\0')
            printf("- `%s`: %s\n", k->name, k->note);
    }

    printf("\n## Not built yet\n\n"
           "These keys are parsed and range-checked like the others, but their feature\n"
           "does not exist yet, so the only value accepted is the one that describes\n"
           "what lstack does; any other value is an error saying \"not supported yet\":\n\n");
    for (size_t i = 0; i < lstack_conf_nkeys; i++) {
        const struct lstack_conf_key *k = &lstack_conf_keys[i];

        if (pending(k))
            printf("- `%s`: only `%s%s%s`\n", k->name, quoted_kind(k) ? "\"" : "", k->def,
                   quoted_kind(k) ? "\"" : "");
    }

    printf("\n## Value syntax\n\n"
           "- Integers: decimal or hex; a 64-bit literal (`1500L`) is accepted too. A quoted\n"
           "  number (`\"1500\"`) is a string, not an integer: it is rejected.\n"
           "- 0/1 keys: the integers `0` and `1`, or libconfig's `false` and `true`.\n"
           "- Strings are quoted; a string longer than its limit is an error, never cut.\n"
           "- IPv4 addresses are dotted quads (`198.18.0.2`); netmasks must be contiguous.\n"
           "- CPU lists: ids and ranges separated by commas: `\"2\"`, `\"2,4\"`, `\"1-3\"`;\n"
           "  a CPU set (`app_exclude_cpus`) also takes `\"\"`, no CPU.\n"
           "- Lists of strings: `[\"a\", \"b\"]` or `(\"a\", \"b\")`.\n"
           "\n## Errors\n\n"
           "lstack reports every problem in the file, not only the first, one per line:\n"
           "\n"
           "    PATH:LINE: key 'NAME': value 'VALUE': PROBLEM; allowed: WHAT\n"
           "    PATH:LINE: unknown key 'NAME' (value 'VALUE'); did you mean 'OTHER'?\n"
           "    PATH:LINE: syntax error: LIBCONFIG MESSAGE\n"
           "    PATH: missing mandatory key 'NAME' (MEANING)\n"
           "    PATH: cannot read: REASON\n"
           "\n"
           "Unlike Gazelle, unknown keys are errors (a typo must not silently run with a\n"
           "default), and what happens next is set by `init_fail`.\n"
           "\n## Environment\n\n"
           "- `%s`: the file to read (unset or empty: `%s`).\n"
           "- `%s`: `kernel` or `exit`, the `init_fail` policy; it wins over the file's.\n"
           "  It is what decides when the file cannot be read (unset: `kernel`). A file\n"
           "  with errors decides itself when it says `init_fail = \"exit\"` on a line that\n"
           "  parsed (after a syntax error: a line before it); otherwise it is `kernel`.\n"
           "  Unset or empty: the file decides. Any other value is an error (the stack\n"
           "  does not start) and the file's policy applies to it:\n"
           "\n"
           "      %s: value 'VALUE': is not a known value; allowed: \"kernel\" or \"exit\"\n"
           "\n"
           "With `exit` the process stops with status 1 after the reason\n"
           "(`lstack: error: stopping the process (init_fail = \"exit\" in PATH)` or\n"
           "`(%s=exit)`); with `kernel` it carries on and says\n"
           "`acceleration is OFF: this process runs on the kernel TCP/IP stack`.\n",
           LSTACK_CONF_ENV, LSTACK_CONF_DEFAULT_PATH, LSTACK_INIT_FAIL_ENV, LSTACK_INIT_FAIL_ENV,
           LSTACK_INIT_FAIL_ENV);
}

/* ---- the manual page ---- */

/* Print s as roff text: backslashes escaped, a '-' that starts a word (an
 * option such as --in-memory, a negative number) as a minus sign so that
 * it can be copied, and a leading '.' or '\'' kept from being read as a
 * request. */
static void roff_text(const char *s)
{
    if (*s == '.' || *s == '\'')
        fputs("\\&", stdout);
    for (const char *p = s; *p != '\0'; p++) {
        if (*p == '\\')
            fputs("\\e", stdout);
        else if (*p == '-' && (p == s || strchr(" (\"[-=,", p[-1]) != NULL))
            fputs("\\-", stdout);
        else
            putchar(*p);
    }
    putchar('\n');
}

static void gen_man(void)
{
    printf(".\\\" Generated by lstack-conf-doc man from lstack/conf/conf_keys.def.\n"
           ".TH LSTACK.CONF 5 \"\" \"lstack %s\" \"File Formats\"\n"
           ".SH NAME\n"
           "lstack.conf \\- configuration of the lstack userspace TCP/IP stack\n"
           ".SH SYNOPSIS\n"
           ".I %s\n"
           ".SH DESCRIPTION\n"
           "A process started with\n"
           ".B LD_PRELOAD=liblstack.so\n"
           "whose executable's name equals\n"
           ".B $GAZELLE_BIND_PROCNAME\n"
           "(see\n"
           ".BR liblstack (7)),\n"
           "and\n"
           ".BR lstackd (8),\n"
           "read this file when their stack starts: the file named by\n"
           ".BR $%s ,\n"
           "or\n"
           ".I %s\n"
           "when that variable is unset or empty.\n"
           "The syntax is libconfig's:\n"
           ".I key\n"
           ".B =\n"
           ".IR value ;\n"
           "with\n"
           ".B #\n"
           "comments.\n"
           "The key names are Gazelle's: a Gazelle\n"
           ".I lstack.conf\n"
           "is read as is when it uses only the keys below, with values lstack supports.\n"
           ".PP\n"
           "Unlike Gazelle, an unknown key or a bad value is an error naming the file, line, key,\n"
           "value and what is allowed; what happens next is set by\n"
           ".BR init_fail .\n"
           "The installed file lists every key, commented out: a key left out takes its default.\n",
           LSTACK_VERSION, LSTACK_CONF_DEFAULT_PATH, LSTACK_CONF_ENV, LSTACK_CONF_DEFAULT_PATH);

    const char *section = NULL;
    for (size_t i = 0; i < lstack_conf_nkeys; i++) {
        const struct lstack_conf_key *k = &lstack_conf_keys[i];
        const char *sec = mandatory(k) ? "MANDATORY KEYS" : pending(k) ? "KEYS NOT BUILT YET" : "KEYS";
        char allowed[512], line[640];

        if (section == NULL || strcmp(section, sec) != 0) {
            printf(".SH %s\n", sec);
            if (pending(k))
                printf("These keys are parsed and range-checked like the others, but their feature\n"
                       "does not exist yet: the only value accepted is the one that describes what\n"
                       "lstack does; any other is an error saying \"not supported yet\".\n");
            section = sec;
        }
        allowed_text(k, allowed, sizeof(allowed));
        printf(".TP\n.B %s\n", k->name);
        snprintf(line, sizeof(line), "(%s) %s", lstack_conf_kind_name(k->kind), k->help);
        roff_text(line);
        printf(".br\n");
        if (k->def != NULL)
            snprintf(line, sizeof(line), "Default: %s%s%s.", quoted_kind(k) ? "\"" : "", k->def,
                     quoted_kind(k) ? "\"" : "");
        else if (mandatory(k))
            snprintf(line, sizeof(line), "Mandatory, no default.");
        else
            snprintf(line, sizeof(line), "No default.");
        roff_text(line);
        snprintf(line, sizeof(line), "Allowed: %s.", allowed);
        roff_text(line);
        if (*k->note != '\0') {
            printf(".IP\n");
            roff_text(k->note);
        }
    }

    printf(".SH VALUE SYNTAX\n"
           ".IP \\(bu 2\n"
           "Integers: decimal or hex; a 64-bit literal (1500L) is accepted too.\n"
           "A quoted number (\"1500\") is a string, not an integer: it is rejected.\n"
           ".IP \\(bu 2\n"
           "0/1 keys: the integers 0 and 1, or libconfig's false and true.\n"
           ".IP \\(bu 2\n"
           "Strings are quoted; a string longer than its limit is an error, never cut.\n"
           ".IP \\(bu 2\n"
           "IPv4 addresses are dotted quads (198.18.0.2); netmasks must be contiguous.\n"
           ".IP \\(bu 2\n"
           "CPU lists: ids and ranges separated by commas: \"2\", \"2,4\", \"1\\-3\";\n"
           "a CPU set (app_exclude_cpus) also takes \"\", no CPU.\n"
           ".IP \\(bu 2\n"
           "Lists of strings: [\"a\", \"b\"] or (\"a\", \"b\").\n"
           ".SH DIAGNOSTICS\n"
           "Every problem in the file is reported, not only the first, one per line:\n"
           ".PP\n"
           ".nf\n"
           ".RS\n"
           "PATH:LINE: key 'NAME': value 'VALUE': PROBLEM; allowed: WHAT\n"
           "PATH:LINE: unknown key 'NAME' (value 'VALUE'); did you mean 'OTHER'?\n"
           "PATH:LINE: syntax error: LIBCONFIG MESSAGE\n"
           "PATH: missing mandatory key 'NAME' (MEANING)\n"
           "PATH: cannot read: REASON\n"
           ".RE\n"
           ".fi\n"
           ".PP\n"
           "With init_fail = \"exit\" the process stops with status 1 after the reason;\n"
           "with \"kernel\" it carries on and says\n"
           ".IR \"acceleration is OFF: this process runs on the kernel TCP/IP stack\" .\n"
           ".SH ENVIRONMENT\n"
           ".TP\n"
           ".B %s\n"
           "The file to read (unset or empty: %s).\n"
           ".TP\n"
           ".B %s\n"
           "kernel or exit: the init_fail policy; it wins over the file's, and decides when\n"
           "the file cannot be read (unset: kernel). Any other value is an error.\n"
           ".SH FILES\n"
           ".TP\n"
           ".I %s\n"
           "The configuration, every key commented out as installed.\n"
           ".SH SEE ALSO\n"
           ".BR liblstack (7),\n"
           ".BR stackctl (8),\n"
           ".BR lstackd (8),\n"
           ".BR ltran (8)\n",
           LSTACK_CONF_ENV, LSTACK_CONF_DEFAULT_PATH, LSTACK_INIT_FAIL_ENV, LSTACK_CONF_DEFAULT_PATH);
}

static void gen_sample(void)
{
    gen_conf(false);
}

static void gen_etc(void)
{
    gen_conf(true);
}

static const struct {
    const char *name;
    void (*gen)(void);
    const char *what;
} outputs[] = {
    {.name = "conf", .gen = gen_sample, .what = "the annotated sample lstack.conf (the test bed's values)"},
    {.name = "md", .gen = gen_md, .what = "the configuration reference (markdown)"},
    {.name = "etc", .gen = gen_etc, .what = "the installed /etc/gazelle/lstack.conf (every key commented out)"},
    {.name = "man", .gen = gen_man, .what = "the lstack.conf(5) manual page"},
};
#define N_OUTPUTS (sizeof(outputs) / sizeof(outputs[0]))

int main(int argc, char **argv)
{
    char err[4096];
    size_t mode = N_OUTPUTS;

    for (size_t i = 0; argc == 2 && i < N_OUTPUTS; i++)
        if (strcmp(argv[1], outputs[i].name) == 0)
            mode = i;
    if (mode == N_OUTPUTS) {
        fprintf(stderr, "usage: %s conf|md|etc|man\n", argc > 0 ? argv[0] : "lstack-conf-doc");
        for (size_t i = 0; i < N_OUTPUTS; i++)
            fprintf(stderr, "  %-5s %s\n", outputs[i].name, outputs[i].what);
        return 2;
    }
    if (lstack_conf_check_table(err, sizeof(err)) != 0) {
        fprintf(stderr, "%s: the key table is inconsistent:\n%s\n", argv[0], err);
        return 1;
    }
    outputs[mode].gen();
    if (fflush(stdout) != 0 || ferror(stdout)) {
        perror(argv[0]);
        return 1;
    }
    return 0;
}
