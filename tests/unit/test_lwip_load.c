/*
 * test_lwip_load.c - each stack's lwIP copy is private: two copies loaded in
 * one process share no state. No DPDK, no root. TAP output.
 */
#include <dlfcn.h>
#include <stdio.h>
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

    a.lwip_init();
    b.lwip_init();
    struct netif **list_a = dlsym(a.handle, "netif_list");
    struct netif **list_b = dlsym(b.handle, "netif_list");
    check(list_a != NULL && list_b != NULL && list_a != list_b, "the copies have their own globals");

    struct netif nif;
    memset(&nif, 0, sizeof(nif));
    ip4_addr_t addr, mask, gw;
    IP4_ADDR(&addr, 198, 18, 0, 2);
    IP4_ADDR(&mask, 255, 255, 255, 0);
    IP4_ADDR(&gw, 198, 18, 0, 1);
    check(a.netif_add(&nif, &addr, &mask, &gw, NULL, dummy_init, dummy_input) == &nif,
          "a netif is added to the first copy");
    check(list_a != NULL && *list_a == &nif, "the first copy lists it");
    check(list_b != NULL && *list_b == NULL, "the second copy does not see it");
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

    return tap_done();
}
