/*
 * app_counters.c - the process's count of calls on kernel fds (see
 * app_counters.h). Lives in lstack's common library so that the layer that
 * counts (posix) and every program that reports (the preload, lstackd, the
 * unit tests) link the same one.
 */
#include "ctl/app_counters.h"

uint64_t app_kernel_calls;
