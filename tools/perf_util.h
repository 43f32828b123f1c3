/* SPDX-License-Identifier: LGPL-2.1-or-later OR MIT */
/*
 * What lchan_perf and lchan_msg_perf share besides their options: the
 * clocks, CPU time (the process's and the poller pool's for its channel),
 * percentiles, the data pattern, and the result rows in text and JSON.
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

#include "json.h"
#include "measure.h"
#include "perf_opts.h"

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
/* calibrate() into *@tsc_per_us; returns @timeout_s in ticks. */
uint64_t perf_calibrate(unsigned timeout_s, double *tsc_per_us);
/* User plus system time of this process, in seconds. */
double cpu_secs(void);
/* Byte @j of a test message of @size bytes. */
uint8_t pattern(size_t size, size_t j);

struct lchan_ctx;

/* A channel's sysfs counter @name, or -1. */
long long perf_chan_stat(unsigned id, const char *name);
/* A channel's device name into @buf ("?" when unknown). */
void perf_chan_device(unsigned id, char *buf, size_t len);
/*
 * Where a channel that makes no progress stands, on stderr: its rings as
 * the library sees them and every attribute of its sysfs directory.
 */
void perf_dump_chan(const char *tool, const struct lchan_chan *chan);
/*
 * Open the context, and set up its poller in --mode poller: 0, or the
 * exit status after a message (3 when lchan is not loaded, cli.h).
 */
int perf_open_ctx(struct lchan_ctx *ctx, const struct perf_opts *o,
		  const char *tool);

/* One size of a run: latency figures or bandwidth, and what it cost. */
struct perf_result {
	size_t size;
	unsigned long iters;
	double t_min, t_max, t_median, t_avg, t_stdev, t_p99, t_p999;
	double secs;		/* timed part */
	double gbps, mbps, mpps;
	double cpu_us;		/* user + system of this process, per op */
	double poller_cpu_us;	/* the poller pool for the channel, per op; <0: none */
	double enters;		/* ENTER ioctls per op; <0: unknown */
	const char *verify;	/* "ok", "fail", "off" */
};

/* The latency figures of @n samples of @t ticks, each times @scale (us). */
void perf_lat_stats(struct perf_result *res, uint64_t *t, unsigned long n,
		    double scale);

/* Around the timed part of a test. */
struct perf_meter {
	uint64_t t0;
	uint64_t ns0;
	double cpu0;
	double poller0;
	long long enters0;
	int poller_chan;		/* channel id, or -1: not poller mode */
};

/*
 * @poller_chan: the id of a poller-mode channel whose share of the poller
 * pool's time is counted, or -1.  @enters: its ENTER count now (<0: unknown).
 */
void perf_meter_start(struct perf_meter *m, int poller_chan, long long enters);
/*
 * Fill @res's time, CPU costs and (@bw) bandwidth for res->iters
 * operations of res->size bytes; the run recalibrates *@tsc_per_us.
 */
void perf_meter_stop(struct perf_meter *m, struct perf_result *res, bool bw,
		     double *tsc_per_us);
/* Then ENTERs per operation from the count after the run (<0: unknown). */
void perf_meter_enters(const struct perf_meter *m, struct perf_result *res,
		       long long enters);

/* "doorbell" or "poller". */
const char *perf_mode_name(const struct perf_opts *o);
/* Open the object; the members both tools start with. */
void perf_json_head(struct json *j, const struct perf_opts *o,
		    const char *tool, const char *test);
/* The channel's device, local and remote address. */
void perf_json_chan(struct json *j, const char *device,
		    const struct lchan_chan *chan);

/* Listen as -a and -p say, and say where (unless --json); 0 or <0. */
struct lchan_listener;
int perf_listen(struct lchan_ctx *ctx, const struct perf_opts *o,
		const char *tool, struct lchan_listener *lst);

/*
 * The text header: its first lines, the tool's own, then these last ones
 * (@latency: what a latency is, NULL for bandwidth) with the columns.
 */
void perf_print_title(const struct perf_opts *o, const char *tool,
		      const char *test, const char *device, unsigned chan_id);
void perf_print_columns(const struct perf_opts *o, const char *latency);

/* The text row; the JSON "results" array, which closes the object. */
void perf_print_row(const struct perf_result *r, bool lat);

/* A client's results, one a size of its -S list. */
struct perf_results {
	struct perf_result *res;
	unsigned n;		/* the sizes done */
	size_t max;		/* the largest size */
	bool bad;		/* a data check failed */
};

/* Room for every size of @o, and its largest; 0 or -ENOMEM. */
int perf_results_init(struct perf_results *rs, const struct perf_opts *o);
/* res[n] is done: count it, and its text row unless --json. */
void perf_results_add(struct perf_results *rs, const struct perf_opts *o,
		      bool lat);
void perf_json_results(struct json *j, const struct perf_result *res,
		       unsigned n, bool lat);

#endif /* LCHAN_PERF_UTIL_H */
