/* SPDX-License-Identifier: LGPL-2.1-or-later OR MIT */
/*
 * The tools' one clock and one percentile, so that every program times and
 * ranks alike.
 */
#ifndef LCHAN_MEASURE_H
#define LCHAN_MEASURE_H

#include <stdint.h>
#include <time.h>

static inline uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline double now_s(void)
{
	return (double)now_ns() / 1e9;
}

/* qsort() order of uint64_t. */
static inline int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * perftest's percentile: the value at ceil(q * n) - 1 of the sorted set
 * @v of @n (> 0) values, times @scale.
 */
static inline double pct(const uint64_t *v, unsigned long n, double q,
			 double scale)
{
	unsigned long i = (unsigned long)(q * (double)n);

	if ((double)i < q * (double)n)
		i++;
	if (i)
		i--;
	if (i >= n)
		i = n - 1;
	return (double)v[i] * scale;
}

#endif /* LCHAN_MEASURE_H */
