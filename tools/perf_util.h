/* SPDX-License-Identifier: LGPL-2.1-or-later OR MIT */
/*
 * What lchan_perf and lchan_msg_perf measure with, the same way: clocks,
 * CPU time (the process's and its kernel poller thread's), percentiles,
 * JSON numbers and the test data pattern.
 */
#ifndef LCHAN_PERF_UTIL_H
#define LCHAN_PERF_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

static inline uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * The cycle counter, as perftest uses: no system call.  (Under emulation
 * the guest's clocksource may be one that clock_gettime() has to enter the
 * kernel for, which would show up as system calls per operation.)
 */
static inline uint64_t ticks(void)
{
#if defined(__x86_64__) || defined(__i386__)
	return __rdtsc();
#else
	return now_ns();
#endif
}

/* Ticks per microsecond, over a short sleep. */
double calibrate(void);
/* User plus system time of this process, in seconds. */
double cpu_secs(void);
/* This process's kernel poller thread, or -1 when there is none. */
int find_poller(void);
/* User plus system time of task @pid in seconds, or -1. */
double task_cpu_secs(int pid);
/* qsort() order of uint64_t. */
int cmp_u64(const void *a, const void *b);
/* perftest's percentile: the value at ceil(q * n) - 1 of the sorted set. */
double pct(const uint64_t *v, unsigned long n, double q, double scale);
/* "key": v, with null for what is not a finite number. */
void json_num(const char *key, double v, bool comma);
/* Sizes "64,4k,1M" into @sizes (at most @max, each 1 B to 1 GiB). */
int parse_sizes(const char *arg, size_t *sizes, unsigned max, unsigned *n);
/* A number up to @max, or a message and exit status 2. */
unsigned long parse_ulong(const char *s, unsigned long max);
/* Byte @j of a test message of @size bytes. */
uint8_t pattern(size_t size, size_t j);

#endif /* LCHAN_PERF_UTIL_H */
