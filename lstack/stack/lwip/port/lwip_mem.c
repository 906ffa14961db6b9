/*
 * lwip_mem.c - the memory of one lwIP copy: lwIP's heap (mem_malloc) and,
 * with MEMP_MEM_MALLOC, its pools, served from one arena in size classes.
 *
 * Which thread: the stack's owner only (lwIP's SYS_LIGHTWEIGHT_PROT is 0).
 * Design: docs/design.md#lwip-allocates-from-a-per-stack-arena
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include "common/sanitizer.h"
#include "lwip/arch.h"

#include "port/lwip_port.h"
#include "port/lwip_port_priv.h"

/*
 * The arena is one reservation of address space (mmap, MAP_NORESERVE) of
 * the size lstack_lwip_configure gives (from tcp_conn_count and the buffer
 * keys, lstack/stack/stack.c): pages are only used when a block is first
 * carved from it. A block is carved once and then recycled through its
 * class's free list, so after warm-up an allocation is a list pop and a
 * free a push; nothing calls libc's malloc. When the arena is used up an
 * allocation fails (lwIP answers ERR_MEM and retries later, as with its own
 * pools) and is counted.
 *
 * Each block has a 16-byte header holding its class (so free needs no
 * size); classes step by about 1.5x from 64 B to 128 KiB (lwIP's largest
 * request is a 64 KiB pbuf plus headers).
 *
 * Under the sanitizers (common/sanitizer.h): a free block, and the part of
 * a live block past the size asked for, are poisoned (ASan reports lwIP's
 * use after free and overflow inside the arena as for heap memory), and
 * the carved part of the arena is a LeakSanitizer root region, registered
 * ROOT_CHUNK at a time (it holds the only pointers to the sockets and
 * frames lwIP keeps; the whole reservation would cost a scan of untouched
 * pages at every leak check).
 */

#define HDR 16u
#define DEFAULT_LIMIT (64u << 20) /* if a copy is used before it is configured */
#define ROOT_CHUNK (1u << 20)      /* LeakSanitizer root region step */

static const uint32_t class_size[] = {
    64, 96, 128, 192, 256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096, 6144, 8192,
    12288, 16384, 24576, 32768, 49152, 65536, 98304, 131072,
};
#define NCLASS (sizeof(class_size) / sizeof(class_size[0]))

struct block_hdr {
    uint32_t cls;
    uint32_t magic;
    struct block_hdr *next; /* while on a free list */
};
_Static_assert(sizeof(struct block_hdr) == HDR, "block header size");
#define MAGIC_USED 0x6c6d656du /* "lmem" */
#define MAGIC_FREE 0x66726565u

static struct {
    char *base, *next, *end;
    char *rooted; /* the LeakSanitizer root region ends here (sanitizer builds) */
    struct block_hdr *free[NCLASS];
    struct lstack_lwip_mem_stats st;
} A;

int lstack_port_mem_init(size_t limit)
{
    if (A.base != NULL)
        return A.next == A.base ? 0 : -EINVAL; /* once, before any allocation */
    if (limit < (1u << 20))
        return -EINVAL;
    limit = (limit + 4095) & ~(size_t)4095;
    void *p = mmap(NULL, limit, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
        return -ENOMEM;
    A.base = A.next = A.rooted = p;
    A.end = A.base + limit;
    A.st.arena_limit = limit;
    return 0;
}

/* The first class that holds need, NCLASS if none: the classes are 2^k and
 * 1.5 x 2^k from 64 up (class 2(k-6) is 2^k, class 2(k-6)+1 is 1.5 x 2^k),
 * so the class follows from need's highest bit (a search of the table took
 * five rounds per allocation, several allocations per request). */
_Static_assert(NCLASS == 23 && 64 == 1u << 6, "class_of assumes the table 64, 96, ... 131072");
static unsigned class_of(size_t need)
{
    if (need <= 64)
        return 0;
    unsigned k = 63u - (unsigned)__builtin_clzll((unsigned long long)need - 1); /* 2^k < need <= 2^(k+1) */
    unsigned c = need <= (size_t)3 << (k - 1) ? 2 * (k - 6) + 1 : 2 * (k - 5);
    return c < NCLASS ? c : (unsigned)NCLASS;
}

/* Block h of class c, taken for a request of size bytes: marked, counted,
 * its bytes past size poisoned (sanitizer builds); returns the payload. */
static inline void *hand_out(struct block_hdr *h, size_t size, unsigned c)
{
    h->magic = MAGIC_USED;
    A.st.allocs++;
    A.st.in_use += class_size[c];
    LSTACK_UNPOISON((char *)h + HDR, size);
    LSTACK_POISON((char *)h + HDR + size, class_size[c] - HDR - size);
    return (char *)h + HDR;
}

/* A block of class c carved from the arena (its free list was empty). */
static void *__attribute__((noinline)) carve(size_t size, unsigned c)
{
    if (A.base == NULL && lstack_port_mem_init(DEFAULT_LIMIT) != 0)
        return NULL;
    if ((size_t)(A.end - A.next) < class_size[c]) {
        A.st.fails++;
        return NULL;
    }
    struct block_hdr *h = (struct block_hdr *)A.next;
    A.next += class_size[c];
    A.st.arena_used += class_size[c];
    while (LSTACK_ASAN && A.rooted < A.next) {
        size_t n = (size_t)(A.end - A.rooted) < ROOT_CHUNK ? (size_t)(A.end - A.rooted) : ROOT_CHUNK;
        LSTACK_LSAN_ROOT(A.rooted, n);
        A.rooted += n;
    }
    h->cls = c; /* for good: a block stays in its class */
    return hand_out(h, size, c);
}

/* The common case is a pop from the class's free list (after warm-up,
 * every allocation): the block's class is already in its header (set
 * when it was carved), and an arena not yet set up has empty lists, so
 * the set-up check is carve()'s alone. */
void *lstack_lwip_malloc(size_t size)
{
    unsigned c = class_of(size + HDR);
    if (c >= NCLASS) {
        A.st.fails++;
        return NULL;
    }
    struct block_hdr *h = A.free[c];
    if (h == NULL)
        return carve(size, c);
    A.free[c] = h->next;
    return hand_out(h, size, c);
}

void *lstack_lwip_calloc(size_t n, size_t size)
{
    if (size != 0 && n > (size_t)-1 / size)
        return NULL;
    void *p = lstack_lwip_malloc(n * size);
    if (p != NULL)
        memset(p, 0, n * size);
    return p;
}

void lstack_lwip_free(void *p)
{
    if (p == NULL)
        return;
    struct block_hdr *h = (struct block_hdr *)((char *)p - HDR);
    if ((char *)h < A.base || (char *)h >= A.next || h->magic != MAGIC_USED || h->cls >= NCLASS) {
        lstack_lwip_assert_fail("lstack_lwip_free: not a live block of this copy's arena", __FILE__, __LINE__);
    }
    unsigned c = h->cls;
    h->magic = MAGIC_FREE;
    LSTACK_POISON(p, class_size[c] - HDR);
    h->next = A.free[c];
    A.free[c] = h;
    A.st.frees++;
    A.st.in_use -= class_size[c];
}

void lstack_lwip_mem_stats(struct lstack_lwip_mem_stats *out)
{
    *out = A.st;
}
