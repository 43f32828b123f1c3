// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * lchan_conntime: how fast lchan sets channels up and tears them down, the
 * way librdmacm's cmtime times rdma_cm.
 *
 * Server: lchan_conntime -s -a ADDR [-p PORT] [-n N] [-P PAR]
 * Client: lchan_conntime -c ADDR [-p PORT] [-n N] [-P PAR] [--steps] [--json]
 *
 * The client runs two phases against one server:
 *  - sequential: N connects one after the other (each timed from the call
 *    to a mapped, connected channel), all kept open, then N closes one
 *    after the other (each timed);
 *  - parallel: PAR threads connect N channels together, PAR in flight at
 *    any time; the wall time gives channels per second; then all close
 *    together.
 * The server accepts with PAR threads and closes each channel when its
 * peer has gone; it ends after 2 x N channels.  With --steps (root, tracefs)
 * the client splits the sequential phase by the kernel's tracepoints
 * (lchan_chan_step, lchan_cm_event): the medians of each step.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <unistd.h>

#include "cli.h"
#include "liblchan.h"
#include "perf_util.h"

#define TRACEFS		"/sys/kernel/tracing"

struct ct_opts {
	bool server;
	const char *addr;
	const char *port;
	unsigned n;
	unsigned par;
	bool steps;
	bool json;
	unsigned timeout_ms;
	unsigned entries;	/* SQ and RQ of each channel; 0: the default */
};

static void ct_usage(void)
{
	printf("usage: lchan_conntime -s -a ADDR [-p PORT] [-n N] [-P PAR] [-e E]\n"
	       "       lchan_conntime -c ADDR [-p PORT] [-n N] [-P PAR] [-e E] [--steps] [--json]\n"
	       "  -s, --server        accept 2 x N channels, close each when its peer has\n"
	       "  -c, --client ADDR   connect to the server at ADDR and time it\n"
	       "  -a, --addr ADDR     the address: where the server listens, the server a\n"
	       "                      client connects to (as -c ADDR)\n"
	       "  -p, --port PORT     port, 1..65535 (default 18515)\n"
	       "  -n, --conns N       channels per phase (default 100)\n"
	       "  -P, --parallel PAR  connects in flight in the parallel phase (default 8)\n"
	       "  -e, --entries E     SQ and RQ entries of each channel (default: lchan's)\n"
	       "      --steps         split the sequential phase by tracepoints (root)\n"
	       "      --json          one JSON object instead of the text\n"
	       "  -t, --timeout MS    per connect (default 10000)\n"
	       "  -h, --help          this text\n"
	       "Exit status: 0 done, 1 a connect failed, 2 usage error,\n"
	       "3 the lchan module is not loaded.\n");
}

/* Let a process hold @want more descriptors than it has open now. */
static int ct_raise_nofile(unsigned want)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl))
		return -errno;
	if (rl.rlim_cur >= want + 64)
		return 0;
	rl.rlim_cur = want + 64;
	if (rl.rlim_max < rl.rlim_cur)
		rl.rlim_max = rl.rlim_cur;	/* root only */
	return setrlimit(RLIMIT_NOFILE, &rl) ? -errno : 0;
}

/* ------------------------------------------------------------- server */

struct ct_server {
	struct lchan_ctx ctx;
	struct lchan_listener lst;
	int epfd;
	struct lchan_opts opts;		/* of every accept */
	unsigned total;			/* channels to serve */
	unsigned accepted;		/* atomic */
	unsigned closed;		/* reaper only */
	unsigned failed;		/* accepts the peer gave up; atomic */
	int err;			/* first accept error, atomic */
};

