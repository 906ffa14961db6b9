/*
 * pool.c - the stack's hugepage mbuf pool (one per port), laid out for
 * the port that will use it.
 *
 * nic_pool_check_umem verifies the property the af_xdp PMD relies on, so a
 * DPDK that lays pools out differently fails at start-up with a reason
 * instead of losing frames.
 * Design: docs/design.md#dense-mbuf-pools-only-where-the-pmd-needs-them
 */
#include <stdio.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_mbuf.h>
#include <rte_mbuf_pool_ops.h>
#include <rte_mempool.h>

#include "nic/nic_priv.h"

/*
 * Two layouts:
 *  - page-bound (rte_pktmbuf_pool_create): no object straddles a page, so
 *    a frame's memory is IOVA-contiguous on any port that DMAs (a real NIC
 *    with IOVA as PA). The pool is then several memory chunks, and each
 *    page's tail is left unused.
 *  - dense (RTE_MEMPOOL_F_NO_IOVA_CONTIG: one virtually contiguous chunk,
 *    objects back to back, straddling pages): for net_af_xdp, which does
 *    no DMA but registers the pool with the kernel as an AF_XDP umem.
 *    DPDK 22.11's PMD sizes that umem as populated_size x object size from
 *    the first chunk's start. A page-bound pool is longer than that (the
 *    unused page tails), so its last objects (about 20 of a 76,800-mbuf
 *    pool) lie past the umem's end: the kernel skips every frame sent from
 *    one as an invalid descriptor (it never reaches the wire and the mbuf
 *    is never completed: leaked), and when the pool's ring handed out a run
 *    of them, every ACK and retransmission of a connection was lost for up
 *    to a minute.
 */

/* A pool whose objects sit back to back in one virtually contiguous chunk.
 * NULL with rte_errno set. */
static struct rte_mempool *dense_pool(const char *name, unsigned n, unsigned cache, uint16_t priv,
                                      uint16_t data_room, int socket)
{
    struct rte_mempool *mp = rte_mempool_create_empty(name, n, sizeof(struct rte_mbuf) + priv + data_room,
                                                      cache, sizeof(struct rte_pktmbuf_pool_private),
                                                      socket, RTE_MEMPOOL_F_NO_IOVA_CONTIG);
    if (mp == NULL)
        return NULL;
    int rc = rte_mempool_set_ops_byname(mp, rte_mbuf_best_mempool_ops(), NULL);
    if (rc != 0) {
        rte_mempool_free(mp);
        rte_errno = -rc;
        return NULL;
    }
    struct rte_pktmbuf_pool_private pp = {.mbuf_data_room_size = data_room, .mbuf_priv_size = priv};
    rte_pktmbuf_pool_init(mp, &pp);
    rc = rte_mempool_populate_default(mp);
    if (rc < 0 || mp->populated_size != n) {
        rte_mempool_free(mp);
        rte_errno = rc < 0 ? -rc : ENOMEM;
        return NULL;
    }
    rte_mempool_obj_iter(mp, rte_pktmbuf_init, NULL);
    return mp;
}

struct rte_mempool *nic_pool_create(const char *name, unsigned n, unsigned cache, uint16_t priv, int socket,
                                    bool dense)
{
    if (dense)
        return dense_pool(name, n, cache, priv, RTE_MBUF_DEFAULT_BUF_SIZE, socket);
    return rte_pktmbuf_pool_create(name, n, cache, priv, RTE_MBUF_DEFAULT_BUF_SIZE, socket);
}

int nic_pool_check_umem(const struct rte_mempool *mp, char *err, size_t errlen)
{
    const struct rte_mempool_memhdr *first = STAILQ_FIRST(&mp->mem_list);
    if (first == NULL) {
        snprintf(err, errlen, "mbuf pool %s has no memory", mp->name);
        return -1;
    }
    uintptr_t start = (uintptr_t)first->addr;
    uint64_t span = (uint64_t)mp->populated_size *
                    rte_mempool_calc_obj_size(mp->elt_size, mp->flags, NULL);
    const struct rte_mempool_memhdr *h;
    STAILQ_FOREACH(h, &mp->mem_list, next) {
        uintptr_t a = (uintptr_t)h->addr;
        if (a < start || a + h->len > start + span) {
            snprintf(err, errlen,
                     "mbuf pool %s is not one dense area (%u chunks; %zu bytes at +%lu, umem %lu bytes): "
                     "net_af_xdp would lose frames sent from its last mbufs",
                     mp->name, mp->nb_mem_chunks, h->len, (unsigned long)(a - start), (unsigned long)span);
            return -1;
        }
    }
    return 0;
}
