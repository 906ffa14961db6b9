/*
 * test_pkt_fanout.c - the af_packet PMD's PACKET_FANOUT request loses
 * PACKET_FANOUT_FLAG_DEFRAG while the stack's EAL starts, and only then
 * (common/pkt_fanout.h). TAP output.
 */
#include <linux/if_packet.h>
#include <pthread.h>
#include <string.h>
#include <sys/socket.h>

#include "common/pkt_fanout.h"

#include "tap.h"

#ifndef SOL_PACKET
#define SOL_PACKET 263
#endif

/* What DPDK 22.11's af_packet PMD asks for: group id, HASH | DEFRAG | ROLLOVER. */
static const int pmd_arg = 0x1234 | ((PACKET_FANOUT_HASH | PACKET_FANOUT_FLAG_DEFRAG | PACKET_FANOUT_FLAG_ROLLOVER) << 16);

static int passed(int level, int name, const int *val, socklen_t len)
{
    int scratch = 0;
    const int *out = pkt_fanout_fix(level, name, val, len, &scratch);
    return out == val ? *val : out == &scratch ? scratch : -1;
}

static void *other_thread(void *arg)
{
    (void)arg;
    return (void *)(long)(passed(SOL_PACKET, PACKET_FANOUT, &pmd_arg, sizeof(int)) == pmd_arg);
}

int main(void)
{
    check(passed(SOL_PACKET, PACKET_FANOUT, &pmd_arg, sizeof(int)) == pmd_arg,
          "window closed: the PMD's request passes as it is");

    pkt_fanout_nodefrag(true);
    int got = passed(SOL_PACKET, PACKET_FANOUT, &pmd_arg, sizeof(int));
    check(!(got & (PACKET_FANOUT_FLAG_DEFRAG << 16)), "window open: FLAG_DEFRAG is cleared");
    check(got == (pmd_arg & ~(PACKET_FANOUT_FLAG_DEFRAG << 16)),
          "window open: group id, mode and the other flags are kept");
    int plain = 0x1234 | (PACKET_FANOUT_HASH << 16);
    check(passed(SOL_PACKET, PACKET_FANOUT, &plain, sizeof(int)) == plain,
          "window open: a request without FLAG_DEFRAG passes as it is");
    int one = 1;
    check(passed(SOL_PACKET, PACKET_LOSS, &one, sizeof(int)) == 1, "window open: other packet options pass");
    check(passed(SOL_SOCKET, SO_REUSEADDR, &one, sizeof(int)) == 1, "window open: other levels pass");
    int scratch = 0;
    check(pkt_fanout_fix(SOL_PACKET, PACKET_FANOUT, &pmd_arg, 2, &scratch) == &pmd_arg,
          "window open: a request of the wrong size is left for the kernel to refuse");
    pthread_t t;
    void *ok = NULL;
    pthread_create(&t, NULL, other_thread, NULL);
    pthread_join(t, &ok);
    check(ok != NULL, "window open on this thread only: another thread's request passes as it is");

    pkt_fanout_nodefrag(false);
    check(passed(SOL_PACKET, PACKET_FANOUT, &pmd_arg, sizeof(int)) == pmd_arg,
          "window closed again: the request passes as it is");
    return tap_done();
}