static void *ct_accept_thread(void *arg)
{
	struct ct_server *s = arg;

	for (;;) {
		struct epoll_event ev = { .events = EPOLLRDHUP };
		struct lchan_chan *chan;
		int ret;

		if (__atomic_fetch_add(&s->accepted, 1, __ATOMIC_RELAXED) >=
		    s->total)
			return NULL;
		chan = calloc(1, sizeof(*chan));
		if (!chan) {
			__atomic_store_n(&s->err, -ENOMEM, __ATOMIC_RELAXED);
			return NULL;
		}
		ret = lchan_accept(&s->lst, &s->opts, chan);
		if (ret) {
			/* The peer gave up on this one: it counts as served. */
			fprintf(stderr, "lchan_conntime: accept: %s\n",
				strerror(-ret));
			free(chan);
			__atomic_fetch_add(&s->failed, 1, __ATOMIC_RELAXED);
			if (ret != -ECONNRESET && ret != -ETIMEDOUT &&
			    ret != -ECONNREFUSED) {
				__atomic_store_n(&s->err, ret, __ATOMIC_RELAXED);
				return NULL;
			}
			continue;
		}
		ev.data.ptr = chan;
		if (epoll_ctl(s->epfd, EPOLL_CTL_ADD, chan->fd, &ev)) {
			__atomic_store_n(&s->err, -errno, __ATOMIC_RELAXED);
			lchan_chan_close(chan);
			free(chan);
			return NULL;
		}
	}
}

static int ct_run_server(const struct ct_opts *o)
{
	struct ct_server s = {
		.opts = { .sq_entries = o->entries, .rq_entries = o->entries },
		.total = 2 * o->n,
	};
	struct epoll_event evs[64];
	pthread_t *thr;
	unsigned i, started = 0;
	int ret, err;

	ret = ct_raise_nofile(2 * o->n);
	if (ret)
		fprintf(stderr, "lchan_conntime: RLIMIT_NOFILE: %s\n",
			strerror(-ret));
	ret = lchan_ctx_open(&s.ctx);
	if (ret)
		return cli_open_failed(LCHAN_DEVICE_PATH, ret);
	ret = lchan_listen(&s.ctx, o->addr, o->port, 1024, 0, &s.lst);
	if (ret) {
		fprintf(stderr, "lchan_conntime: listen: %s\n", strerror(-ret));
		return 1;
	}
	if (!o->json)
		printf("lchan_conntime: listening on %s port %s\n", o->addr,
		       o->port);
	fflush(stdout);
	s.epfd = epoll_create1(EPOLL_CLOEXEC);
	thr = calloc(o->par, sizeof(*thr));
	if (s.epfd < 0 || !thr)
		return 1;
	for (i = 0; i < o->par; i++)
		if (!pthread_create(&thr[i], NULL, ct_accept_thread, &s))
			started++;
	/* Close each channel once its peer has gone. */
	while (s.closed + __atomic_load_n(&s.failed, __ATOMIC_RELAXED) <
	       s.total) {
		int n = epoll_wait(s.epfd, evs, 64, 1000);

		err = __atomic_load_n(&s.err, __ATOMIC_RELAXED);
		if (err) {
			fprintf(stderr, "lchan_conntime: server: %s\n",
				strerror(-err));
			return 1;
		}
		for (i = 0; i < (unsigned)(n > 0 ? n : 0); i++) {
			struct lchan_chan *chan = evs[i].data.ptr;

			epoll_ctl(s.epfd, EPOLL_CTL_DEL, chan->fd, NULL);
			lchan_chan_close(chan);
			free(chan);
			s.closed++;
		}
	}
	for (i = 0; i < started; i++)
		pthread_join(thr[i], NULL);
	free(thr);
	close(s.epfd);
	lchan_listener_close(&s.lst);
	lchan_ctx_close(&s.ctx);
	return 0;
}

/* ------------------------------------------------------------- client */

struct ct_client {
	const struct ct_opts *o;
	struct lchan_ctx ctx;
	struct lchan_chan *chans;	/* n */
	uint64_t *conn_ns, *close_ns;	/* n, sequential phase */
	unsigned next;			/* parallel phase: next index, atomic */
	int err;			/* first error, atomic */
};

