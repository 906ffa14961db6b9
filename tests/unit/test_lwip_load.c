/*
 * test_lwip_load.c - each stack's lwIP copy is private: two copies loaded in
 * one process share no state. No DPDK, no root. TAP output.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stack/lwip_load.h"

#include "tap.h"

static err_t dummy_init(struct netif *nif)
{
    nif->mtu = 1500;
    return ERR_OK;
}

static err_t dummy_input(struct pbuf *p, struct netif *nif)
{
    (void)p;
    (void)nif;
    return ERR_OK;
}

int main(void)
{
    struct lwip_api a, b;
    char err[512];

    check(lwip_load(&a, NULL, "test-a", err, sizeof(err)) == 0, "first copy loads");
    check(lwip_load(&b, NULL, "test-b", err, sizeof(err)) == 0, "second copy loads");
    check(a.lwip_init != b.lwip_init, "the copies have their own code");

    /* Each copy is configured on its own (window, buffer, arena, PCB hash). */
    struct lstack_lwip_conf ca = {.rcv_wnd = 65536, .snd_buf = 65536, .mss = 1460, .mem_limit = 8u << 20,
                                  .pcb_hint = 10};
    struct lstack_lwip_conf cb = {.rcv_wnd = 1u << 20, .snd_buf = 1u << 20, .mss = 1460, .mem_limit = 16u << 20,
                                  .pcb_hint = 5000};
    struct lstack_lwip_limits la, lb;
    check(a.lstack_lwip_configure(&ca, &la) == 0 && b.lstack_lwip_configure(&cb, &lb) == 0,
          "each copy takes its own configuration");
    checkf(la.snd_buf == 65536 && lb.snd_buf == (1u << 20) && la.rcv_wnd == 65536 && lb.rcv_wnd == (1u << 20),
          "the copies keep their own window and buffer (a %u/%u, b %u/%u)", la.rcv_wnd, la.snd_buf, lb.rcv_wnd,
          lb.snd_buf);
    struct lstack_lwip_conf bad = ca;
    bad.rcv_wnd = LSTACK_TCP_WND_MAX + 1;
    struct lwip_api d;
    check(lwip_load(&d, NULL, "test-bad", err, sizeof(err)) == 0 && d.lstack_lwip_configure(&bad, &la) == -EINVAL,
          "a window past 0xffff << scale is refused with -EINVAL");
    lwip_unload(&d);

    a.lwip_init();
    b.lwip_init();
    struct netif **def_a = dlsym(a.handle, "netif_default");
    struct netif **def_b = dlsym(b.handle, "netif_default");
    check(def_a != NULL && def_b != NULL && def_a != def_b, "the copies have their own globals");

    struct netif nif;
    memset(&nif, 0, sizeof(nif));
    ip4_addr_t addr, mask, gw;
    IP4_ADDR(&addr, 198, 18, 0, 2);
    IP4_ADDR(&mask, 255, 255, 255, 0);
    IP4_ADDR(&gw, 198, 18, 0, 1);
    check(a.netif_add(&nif, &addr, &mask, &gw, NULL, dummy_init, dummy_input) == &nif,
          "a netif is added to the first copy");
    a.netif_set_default(&nif);
    check(def_a != NULL && *def_a == &nif, "the first copy has it");
    check(def_b != NULL && *def_b == NULL, "the second copy does not see it");

    /* Memory: a PCB taken from the first copy comes from its arena only. */
    struct lstack_lwip_mem_stats ma0, mb0, ma1, mb1;
    a.lstack_lwip_mem_stats(&ma0);
    b.lstack_lwip_mem_stats(&mb0);
    struct tcp_pcb *pcb = a.tcp_new_ip_type(IPADDR_TYPE_V4);
    a.lstack_lwip_mem_stats(&ma1);
    b.lstack_lwip_mem_stats(&mb1);
    checkf(pcb != NULL && ma1.allocs == ma0.allocs + 1 && mb1.allocs == mb0.allocs,
          "an allocation in one copy is counted in its arena only (a %llu -> %llu, b %llu -> %llu)",
          (unsigned long long)ma0.allocs, (unsigned long long)ma1.allocs, (unsigned long long)mb0.allocs,
          (unsigned long long)mb1.allocs);
    check(ma1.arena_limit == (8u << 20) && mb1.arena_limit == (16u << 20), "each arena has its own size");
    if (pcb != NULL)
        a.tcp_abort(pcb);
    struct lstack_lwip_hash_stats ha, hb;
    a.lstack_lwip_hash_stats(&ha);
    b.lstack_lwip_hash_stats(&hb);
    checkf(ha.slots == 1024 && hb.slots == 16384, "each copy sizes its own PCB hash (a %llu, b %llu slots)",
          (unsigned long long)ha.slots, (unsigned long long)hb.slots);
    a.netif_remove(&nif);

    lwip_unload(&a);
    lwip_unload(&b);
    check(a.handle == NULL && a.lwip_init == NULL, "unload clears the table");

    struct lwip_api c;
    int rc = lwip_load(&c, "/nonexistent/liblwip.so.0", "test-c", err, sizeof(err));
    check(rc == -1 && strstr(err, "/nonexistent/liblwip.so.0") != NULL,
          "a missing library fails with its path in the message");
    rc = lwip_load(&c, "/etc/hostname", "test-d", err, sizeof(err));
    check(rc == -1 && strstr(err, "dlopen") != NULL, "a file that is not a library fails with the loader's reason");

    /* path NULL: $LSTACK_LWIP_LIB first, then the library search path of
     * the object holding the loader (this program: its build RUNPATH) */
    setenv("LSTACK_LWIP_LIB", "/nonexistent/env/liblstack_lwip.so", 1);
    rc = lwip_load(&c, NULL, "test-e", err, sizeof(err));
    checkf(rc == -1 && strstr(err, "/nonexistent/env/liblstack_lwip.so") != NULL,
           "LSTACK_LWIP_LIB names the library that is loaded (%s)", err);
    unsetenv("LSTACK_LWIP_LIB");
    rc = lwip_load(&c, NULL, "test-f", err, sizeof(err));
    checkf(rc == 0, "without it, the library along the program's RUNPATH loads (%s)", rc == 0 ? "ok" : err);
    if (rc == 0)
        lwip_unload(&c);

    return tap_done();
}
