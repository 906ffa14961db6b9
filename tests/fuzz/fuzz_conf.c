/*
 * fuzz_conf.c - libFuzzer target: the lstack.conf parser (lstack/conf/, a
 * pure function text -> struct) on arbitrary text.
 *
 * A broken promise aborts with what was seen (libFuzzer keeps the input).
 *
 * Inputs naming "@include" are skipped: libconfig would read the named file
 * (the parser's caller chooses the config, so that is not an attack surface,
 * and reading /dev/zero would only time out).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf/conf.h"
#include "fuzz.h"

/*
 * Besides "no crash, no leak, no undefined behaviour" it checks what the
 * parser promises (conf.h):
 *  - the report is NUL-terminated inside the caller's buffer, and a small
 *    buffer gets the same report cut with "..." (conf_report.h);
 *  - a failed parse leaves the struct freed (lstack_conf_free again is safe);
 *  - an accepted config formats (lstack_conf_format) to a text that parses
 *    again and formats to the very same text: what `stackctl show config`
 *    prints is a valid lstack.conf meaning the same thing.
 */

#define SMALL_ERR 40

static void broken(const char *what, const char *a, const char *b)
{
    fprintf(stderr, "fuzz_conf: %s\n--- first\n%s\n--- second\n%s\n", what, a, b != NULL ? b : "");
    abort();
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    return 0;
}

static char *format(const struct lstack_conf *c)
{
    int need = lstack_conf_format(c, NULL, 0);
    char *buf = malloc((size_t)need + 1);
    if (buf == NULL)
        abort();
    if (lstack_conf_format(c, buf, (size_t)need + 1) != need)
        broken("lstack_conf_format gave two lengths for one config", buf, NULL);
    return buf;
}

/* A config that parsed: its formatted text parses to the same config. */
static void round_trip(const struct lstack_conf *c)
{
    char err[4096];
    char *text = format(c);
    struct lstack_conf again;
    if (lstack_conf_parse(text, "formatted", &again, err, sizeof(err)) != 0)
        broken("the formatted config does not parse", text, err);
    char *text2 = format(&again);
    if (strcmp(text, text2) != 0)
        broken("the formatted config parses to another config", text, text2);
    lstack_conf_free(&again);
    free(text2);
    free(text);
}

/* A config that did not parse: the report, in a full and a small buffer. */
static void check_report(const char *text, const char *full)
{
    char small[SMALL_ERR];
    struct lstack_conf c;
    memset(small, 'x', sizeof(small));
    if (lstack_conf_parse(text, "fuzz.conf", &c, small, sizeof(small)) == 0)
        broken("the same text parsed the second time", text, NULL);
    lstack_conf_free(&c);
    if (memchr(small, '\0', sizeof(small)) == NULL)
        broken("the report is not NUL-terminated in a small buffer", text, NULL);
    size_t n = strlen(small);
    if (strlen(full) < sizeof(small)) {
        if (strcmp(small, full) != 0)
            broken("a report that fits differs between buffer sizes", full, small);
    } else if (n < 3 || strcmp(small + n - 3, "...") != 0 || strncmp(small, full, n - 3) != 0) {
        broken("a cut report is not the start of the full one followed by '...'", full, small);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (text == NULL)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    if (strcasestr(text, "@include") != NULL) {
        free(text);
        return 0;
    }
    char err[4096];
    struct lstack_conf c;
    memset(err, 'x', sizeof(err));
    int rc = lstack_conf_parse(text, "fuzz.conf", &c, err, sizeof(err));
    if (memchr(err, '\0', sizeof(err)) == NULL)
        broken("the report is not NUL-terminated", text, NULL);
    if (rc == 0) {
        if (err[0] != '\0')
            broken("an accepted config came with a report", text, err);
        round_trip(&c);
    } else {
        if (err[0] == '\0')
            broken("a refused config came with no report", text, NULL);
        check_report(text, err);
    }
    lstack_conf_free(&c); /* freed already after a failure: must be safe */
    free(text);
    return 0;
}