static int ct_connect(struct ct_client *c, unsigned i)
{
	struct lchan_opts opts = {
		.timeout_ms = c->o->timeout_ms,
		.sq_entries = c->o->entries,
		.rq_entries = c->o->entries,
		.flags = LCHAN_OPEN_EXCHANGE,	/* the peer is lchan_conntime */
	};
	int ret;

	ret = lchan_connect(&c->ctx, c->o->addr, c->o->port, &opts,
			    &c->chans[i]);
	if (ret) {
		c->chans[i].fd = -1;
		fprintf(stderr, "lchan_conntime: connect %u: %s\n", i,
			strerror(-ret));
	}
	return ret;
}

static void *ct_connect_thread(void *arg)
{
	struct ct_client *c = arg;
	unsigned i;
	int ret;

	while ((i = __atomic_fetch_add(&c->next, 1, __ATOMIC_RELAXED)) <
	       c->o->n) {
		ret = ct_connect(c, i);
		if (ret) {
			__atomic_store_n(&c->err, ret, __ATOMIC_RELAXED);
			return NULL;
		}
	}
	return NULL;
}

static void *ct_close_thread(void *arg)
{
	struct ct_client *c = arg;
	unsigned i;

	while ((i = __atomic_fetch_add(&c->next, 1, __ATOMIC_RELAXED)) <
	       c->o->n)
		lchan_chan_close(&c->chans[i]);
	return NULL;
}

/* Run @fn on PAR threads over the channels; the wall time in ns. */
static uint64_t ct_parallel(struct ct_client *c, void *(*fn)(void *))
{
	pthread_t *thr = calloc(c->o->par, sizeof(*thr));
	unsigned i, started = 0;
	uint64_t t0;

	if (!thr)
		return 0;
	c->next = 0;
	t0 = now_ns();
	for (i = 0; i < c->o->par; i++)
		if (!pthread_create(&thr[i], NULL, fn, c))
			started++;
	for (i = 0; i < started; i++)
		pthread_join(thr[i], NULL);
	free(thr);
	return started ? now_ns() - t0 : 0;
}

static int ct_write(const char *path, const char *val)
{
	FILE *f = fopen(path, "w");
	int ret;

	if (!f)
		return -errno;
	ret = fputs(val, f) < 0 ? -EIO : 0;
	if (fclose(f) && !ret)
		ret = -errno;
	return ret;
}

/* Trace the events the steps are made of; 0 or <0 (then no steps). */
static int ct_trace_start(void)
{
	static const char *const events[] = {
		TRACEFS "/events/lchan/lchan_chan_step/enable",
		TRACEFS "/events/lchan/lchan_cm_event/enable",
	};
	unsigned i;
	int ret;

	if (access(TRACEFS "/trace", F_OK))
		mount("tracefs", TRACEFS, "tracefs", 0, NULL);
	ret = ct_write(TRACEFS "/tracing_on", "0");
	if (!ret)
		ret = ct_write(TRACEFS "/trace", "");
	/* Room for every event of the phase (KiB per CPU). */
	if (!ret)
		ret = ct_write(TRACEFS "/buffer_size_kb", "8192");
	for (i = 0; !ret && i < 2; i++)
		ret = ct_write(events[i], "1");
	if (!ret)
		ret = ct_write(TRACEFS "/tracing_on", "1");
	return ret;
}

static void ct_trace_stop(void)
{
	ct_write(TRACEFS "/tracing_on", "0");
	ct_write(TRACEFS "/events/lchan/lchan_chan_step/enable", "0");
	ct_write(TRACEFS "/events/lchan/lchan_cm_event/enable", "0");
}

/*
 * The marks of one channel, in trace order: the kernel's steps and the cm
 * events between them.  A mark is its time in us; 0 when not seen.
 */
