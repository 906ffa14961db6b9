/*
 * conf.h - lstack.conf: the parsed configuration and its pure parser.
 *
 * Owns: struct lstack_conf (what every other part of lstack reads) and the
 * table of keys (name, type, default, range, meaning) in conf_keys.def, from
 * which conf/lstack.conf and docs/config.md are generated and checked.
 *
 * The parser is a pure function file -> struct: no DPDK, no lwIP, no global
 * state, no logging. It reports every problem it finds (not only the first)
 * as lines "FILE:LINE: key 'K': value 'V': what is allowed".
 *
 * Design: docs/design.md#one-key-table-strict-parsing
 */
#ifndef LSTACK_CONF_H
#define LSTACK_CONF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LSTACK_CONF_ENV "LSTACK_CONF_PATH"
#define LSTACK_INIT_FAIL_ENV "LSTACK_INIT_FAIL" /* kernel|exit: wins over init_fail */
#define LSTACK_CONF_DEFAULT_PATH "/etc/gazelle/lstack.conf"
#define LSTACK_CONF_MAX_CPUS 64
#define LSTACK_CONF_MAX_DPDK_ARGS 64
#define LSTACK_CONF_STR_MAX 108 /* fits a sun_path */
#define LSTACK_CONF_CPU_WORDS 16 /* a CPU set of ids 0..1023, what a cpu_set_t holds */

/* A set of CPU ids (app_exclude_cpus): bit id % 64 of bits[id / 64]. */
struct lstack_cpu_mask {
    uint64_t bits[LSTACK_CONF_CPU_WORDS];
};

static inline bool lstack_cpu_mask_has(const struct lstack_cpu_mask *m, int cpu)
{
    return cpu >= 0 && cpu < LSTACK_CONF_CPU_WORDS * 64 &&
           (m->bits[cpu / 64] >> (cpu % 64) & 1u) != 0;
}

static inline bool lstack_cpu_mask_empty(const struct lstack_cpu_mask *m)
{
    for (int i = 0; i < LSTACK_CONF_CPU_WORDS; i++)
        if (m->bits[i] != 0)
            return false;
    return true;
}

enum lstack_stack_mode {
    LSTACK_MODE_RUN_TO_COMPLETION = 0, /* app thread polls the stack */
    LSTACK_MODE_RUN_TO_WAKEUP = 1,     /* stack threads, app woken up */
};

enum lstack_init_fail {
    LSTACK_INIT_FAIL_KERNEL = 0, /* say why, carry on on the kernel stack */
    LSTACK_INIT_FAIL_EXIT = 1,   /* say why, stop the process */
};

struct lstack_conf {
    /* EAL arguments, argv[0] excluded. Owned: freed by lstack_conf_free. */
    int dpdk_argc;
    char *dpdk_argv[LSTACK_CONF_MAX_DPDK_ARGS];

    /* IPv4, network byte order. */
    uint32_t host_addr;
    uint32_t mask_addr;
    uint32_t gateway_addr;

    /* MAC of the port to use; has_devices false: use the only port. */
    bool has_devices;
    uint8_t devices[6];

    /* One stack per listed CPU, in the order given. */
    int num_cpus;
    int cpus[LSTACK_CONF_MAX_CPUS];

    enum lstack_stack_mode stack_thread_mode;
    enum lstack_init_fail init_fail;

    uint32_t tcp_conn_count;
    uint32_t mbuf_count_per_conn;
    uint32_t tcp_rcv_wnd;
    uint32_t tcp_snd_buf;
    uint32_t nic_rxqueue_size;
    uint32_t nic_txqueue_size;
    uint32_t nic_read_number;
    uint32_t mem_cache_num;
    uint32_t rpc_number;

    bool listen_shadow;
    bool udp_enable;
    bool low_power_mode;

    /* Affinity of application threads (runtime/app_affinity.c). */
    bool app_bind_numa;                      /* run-to-wakeup: waiting threads on their stack's node */
    struct lstack_cpu_mask app_exclude_cpus; /* ...less these CPUs */
    bool main_thread_affinity;               /* the main thread on the stack CPUs */

    int log_level; /* syslog LOG_ERR .. LOG_DEBUG */
    char unix_prefix[LSTACK_CONF_STR_MAX];
    bool use_ltran;                         /* share a port through ltran */
    char ltran_socket[LSTACK_CONF_STR_MAX]; /* its unix socket */
};

/* Where the config is read from: $LSTACK_CONF_PATH if set and non-empty,
 * else LSTACK_CONF_DEFAULT_PATH. Returns a pointer into the environment or a
 * literal; never NULL. Any thread. */
const char *lstack_conf_path(void);

/* Fill *out with every key's default. Cannot fail. */
void lstack_conf_defaults(struct lstack_conf *out);

/* Parse the file at path into *out.
 * Returns 0 on success. On failure returns -1, writes a NUL-terminated
 * report into err (one line per problem, truncated with "..." if errlen is
 * too small) and leaves *out freed (safe to lstack_conf_free again) and
 * holding every key's default except init_fail: that is the policy the file
 * gave on a line that parsed (an init_fail setting that passed its checks;
 * after a syntax error, one on the lines before the error, which must parse
 * on their own), so that a caller can apply `init_fail = "exit"` to the
 * failure itself. A file that cannot be read, or a syntax error in an
 * @include'd file, gives the default ("kernel").
 * Pure: touches only its arguments. Any thread. */
int lstack_conf_load(const char *path, struct lstack_conf *out, char *err, size_t errlen);

/* Same as lstack_conf_load on an in-memory text; name is used in messages. */
int lstack_conf_parse(const char *text, const char *name, struct lstack_conf *out, char *err,
                      size_t errlen);

/* The init_fail policy that applies, given env (the text of
 * $LSTACK_INIT_FAIL, NULL or "" when unset) and file (the file's init_fail,
 * also after a failed load: see lstack_conf_load). A set variable wins:
 * *policy is its value, *from_env true. Returns 0, or -1 when env is not a
 * value init_fail takes ("kernel", "exit"): then *policy = file, *from_env
 * false, and err holds one line naming the variable, the value and what is
 * allowed (the caller treats it as a configuration error). Pure. */
int lstack_init_fail_resolve(const char *env, enum lstack_init_fail file,
                             enum lstack_init_fail *policy, bool *from_env, char *err,
                             size_t errlen);

/* Release what *c owns. Idempotent. */
void lstack_conf_free(struct lstack_conf *c);

/* Write the effective config (every key, defaults included) in lstack.conf
 * syntax into buf. Returns the length it needed (like snprintf). */
int lstack_conf_format(const struct lstack_conf *c, char *buf, size_t len);

#endif
