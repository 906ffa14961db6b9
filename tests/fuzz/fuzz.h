/*
 * fuzz.h - the entry points every fuzz target defines (libFuzzer's
 * interface), called by libFuzzer in a -Dfuzz=true build and by replay.c
 * (each input once) in any other build.
 */
#ifndef LSTACK_FUZZ_H
#define LSTACK_FUZZ_H

#include <stddef.h>
#include <stdint.h>

/* Once, before the first input. Returns 0; a target that cannot set up
 * aborts (there is nothing to fuzz). */
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* One input. Returns 0. A broken property aborts (a finding). */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif
