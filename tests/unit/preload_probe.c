/*
 * preload_probe.c - a tiny TCP client+server on 127.0.0.1, run under the
 * preload by test_preload.sh: whatever lstack decides, loopback traffic must
 * work exactly as on the kernel. Exit 0 when one byte made the round trip.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int main(void)
{
    int l = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(a);
    if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(l, 1) != 0 ||
        getsockname(l, (struct sockaddr *)&a, &len) != 0) {
        perror("probe: listener");
        return 1;
    }
    int c = socket(AF_INET, SOCK_STREAM, 0);
    if (c < 0 || connect(c, (struct sockaddr *)&a, sizeof(a)) != 0) {
        perror("probe: connect");
        return 1;
    }
    int s = accept(l, NULL, NULL);
    char ch = 0;
    if (s < 0 || write(c, "x", 1) != 1 || read(s, &ch, 1) != 1 || ch != 'x') {
        perror("probe: transfer");
        return 1;
    }
    close(s);
    close(c);
    close(l);
    printf("probe: loopback ok\n");
    return 0;
}
