/*
 * errmap.c - lwIP's err_t to errno: the one table of the sock layer.
 *
 * Used for the results of lwIP calls (tcp_bind, tcp_connect, tcp_write...).
 * The err callback's codes describe how a connection ended and are mapped
 * by tcp_sock.c with the socket's state (ERR_RST in SYN_SENT means
 * ECONNREFUSED, ERR_ABRT from lwIP's timers means ETIMEDOUT, ...).
 * Design: docs/design.md#lwip-errors-map-to-errno-in-one-table-of-lstacks
 */
#include <errno.h>

#include "sock/lsock_lwip.h"

static const int err_table[] = {
    [-ERR_OK] = 0,
    [-ERR_MEM] = ENOMEM,
    [-ERR_BUF] = ENOBUFS,
    [-ERR_TIMEOUT] = ETIMEDOUT,
    [-ERR_RTE] = EHOSTUNREACH,
    [-ERR_INPROGRESS] = EINPROGRESS,
    [-ERR_VAL] = EINVAL,
    [-ERR_WOULDBLOCK] = EWOULDBLOCK,
    [-ERR_USE] = EADDRINUSE,
    [-ERR_ALREADY] = EALREADY,
    [-ERR_ISCONN] = EISCONN,
    [-ERR_CONN] = ENOTCONN,
    [-ERR_IF] = ENETDOWN,
    [-ERR_ABRT] = ECONNABORTED,
    [-ERR_RST] = ECONNRESET,
    [-ERR_CLSD] = ENOTCONN,
    [-ERR_ARG] = EINVAL,
};

int lsock_errno(err_t err)
{
    int i = -(int)err;
    if (i < 0 || i >= (int)(sizeof(err_table) / sizeof(err_table[0])))
        return -EIO;
    return -err_table[i];
}
