/*
 * flow_dir.h - the TCP 4-tuples one stack holds, readable by the other
 * stacks of its group without its lock: which stack a segment that reached
 * the wrong queue belongs to (stack_peers.c), without reading another
 * stack's lwIP.
 *
 * One writer (the stack that owns the directory, under its own lock: lwIP
 * tells it each connection entering or leaving its PCB hash), any number of
 * readers on other threads. Open addressing with linear probing and
 * backward-shift deletion (no tombstones) over slots of two 64-bit words
 * written and read with atomics; a sequence counter (odd while the writer
 * changes the table) makes a reader that overlapped a change look again, so
 * that an entry moved by a deletion is never missed. The table doubles when
 * half full; a replaced table is kept until flow_dir_free (a reader may
 * still be in it), which is at most the size of the last one.
 */
#ifndef LSTACK_FLOW_DIR_H
#define LSTACK_FLOW_DIR_H

#include <stdbool.h>
#include <stdint.h>

#include "filter/frame_flow.h"

struct flow_table;

struct flow_dir {
    struct flow_table *t;   /* the table (atomic pointer) */
    struct flow_table *old; /* tables replaced by a growth, kept for readers */
    uint32_t seq;           /* odd while the writer changes the table (atomic) */
    uint32_t entries;       /* the writer's */
    uint64_t full;          /* entries the table could not take (out of memory) */
};

/* An empty directory sized for about hint entries. 0, or -1 (ENOMEM). */
int flow_dir_init(struct flow_dir *d, uint32_t hint);
void flow_dir_free(struct flow_dir *d);

/* A key is a frame's 4-tuple as frame_flow_classify gives it (addresses in
 * network byte order, ports in host order: lwIP's pcb fields). */

/* The writer: add k (already absent), remove k (if present). */
void flow_dir_add(struct flow_dir *d, const struct frame_flow_tuple *k);
void flow_dir_del(struct flow_dir *d, const struct frame_flow_tuple *k);

/* Any thread: is k in d now? (An entry added or removed at this instant
 * may be seen either way.) */
bool flow_dir_has(const struct flow_dir *d, const struct frame_flow_tuple *k);

#endif
