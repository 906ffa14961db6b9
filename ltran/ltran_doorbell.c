/*
 * ltran_doorbell.c - a wake-up for ltran's idle sleep when a frame comes to
 * the port, on an af_packet port (the interface is the port's
 * dev_info.if_index; af_xdp's frames are redirected to their socket before
 * the kernel's packet taps see them, so not there): a packet socket on that
 * interface whose filter drops everything while ltran works and keeps one byte of each frame while
 * it sleeps; its readability rings ltran awake. ltran never takes frames
 * from it (the PMD does); it only empties it after a sleep.
 *
 * Owns the socket, its two filters and the arm / disarm / drain steps.
 * Design: docs/design.md#ltran-sleeps-on-a-packet-socket-doorbell
 */
#include <errno.h>
#include <linux/filter.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "ltran.h"

/*
 * The race of a frame that reaches the port's queue between ltran's last
 * poll and the arming is closed by the caller: it polls the port once more
 * after arming (ltran_wake.c).
 */

static struct sock_filter drop_all[] = {{BPF_RET | BPF_K, 0, 0, 0}};
static struct sock_filter keep_byte[] = {{BPF_RET | BPF_K, 0, 0, 1}};

static int set_filter(int fd, struct sock_filter *f)
{
    struct sock_fprog p = {.len = 1, .filter = f};
    return setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &p, sizeof(p));
}

static void drain(int fd)
{
    char c;
    while (recv(fd, &c, 1, MSG_DONTWAIT | MSG_TRUNC) >= 0)
        ;
}

int ltran_doorbell_open(unsigned if_index)
{
    if (if_index == 0)
        return -ENODEV;
    int fd = socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, 0); /* no frames before bind */
    if (fd < 0)
        return -errno;
    int one = 1, small = 4096;
    struct sockaddr_ll a = {.sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL), .sll_ifindex = (int)if_index};
    if (set_filter(fd, drop_all) != 0 ||
        setsockopt(fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof(one)) != 0 ||
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small)) != 0 ||
        bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
        int e = errno;
        close(fd);
        return -e;
    }
    drain(fd);
    return fd;
}

int ltran_doorbell_arm(int fd)
{
    return set_filter(fd, keep_byte) == 0 ? 0 : -errno;
}

void ltran_doorbell_disarm(int fd)
{
    set_filter(fd, drop_all);
    drain(fd);
}
