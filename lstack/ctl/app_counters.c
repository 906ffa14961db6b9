/*
 * app_counters.c - the process's application counters (see app_counters.h).
 * Lives in lstack's common library so that every layer that counts (posix,
 * event) and every program that reports (the preload, lstackd, the unit
 * tests) links the same one.
 */
#include "ctl/app_counters.h"

struct app_counters app_cnt;
