/*
 * test_event.c - unit tests of the event layer (lstack/event/) over fake
 * stack sockets: epoll (test_event_epoll.c), poll, select and the blocking
 * socket wait (test_event_poll.c). The runtime, the fd-to-socket lookup and
 * libc are fakes (fake_runtime.c); the fd table is the real one. TAP output.
 * test_event_tcp.c runs over real stack sockets.
 */
#include "test_event.h"

int main(void)
{
    test_epoll();
    test_poll_select();
    test_wake();
    return test_done();
}