enum ct_mark {
	CT_ALLOC, CT_ADDR, CT_ROUTE, CT_BIND, CT_QP, CT_EST, CT_FD,
	CT_CLOSE, CT_DISC, CT_DRAIN, CT_DESTROY, CT_NMARKS
};

static const char *const ct_mark_tags[CT_NMARKS] = {
	"step=alloc", "event=ADDR_RESOLVED",
	"event=ROUTE_RESOLVED", "step=bind", "step=qp_ready",
	"event=ESTABLISHED", "step=fd", "step=close",
	"step=disconnected", "step=drained", "step=destroyed",
};

/* The steps reported: from one mark to the next. */
static const struct {
	const char *name;
	enum ct_mark from, to;
} ct_steps[] = {
	{ "resolve_addr", CT_ALLOC, CT_ADDR },	/* with create id */
	{ "resolve_route", CT_ADDR, CT_ROUTE },
	{ "wake", CT_ROUTE, CT_BIND },		/* the ioctl runs again */
	{ "create_qp", CT_BIND, CT_QP },	/* PD, CQ, QP, rings */
	{ "connect", CT_QP, CT_EST },		/* to ESTABLISHED */
	{ "open", CT_EST, CT_FD },		/* iWARP's first SEND, file */
	{ "disconnect", CT_CLOSE, CT_DISC },
	{ "drain", CT_DISC, CT_DRAIN },
	{ "destroy", CT_DRAIN, CT_DESTROY },	/* QP, CQ, id, rings */
};
#define CT_NSTEPS	(sizeof(ct_steps) / sizeof(ct_steps[0]))

/*
 * Medians of each step over the client's channels, from the trace buffer.
 * Channel ids are reused only after a channel's end, so the first mark of
 * each kind after the buffer was cleared is the client's own.
 */
static int ct_trace_steps(struct ct_client *c, double *median)
{
	unsigned n = c->o->n, i, k, maxid = 0;
	double (*marks)[CT_NMARKS];
	uint64_t *v;
	char line[512];
	int *slot;
	FILE *f;

	for (i = 0; i < n; i++)
		if (c->chans[i].info.id > maxid)
			maxid = c->chans[i].info.id;
	slot = malloc((maxid + 1) * sizeof(*slot));
	marks = calloc(n, sizeof(*marks));
	v = calloc(n, sizeof(*v));
	f = fopen(TRACEFS "/trace", "r");
	if (!slot || !marks || !v || !f) {
		free(slot);
		free(marks);
		free(v);
		if (f)
			fclose(f);
		return -ENOMEM;
	}
	for (i = 0; i <= maxid; i++)
		slot[i] = -1;
	for (i = 0; i < n; i++)
		slot[c->chans[i].info.id] = (int)i;
	while (fgets(line, sizeof(line), f)) {
		char *p = strstr(line, ": lchan_"), *q;
		unsigned long id;
		double ts;

		if (!p || line[0] == '#')
			continue;
		/* "... 1234.567890: lchan_...: chan=ID ..." */
		q = p;
		while (q > line && q[-1] != ' ')
			q--;
		ts = strtod(q, NULL) * 1e6;
		q = strstr(p, " chan=");
		if (!q)
			continue;
		id = strtoul(q + 6, NULL, 10);
		if (id > maxid || slot[id] < 0)
			continue;
		for (k = 0; k < CT_NMARKS; k++)
			if (strstr(q, ct_mark_tags[k]) &&
			    !marks[slot[id]][k])
				marks[slot[id]][k] = ts;
	}
	fclose(f);
	for (k = 0; k < CT_NSTEPS; k++) {
		unsigned m = 0;

		for (i = 0; i < n; i++) {
			double a = marks[i][ct_steps[k].from];
			double b = marks[i][ct_steps[k].to];

			if (a && b && b >= a)
				v[m++] = (uint64_t)((b - a) * 1000.0);
		}
		qsort(v, m, sizeof(*v), cmp_u64);
		median[k] = m ? pct(v, m, 0.5, 1e-3) : NAN;
	}
	free(slot);
	free(marks);
	free(v);
	return 0;
}

