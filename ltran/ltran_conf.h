/*
 * ltran_conf.h - ltran.conf (libconfig syntax) -> struct ltran_conf. Pure:
 * text in, struct or a report of every bad value (file:line: key: why) out.
 * No DPDK. Keys: ltran_keys.def.
 */
#ifndef LTRAN_CONF_H
#define LTRAN_CONF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define LTRAN_MAX_EAL_ARGS 48
#define LTRAN_DEFAULT_CONF "/etc/gazelle/ltran.conf"

struct ltran_conf {
    char args_buf[1024];             /* forward_kit_args, NUL between words */
    int argc;
    char *args[LTRAN_MAX_EAL_ARGS];  /* point into args_buf */
    char file_prefix[32];
    char socket_path[108];
    bool has_mac;
    uint8_t mac[6];
    int max_clients, nb_mbufs, ring_size, max_conns, rx_desc, tx_desc, low_power;
};

/* Parse text (name: the file name for messages). Returns 0 and *out, or -1
 * with every problem in err, one per line, each "name:line: key: ...". */
int ltran_conf_parse(const char *text, const char *name, struct ltran_conf *out, char *err, size_t errlen);

/* Read and parse the file at path. Returns 0 or -1 (err says why). */
int ltran_conf_load(const char *path, struct ltran_conf *out, char *err, size_t errlen);

/* Print the key table (name, default, meaning) to f. */
void ltran_conf_print_keys(FILE *f);

#endif
