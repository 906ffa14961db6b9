/*
 * ctl_tcp_state.c - TCP state names for the control protocol (see
 * ctl_conns.h). Pure: stackctl checks a --state argument with the same
 * table the server filters with. The numbers are lwIP's enum tcp_state
 * (also Linux's order minus one; sock/pcb_opts.c checks lstack's copy).
 */
#include <stddef.h>
#include <strings.h>

#include "ctl/ctl_conns.h"

static const char *const names[] = {
    "CLOSED", "LISTEN", "SYN_SENT", "SYN_RCVD", "ESTABLISHED", "FIN_WAIT_1",
    "FIN_WAIT_2", "CLOSE_WAIT", "CLOSING", "LAST_ACK", "TIME_WAIT",
};

enum { NSTATES = sizeof(names) / sizeof(names[0]) };

const char *ctl_tcp_state_name(int state)
{
    return state >= 0 && state < NSTATES ? names[state] : "?";
}

/* a and b equal ignoring case, with '-' and '_' the same. */
static int same(const char *a, const char *b)
{
    for (; *a != '\0' && *b != '\0'; a++, b++) {
        char x = *a == '-' ? '_' : *a, y = *b == '-' ? '_' : *b;
        if (strncasecmp(&x, &y, 1) != 0)
            return 0;
    }
    return *a == *b;
}

int ctl_tcp_state_parse(const char *name)
{
    for (int i = 0; i < NSTATES; i++)
        if (same(name, names[i]))
            return i;
    return -1;
}
