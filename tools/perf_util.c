// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/* Measuring and reporting shared by lchan_perf and lchan_msg_perf. */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "cli.h"
#include "liblchan.h"
#include "perf_util.h"

double calibrate(void)
{
	struct timespec ten_ms = { 0, 10000000 };
	uint64_t t0 = ticks(), n0 = now_ns(), t1, n1;

	nanosleep(&ten_ms, NULL);
	t1 = ticks();
	n1 = now_ns();
	if (n1 <= n0 || t1 <= t0)
		return 1000.0;
	return (double)(t1 - t0) * 1000.0 / (double)(n1 - n0);
}

uint64_t perf_calibrate(unsigned timeout_s, double *tsc_per_us)
{
	*tsc_per_us = calibrate();
	return (uint64_t)(*tsc_per_us * 1e6 * timeout_s);
}

double cpu_secs(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
	       ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

/*
 * The poller pool's CPU time spent for channel @id, in seconds (its
 * poller_ns in sysfs), or -1 for none.
 */
static double poller_secs(int id)
{
	long long ns = id < 0 ? -1 : perf_chan_stat((unsigned)id, "poller_ns");

	return ns < 0 ? -1 : (double)ns / 1e9;
}

uint8_t pattern(size_t size, size_t j)
{
	return (uint8_t)(j * 131u + size * 7u + 11u);
}

void perf_lat_stats(struct perf_result *res, uint64_t *t, unsigned long n,
		    double scale)
{
	double sum = 0, sq = 0;
	unsigned long i;

	qsort(t, n, sizeof(*t), cmp_u64);
	for (i = 0; i < n; i++) {
		double v = (double)t[i] * scale;

		sum += v;
		sq += v * v;
	}
	res->t_min = (double)t[0] * scale;
	res->t_max = (double)t[n - 1] * scale;
	res->t_median = (double)t[n / 2] * scale;
	res->t_avg = sum / (double)n;
	res->t_stdev = sqrt(fmax(0, sq / (double)n - res->t_avg * res->t_avg));
	res->t_p99 = pct(t, n, 0.99, scale);
	res->t_p999 = pct(t, n, 0.999, scale);
}

void perf_meter_start(struct perf_meter *m, int poller_chan, long long enters)
{
	m->poller_chan = poller_chan;
	m->poller0 = poller_secs(poller_chan);
	m->enters0 = enters;
	m->cpu0 = cpu_secs();
	m->ns0 = now_ns();
	m->t0 = ticks();
}

void perf_meter_stop(struct perf_meter *m, struct perf_result *res, bool bw,
		     double *tsc_per_us)
{
	uint64_t t1 = ticks(), ns1 = now_ns();
	double cpu1 = cpu_secs(), poller1, n = (double)res->iters;

	res->secs = (double)(ns1 - m->ns0) / 1e9;
	/* The run itself is the best calibration of the cycle counter. */
	if (ns1 - m->ns0 > 1000000 && t1 > m->t0)
		*tsc_per_us = (double)(t1 - m->t0) * 1000.0 /
			      (double)(ns1 - m->ns0);
	res->cpu_us = (cpu1 - m->cpu0) * 1e6 / n;
	poller1 = poller_secs(m->poller_chan);
	res->poller_cpu_us = m->poller0 >= 0 && poller1 >= 0 ?
			     (poller1 - m->poller0) * 1e6 / n : -1;
	if (bw && res->secs > 0) {
		res->mpps = n / res->secs / 1e6;
		res->mbps = n * (double)res->size / res->secs / 1e6;
		res->gbps = res->mbps * 8 / 1e3;
	}
}

void perf_meter_enters(const struct perf_meter *m, struct perf_result *res,
		       long long enters)
{
	res->enters = m->enters0 >= 0 && enters >= 0 ?
		      (double)(enters - m->enters0) / (double)res->iters : -1;
}

int perf_listen(struct lchan_ctx *ctx, const struct perf_opts *o,
		const char *tool, struct lchan_listener *lst)
{
	int ret = lchan_listen(ctx, o->host, o->port, 1, 0, lst);

	if (ret) {
		fprintf(stderr, "%s: listen: %s\n", tool, strerror(-ret));
		return ret;
	}
	if (!o->json) {
		char name[80];

		lchan_addr_format(&lst->addr, name, sizeof(name));
		fprintf(stderr, "%s: listening on %s (%s)\n", tool, name,
			perf_mode_name(o));
	}
	return 0;
}

static const char perf_line[] =
	"---------------------------------------------------------------------------------------";

void perf_print_title(const struct perf_opts *o, const char *tool,
		      const char *test, const char *device, unsigned chan_id)
{
	printf("%s\n", perf_line);
	printf("                    %s %s\n", tool, test);
	printf(" Device         : %s (lchan channel %u)\n", device, chan_id);
	printf(" Submission     : %s\n", perf_mode_name(o));
}

void perf_print_columns(const struct perf_opts *o, const char *latency)
{
	printf(" Data check     : %s\n", o->verify ? "on" : "off");
	if (latency)
		printf(" Latency        : %s\n", latency);
	printf("%s\n", perf_line);
	if (latency)
		printf(" #bytes #iterations  t_min[usec]  t_max[usec]  t_median[usec]  t_avg[usec]  t_stdev[usec]  99%%[usec]  99.9%%[usec]  cpu[usec/op]\n");
	else
		printf(" #bytes #iterations  BW[Gb/s]  BW[MB/s]  MsgRate[Mpps]  cpu[usec/op]\n");
	fflush(stdout);
}

int perf_results_init(struct perf_results *rs, const struct perf_opts *o)
{
	unsigned i;

	*rs = (struct perf_results){ .res = calloc(o->nsizes, sizeof(*rs->res)) };
	if (!rs->res)
		return -ENOMEM;
	for (i = 0; i < o->nsizes; i++)
		if (o->sizes[i] > rs->max)
			rs->max = o->sizes[i];
	return 0;
}

void perf_results_add(struct perf_results *rs, const struct perf_opts *o,
		      bool lat)
{
	const struct perf_result *r = &rs->res[rs->n++];

	if (!strcmp(r->verify, "fail"))
		rs->bad = true;
	if (!o->json)
		perf_print_row(r, lat);
}

void perf_print_row(const struct perf_result *r, bool lat)
{
	if (lat)
		printf(" %-6zu %-11lu  %-11.2f  %-11.2f  %-14.2f  %-11.2f  %-13.2f  %-9.2f  %-11.2f  %.2f\n",
		       r->size, r->iters, r->t_min, r->t_max, r->t_median,
		       r->t_avg, r->t_stdev, r->t_p99, r->t_p999, r->cpu_us);
	else
		printf(" %-6zu %-11lu  %-8.3f  %-8.2f  %-13.4f  %.2f\n",
		       r->size, r->iters, r->gbps, r->mbps, r->mpps, r->cpu_us);
	if (!strcmp(r->verify, "fail"))
		printf(" ^ data check FAILED\n");
	fflush(stdout);
}

const char *perf_mode_name(const struct perf_opts *o)
{
	return o->poller ? "poller" : o->direct ? "direct" : "doorbell";
}

void perf_json_head(struct json *j, const struct perf_opts *o,
		    const char *tool, const char *test)
{
	json_open(j, NULL, '{');
	json_str(j, "tool", tool);
	json_str(j, "test", test);
	json_str(j, "mode", perf_mode_name(o));
	json_str(j, "completions", o->event ? "event" : "busy");
}

void perf_json_chan(struct json *j, const char *device,
		    const struct lchan_chan *chan)
{
	char local[80] = "", remote[80] = "";

	lchan_addr_format(&chan->info.local, local, sizeof(local));
	lchan_addr_format(&chan->info.remote, remote, sizeof(remote));
	json_str(j, "device", device);
	json_str(j, "local", local);
	json_str(j, "remote", remote);
}

void perf_json_results(struct json *j, const struct perf_result *res,
		       unsigned n, bool lat)
{
	unsigned i;

	json_open(j, "results", '[');
	for (i = 0; i < n; i++) {
		const struct perf_result *r = &res[i];

		json_open(j, NULL, '{');
		json_uint(j, "size", r->size);
		json_uint(j, "iters", r->iters);
		if (lat) {
			json_num(j, "t_min_us", r->t_min);
			json_num(j, "t_max_us", r->t_max);
			json_num(j, "t_median_us", r->t_median);
			json_num(j, "t_avg_us", r->t_avg);
			json_num(j, "t_stdev_us", r->t_stdev);
			json_num(j, "t_p99_us", r->t_p99);
			json_num(j, "t_p999_us", r->t_p999);
		} else {
			json_num(j, "bw_gbps", r->gbps);
			json_num(j, "bw_MBps", r->mbps);
			json_num(j, "msg_rate_mpps", r->mpps);
		}
		json_num(j, "secs", r->secs);
		json_num(j, "cpu_us_per_op", r->cpu_us);
		json_num(j, "poller_cpu_us_per_op",
			 r->poller_cpu_us >= 0 ? r->poller_cpu_us : NAN);
		json_num(j, "enters_per_op",
			 r->enters >= 0 ? r->enters : NAN);
		json_str(j, "verify", r->verify);
		json_close(j);
	}
	json_close(j);
	json_close(j);
}

/* A channel's sysfs attribute @name, open for reading, or NULL. */
static FILE *chan_attr_open(unsigned id, const char *name)
{
	char path[96];

	snprintf(path, sizeof(path), "/sys/kernel/lchan/channels/%u/%s", id,
		 name);
	return fopen(path, "r");
}

long long perf_chan_stat(unsigned id, const char *name)
{
	FILE *f = chan_attr_open(id, name);
	long long v = -1;

	if (!f)
		return -1;
	if (fscanf(f, "%lld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

void perf_dump_chan(const char *tool, const struct lchan_chan *chan)
{
	char dir[64], path[320], val[96];
	struct dirent *de;
	DIR *d;

	fprintf(stderr, "%s: channel %u: sq tail %u khead %u of %u, rq tail %u "
		"khead %u of %u, cq head %u ktail %u of %u\n", tool,
		chan->info.id, chan->sq.tail, lchan_load_acquire(chan->sq.khead),
		chan->sq.entries, chan->rq.tail,
		lchan_load_acquire(chan->rq.khead), chan->rq.entries,
		chan->cq.head, lchan_load_acquire(chan->cq.ktail),
		chan->cq.entries);
	snprintf(dir, sizeof(dir), "/sys/kernel/lchan/channels/%u",
		 chan->info.id);
	d = opendir(dir);
	if (!d)
		return;
	fprintf(stderr, "%s: channel %u:", tool, chan->info.id);
	while ((de = readdir(d))) {
		FILE *f;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(val, sizeof(val), f)) {
			val[strcspn(val, "\n")] = 0;
			fprintf(stderr, " %s=%s", de->d_name, val);
		}
		fclose(f);
	}
	closedir(d);
	fputc('\n', stderr);
}

void perf_chan_device(unsigned id, char *buf, size_t len)
{
	FILE *f = chan_attr_open(id, "device");

	snprintf(buf, len, "?");
	if (!f)
		return;
	if (fgets(buf, (int)len, f))
		buf[strcspn(buf, "\n")] = 0;
	fclose(f);
}

int perf_open_ctx(struct lchan_ctx *ctx, const struct perf_opts *o,
		  const char *tool)
{
	int ret = lchan_ctx_open(ctx);

	if (ret)
		return cli_open_failed(LCHAN_DEVICE_PATH, ret);
	if (o->poller) {
		ret = lchan_ctx_setup_poller(ctx, o->idle_ms, o->poller_cpu,
					     NULL);
		if (ret) {
			fprintf(stderr, "%s: poller mode (LCHAN_IOC_CTX_SETUP): %s\n",
				tool, strerror(-ret));
			return CLI_EXIT_FAIL;
		}
	}
	return 0;
}
