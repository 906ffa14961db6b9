/*
 * replay.c - the main of a fuzz target in a build without libFuzzer: runs
 * each input once (every regular file of each directory argument, in name
 * order, and every file argument), one TAP line per input. This is how the
 * seed corpus (tests/fuzz/corpus/) runs in every build, the sanitizer pass
 * included, and how a reproducer from a fuzzing run is checked after a fix:
 *     build/tests/fuzz/fuzz_frames crash-1234abcd
 * An input that breaks a property aborts the process (the test fails);
 * "ok" means the input ran to the end.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"
#include "../unit/tap.h"

#define INPUT_MAX (1 << 20)

static void run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        printf("# %s: %s\n", path, strerror(errno));
        check(0, path);
        return;
    }
    uint8_t *buf = malloc(INPUT_MAX);
    size_t n = buf != NULL ? fread(buf, 1, INPUT_MAX, f) : 0;
    int bad = buf == NULL || ferror(f);
    fclose(f);
    if (!bad)
        LLVMFuzzerTestOneInput(buf, n);
    free(buf);
    check(!bad, path);
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
    return strcmp((*a)->d_name, (*b)->d_name);
}

static void run_dir(const char *dir)
{
    struct dirent **names;
    int n = scandir(dir, &names, NULL, by_name);
    if (n < 0) {
        printf("# %s: %s\n", dir, strerror(errno));
        check(0, dir);
        return;
    }
    for (int i = 0; i < n; i++) {
        char path[4096];
        struct stat st;
        snprintf(path, sizeof(path), "%s/%s", dir, names[i]->d_name);
        if (stat(path, &st) == 0 && S_ISREG(st.st_mode))
            run_file(path);
        free(names[i]);
    }
    free(names);
}

int main(int argc, char **argv)
{
    LLVMFuzzerInitialize(&argc, &argv);
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode))
            run_dir(argv[i]);
        else
            run_file(argv[i]);
    }
    return tap_done();
}
