/*
 * ctl_peer.h - one conversation of the control socket, as a state machine
 * the control thread's poll loop drives (ctl_server.c): the peer check,
 * hello, reading the request, dispatch, sending the reply a piece at a
 * time. Nothing here blocks: the socket is non-blocking and each call does
 * what the socket allows now, so one slow or silent peer never holds up
 * another. Control thread only.
 */
#ifndef LSTACK_CTL_PEER_H
#define LSTACK_CTL_PEER_H

#include <stdbool.h>
#include <stdint.h>

/* A peer has this long, from its accept, to send its request line... */
#define CTL_RECV_TIMEOUT_MS 2000
/* ...and must take some of the reply within this long of the last bytes it
 * took, or it is dropped. */
#define CTL_SEND_TIMEOUT_MS 5000

struct ctl_peer;

/* Start a conversation on fd (accepted, non-blocking): check the peer
 * (SO_PEERCRED) and queue the hello, or the refusal. The peer owns fd from
 * now on. Returns NULL if out of memory (fd is then still the caller's). */
struct ctl_peer *ctl_peer_open(int fd, uint64_t now_us);

int ctl_peer_fd(const struct ctl_peer *p);

/* What to poll fd for now (POLLIN, POLLOUT or both). */
short ctl_peer_events(const struct ctl_peer *p);

/* When the peer is dropped if nothing happens before (monotonic us). */
uint64_t ctl_peer_deadline(const struct ctl_peer *p);

/* Act on poll's revents (0 is fine: only the deadline is checked). At most
 * one piece of a long reply is produced per call (one lock hold). Returns
 * true while the conversation goes on; false when it is over (reply sent,
 * peer gone or too slow): the caller then calls ctl_peer_close. */
bool ctl_peer_step(struct ctl_peer *p, short revents, uint64_t now_us);

/* End the conversation: close fd, free everything. */
void ctl_peer_close(struct ctl_peer *p);

/* Tell a peer that will not be served why, in one error record sent
 * without waiting (it fits an empty socket buffer), instead of the hello.
 * The caller closes fd. */
void ctl_peer_refuse(int fd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
