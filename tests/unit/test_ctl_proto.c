/*
 * test_ctl_proto.c - the control protocol's pure parts: the record writer,
 * the flat JSON reader (in place), socket naming, TCP state names. TAP
 * output; one behaviour per check. No socket, no root.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl/ctl_conns.h"
#include "ctl/ctl_path.h"
#include "ctl/ctl_proto.h"

#include "tap.h"

static int streq(const char *a, const char *b)
{
    return a != NULL && b != NULL && strcmp(a, b) == 0;
}

static void test_writer(void)
{
    struct ctl_buf b;
    ctl_buf_init(&b);
    ctl_rec_begin(&b, "conn");
    ctl_rec_i64(&b, "fd", -1);
    ctl_rec_u64(&b, "big", UINT64_MAX);
    ctl_rec_str(&b, "s", "a\"b\\c\nd\te\x01");
    ctl_rec_bool(&b, "t", true);
    ctl_rec_str(&b, "n", NULL);
    ctl_rec_end(&b);
    check(streq(b.p, "{\"type\":\"conn\",\"fd\":-1,\"big\":18446744073709551615,"
                     "\"s\":\"a\\\"b\\\\c\\nd\\te\\u0001\",\"t\":true,\"n\":null}\n"),
          "writer: one line, escapes, 64-bit numbers, null");
    ctl_buf_reset(&b);
    check(b.len == 0 && streq(b.p, ""), "reset empties the buffer");
    char big[5000];
    memset(big, 'x', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    ctl_buf_printf(&b, "%s|%d", big, 7);
    check(b.len == sizeof(big) + 1 && b.p[b.len - 1] == '7', "printf grows past its small buffer");
    ctl_buf_free(&b);
}

static void test_roundtrip(void)
{
    struct ctl_buf b;
    ctl_buf_init(&b);
    ctl_rec_begin(&b, "x");
    ctl_rec_str(&b, "s", "quote\" back\\ nl\n tab\t ctl\x1f utf8 \xc3\xa9");
    ctl_rec_u64(&b, "u", 12345678901234ull);
    ctl_rec_i64(&b, "i", -42);
    ctl_rec_end(&b);
    char *line = strdup(b.p);
    struct ctl_obj o;
    char err[128];
    int rc = ctl_obj_parse(line, &o, err, sizeof(err));
    uint64_t u = 0;
    int64_t i = 0;
    check(rc == 0 && o.n == 4, "writer output parses");
    check(streq(ctl_obj_str(&o, "s"), "quote\" back\\ nl\n tab\t ctl\x1f utf8 \xc3\xa9"), "string survives");
    check(ctl_obj_u64(&o, "u", &u) && u == 12345678901234ull, "u64 survives");
    check(ctl_obj_i64(&o, "i", &i) && i == -42, "negative survives");
    check(!ctl_obj_u64(&o, "i", &u), "a negative is not a u64");
    check(!ctl_obj_u64(&o, "s", &u) && ctl_obj_str(&o, "u") == NULL, "kinds are checked");
    check(ctl_obj_get(&o, "missing") == NULL, "missing key: NULL");
    struct ctl_buf again;
    ctl_buf_init(&again);
    static const char *const skip[] = {"type", NULL};
    ctl_obj_json(&again, &o, skip);
    check(again.p != NULL && again.p[0] == '{' && strstr(again.p, "\"type\"") == NULL &&
              strstr(again.p, "\"u\":12345678901234") != NULL,
          "ctl_obj_json re-emits without skipped keys");
    ctl_buf_free(&again);
    free(line);
    ctl_buf_free(&b);
}

static int parses(const char *text)
{
    char *line = strdup(text);
    struct ctl_obj o;
    char err[128];
    int rc = ctl_obj_parse(line, &o, err, sizeof(err));
    free(line);
    return rc == 0;
}

static void test_reader(void)
{
    char line[] = " { \"a\" : \"\\u00e9\\ud83d\\ude00\\/\" , \"b\":1.5e3,\"c\":false,\"d\":null,\"e\":0 }\n";
    struct ctl_obj o;
    char err[128];
    check(ctl_obj_parse(line, &o, err, sizeof(err)) == 0 && o.n == 5, "whitespace, escapes, all value kinds");
    check(streq(ctl_obj_str(&o, "a"), "\xc3\xa9\xf0\x9f\x98\x80/"), "\\u escapes and a surrogate pair decode to UTF-8");
    const struct ctl_field *f = ctl_obj_get(&o, "b");
    uint64_t u;
    check(f != NULL && f->kind == CTL_NUM && streq(f->val, "1.5e3") && !ctl_obj_u64(&o, "b", &u),
          "a fraction is a number but not an integer");
    check(ctl_obj_get(&o, "c")->kind == CTL_BOOL && ctl_obj_get(&o, "d")->kind == CTL_NULL, "booleans and null");
    check(parses("{}"), "empty object");
    check(!parses("{\"a\":{\"b\":1}}"), "nesting refused");
    check(!parses("{\"a\":[1]}"), "arrays refused");
    check(!parses("{\"a\":1} x"), "trailing text refused");
    check(!parses("{\"a\":1,}"), "trailing comma refused");
    check(!parses("{\"a\":\"unterminated}"), "unterminated string refused");
    check(!parses("{\"a\":\"x\x01\"}"), "raw control character refused");
    check(!parses("{\"a\":\"\\u0000\"}"), "NUL escape refused");
    check(!parses("[1]") && !parses("") && !parses("{a:1}"), "not an object / unquoted key refused");
    char many[CTL_OBJ_MAX_FIELDS * 12 + 16];
    size_t n = (size_t)snprintf(many, sizeof(many), "{");
    for (int i = 0; i <= CTL_OBJ_MAX_FIELDS; i++)
        n += (size_t)snprintf(many + n, sizeof(many) - n, "%s\"k%d\":1", i ? "," : "", i);
    snprintf(many + n, sizeof(many) - n, "}");
    check(!parses(many), "more than CTL_OBJ_MAX_FIELDS fields refused");
    /* Bare tokens back to back: the in-place write must never pass the read. */
    char tight[] = "{\"a\":1,\"b\":-2,\"c\":true,\"d\":null,\"e\":123456789}";
    check(ctl_obj_parse(tight, &o, err, sizeof(err)) == 0 && streq(ctl_obj_get(&o, "e")->val, "123456789") &&
              streq(ctl_obj_get(&o, "a")->val, "1") && streq(ctl_obj_get(&o, "d")->val, "null"),
          "in-place parse of packed bare values");
    char dup[] = "{\"a\":\"first\",\"a\":\"second\"}";
    check(ctl_obj_parse(dup, &o, err, sizeof(err)) == 0 && streq(ctl_obj_str(&o, "a"), "first"),
          "duplicate key: the first wins");
}