static void ct_stats(uint64_t *ns, unsigned n, double *med, double *p99,
		     double *avg)
{
	double sum = 0;
	unsigned i;

	for (i = 0; i < n; i++)
		sum += (double)ns[i];
	qsort(ns, n, sizeof(*ns), cmp_u64);
	*med = pct(ns, n, 0.5, 1e-3);
	*p99 = pct(ns, n, 0.99, 1e-3);
	*avg = sum / n / 1e3;
}

static int ct_run_client(const struct ct_opts *o)
{
	struct ct_client c = { .o = o };
	double med, p99, avg, cmed, cp99, cavg, steps[CT_NSTEPS];
	uint64_t par_conn_ns, par_close_ns, t0;
	char device[64] = "?";
	bool have_steps = false;
	unsigned i, k;
	int ret;

	ret = ct_raise_nofile(o->n);
	if (ret)
		fprintf(stderr, "lchan_conntime: RLIMIT_NOFILE: %s\n",
			strerror(-ret));
	c.chans = calloc(o->n, sizeof(*c.chans));
	c.conn_ns = calloc(o->n, sizeof(*c.conn_ns));
	c.close_ns = calloc(o->n, sizeof(*c.close_ns));
	if (!c.chans || !c.conn_ns || !c.close_ns)
		return 1;
	ret = lchan_ctx_open(&c.ctx);
	if (ret)
		return cli_open_failed(LCHAN_DEVICE_PATH, ret);
	if (o->steps && ct_trace_start()) {
		fprintf(stderr, "lchan_conntime: no tracefs: no steps\n");
		ct_trace_stop();
	} else if (o->steps) {
		have_steps = true;
	}

	/* Sequential: one connect at a time, then one close at a time. */
	for (i = 0; i < o->n; i++) {
		t0 = now_ns();
		if (ct_connect(&c, i))
			return 1;
		c.conn_ns[i] = now_ns() - t0;
	}
	perf_chan_device(c.chans[0].info.id, device, sizeof(device));
	for (i = 0; i < o->n; i++) {
		t0 = now_ns();
		lchan_chan_close(&c.chans[i]);
		c.close_ns[i] = now_ns() - t0;
	}
	if (have_steps) {
		ct_write(TRACEFS "/tracing_on", "0");
		if (ct_trace_steps(&c, steps))
			have_steps = false;
		ct_trace_stop();
	}
	ct_stats(c.conn_ns, o->n, &med, &p99, &avg);
	ct_stats(c.close_ns, o->n, &cmed, &cp99, &cavg);

	/* Parallel: PAR connects in flight, then every close at once. */
	par_conn_ns = ct_parallel(&c, ct_connect_thread);
	ret = __atomic_load_n(&c.err, __ATOMIC_RELAXED);
	if (ret || !par_conn_ns) {
		fprintf(stderr, "lchan_conntime: parallel connect: %s\n",
			strerror(ret ? -ret : EAGAIN));
		return 1;
	}
	par_close_ns = ct_parallel(&c, ct_close_thread);
	lchan_ctx_close(&c.ctx);

	if (o->json) {
		struct json j = { 0 };

		json_open(&j, NULL, '{');
		json_str(&j, "tool", "lchan_conntime");
		json_str(&j, "device", device);
		json_uint(&j, "conns", o->n);
		json_uint(&j, "parallel", o->par);
		json_uint(&j, "entries", o->entries);
		json_num(&j, "connect_median_us", med);
		json_num(&j, "connect_p99_us", p99);
		json_num(&j, "connect_avg_us", avg);
		json_num(&j, "close_median_us", cmed);
		json_num(&j, "close_p99_us", cp99);
		json_num(&j, "par_connect_us_per_conn",
			 par_conn_ns / 1e3 / o->n);
		json_num(&j, "par_conns_per_s",
			 o->n * 1e9 / (double)par_conn_ns);
		json_num(&j, "par_close_us_per_conn",
			 par_close_ns / 1e3 / o->n);
		for (k = 0; k < CT_NSTEPS; k++) {
			char key[48];

			snprintf(key, sizeof(key), "step_%s_us",
				 ct_steps[k].name);
			json_num(&j, key, have_steps ? steps[k] : NAN);
		}
		json_close(&j);
	} else {
		printf("lchan_conntime: %s, %u channels per phase, %u in flight in parallel",
		       device, o->n, o->par);
		if (o->entries)
			printf(", SQ and RQ of %u entries", o->entries);
		printf("\n");
		printf("%-24s %10s %10s %10s\n", "", "median us", "p99 us",
		       "mean us");
		printf("%-24s %10.1f %10.1f %10.1f\n", "connect (sequential)",
		       med, p99, avg);
		printf("%-24s %10.1f %10.1f %10.1f\n", "close (sequential)",
		       cmed, cp99, cavg);
		printf("parallel: connect %.1f us per channel (%.0f channels/s), close %.1f us per channel\n",
		       par_conn_ns / 1e3 / o->n,
		       o->n * 1e9 / (double)par_conn_ns,
		       par_close_ns / 1e3 / o->n);
		if (have_steps) {
			printf("steps (sequential, median us):");
			for (k = 0; k < CT_NSTEPS; k++)
				printf(" %s %.1f", ct_steps[k].name, steps[k]);
			printf("\n");
		}
	}
	free(c.chans);
	free(c.conn_ns);
	free(c.close_ns);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "server", no_argument, NULL, 's' },
		{ "client", required_argument, NULL, 'c' },
		{ "port", required_argument, NULL, 'p' },
		{ "conns", required_argument, NULL, 'n' },
		{ "parallel", required_argument, NULL, 'P' },
		{ "steps", no_argument, NULL, 'T' },
		{ "json", no_argument, NULL, 'J' },
		{ "timeout", required_argument, NULL, 't' },
		{ "entries", required_argument, NULL, 'e' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct ct_opts o = {
		.port = "18515", .n = 100, .par = 8, .timeout_ms = 10000,
	};
	bool client = false;
	int opt;

	signal(SIGPIPE, SIG_IGN);
	cli_start(argv);
	while ((opt = getopt_long(argc, argv, "sc:a:p:n:P:t:e:h", longopts,
				  NULL)) != -1) {
		switch (opt) {
		case 's':
			o.server = true;
			break;
		case 'c':
			client = true;
			cli_address(&o.addr, "-c", optarg);
			break;
		case 'a':
			cli_address(&o.addr, "-a", optarg);
			break;
		case 'p':
			o.port = cli_port("-p", optarg);
			break;
		case 'n':
			o.n = (unsigned)cli_number("-n", optarg, 1, 1000000);
			break;
		case 'P':
			o.par = (unsigned)cli_number("-P", optarg, 1, 1000000);
			break;
		case 'e':
			o.entries = (unsigned)cli_number("-e", optarg, 1, 1000000);
			break;
		case 't':
			o.timeout_ms = (unsigned)cli_number("-t", optarg, 1,
							    1000000);
			break;
		case 'T':
			o.steps = true;
			break;
		case 'J':
			o.json = true;
			break;
		case 'h':
			ct_usage();
			return 0;
		default:
			cli_bad_option();
		}
	}
	cli_no_operands(argc, argv, optind);
	cli_one_side(o.server, client);
	if (!o.addr)
		cli_usage_error("-s needs -a ADDR, the address to listen on");
	if (o.par > o.n)
		o.par = o.n;
	return o.server ? ct_run_server(&o) : ct_run_client(&o);
}
