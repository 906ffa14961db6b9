/*
 * proc_shape SHAPE MS - a process in a given shape for test_tb_procs.sh
 * (testbed.sh's tb_running / tb_wait_gone):
 *   leader MS  the main thread exits (pthread_exit: a zombie leader) while a
 *              second thread runs MS milliseconds more, then ends the
 *              process with exit status 7 (exit_group: the way a process
 *              with a stack thread ends, its leader a zombie until the last
 *              thread is gone)
 *   zombie MS  forks a child that exits at once and is never reaped;
 *              prints the child's pid, lives MS milliseconds, exits 0
 * Exit status 2 on a usage error.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static long ms;

static void sleep_ms(long n)
{
    struct timespec ts = {.tv_sec = n / 1000, .tv_nsec = (n % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

static void *late_exit(void *arg)
{
    (void)arg;
    sleep_ms(ms);
    exit(7);
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: proc_shape leader|zombie MS\n");
        return 2;
    }
    ms = atol(argv[2]);
    if (strcmp(argv[1], "leader") == 0) {
        pthread_t t;
        if (pthread_create(&t, NULL, late_exit, NULL) != 0) {
            fprintf(stderr, "proc_shape: pthread_create failed\n");
            return 2;
        }
        pthread_exit(NULL);
    }
    if (strcmp(argv[1], "zombie") == 0) {
        pid_t c = fork();
        if (c < 0) {
            perror("proc_shape: fork");
            return 2;
        }
        if (c == 0)
            _exit(0);
        printf("%d\n", (int)c);
        fflush(stdout);
        sleep_ms(ms);
        return 0;
    }
    fprintf(stderr, "proc_shape: unknown shape '%s'\n", argv[1]);
    return 2;
}