static void test_path(void)
{
    char p[128], prefix[CTL_PREFIX_MAX];
    pid_t pid = 0;
    check(ctl_sock_path(p, sizeof(p), "/var/run/lstack", "", 1234) == 0 && streq(p, "/var/run/lstack/lstack.1234.sock"),
          "socket path without a prefix");
    check(ctl_sock_path(p, sizeof(p), "/d", "c1_", 7) == 0 && streq(p, "/d/c1_lstack.7.sock"), "with a prefix");
    check(ctl_sock_path(p, sizeof(p), "/d", "a/b", 7) != 0 && ctl_sock_path(p, sizeof(p), "/d", "..", 7) == 0,
          "a prefix with '/' is refused ('..' alone only names a file)");
    char longdir[200];
    memset(longdir, 'd', sizeof(longdir) - 1);
    longdir[0] = '/';
    longdir[sizeof(longdir) - 1] = '\0';
    check(ctl_sock_path(p, sizeof(p), longdir, "", 1) != 0, "a path longer than sun_path is refused");
    check(ctl_sock_name_parse("lstack.1234.sock", prefix, &pid) && pid == 1234 && streq(prefix, ""),
          "name parse: no prefix");
    check(ctl_sock_name_parse("c1_lstack.99.sock", prefix, &pid) && pid == 99 && streq(prefix, "c1_"),
          "name parse: prefix");
    check(!ctl_sock_name_parse("lstack..sock", prefix, &pid) && !ctl_sock_name_parse("lstack.12.sock.tmp", prefix, &pid) &&
              !ctl_sock_name_parse("xlstack12.sock", prefix, &pid) && !ctl_sock_name_parse("lstack.012.sock", prefix, &pid) &&
              !ctl_sock_name_parse("a b lstack.1.sock", prefix, &pid),
          "name parse refuses other names");
    check(ctl_prefix_ok("") && ctl_prefix_ok("a-B.9_") && !ctl_prefix_ok("a b") && !ctl_prefix_ok("x/y"),
          "prefix characters");
}

static void test_states(void)
{
    check(streq(ctl_tcp_state_name(4), "ESTABLISHED") && streq(ctl_tcp_state_name(10), "TIME_WAIT") &&
              streq(ctl_tcp_state_name(99), "?"),
          "state names");
    check(ctl_tcp_state_parse("established") == 4 && ctl_tcp_state_parse("time-wait") == 10 &&
              ctl_tcp_state_parse("LISTEN") == 1 && ctl_tcp_state_parse("nope") == -1 &&
              ctl_tcp_state_parse("ESTABLISHEDX") == -1,
          "state parse: case, '-' for '_', unknown");
}

int main(void)
{
    test_writer();
    test_roundtrip();
    test_reader();
    test_path();
    test_states();
    return tap_done();
}
