// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * lchan_msg_perf: latency and throughput of liblchan's message API
 * (liblchan_msg.h), printed like lchan_perf and perftest so that the rows
 * of all three can be read side by side.
 *
 *   lchan_msg_perf -s [-a ADDR] [-p PORT] [--mode doorbell|poller]
 *   lchan_msg_perf -c ADDR [-p PORT] [-t lat|bw] [-S SIZE[,SIZE...]] [--all]
 *                  [-n N] [--mode doorbell|poller] [--event] [--zero-copy]
 *                  [--verify] [--json] ...
 *
 * Everything, the control messages included, goes through lchan_msg_send()
 * and lchan_msg_recv(): the benchmark uses nothing the API's users do not.
 * The client chooses the test and tells the server:
 *   C->S HELLO (test, flags, largest size)    S->C HELLO
 *   per size: C->S START, S->C READY, the test, then
 *     lat: C->S END, S->C RESULT
 *     bw:  S->C RESULT as soon as the last message is in (ends the timing)
 *   C->S BYE, S->C BYE, both close
 * Control messages are told from data by their place in this sequence,
 * never by their length, so any data size works.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "liblchan.h"
#include "liblchan_msg.h"
#include "perf_util.h"

#define MP_MAGIC	0x4c4d5046u	/* "LMPF" */
#define MP_VERSION	1
#define MAX_SIZE	(1UL << 30)
#define SERVER_MAX_MSG	(1U << 30)	/* the client's sizes decide */

enum mp_test { T_LAT, T_BW };

static const char *const test_names[] = { "msg_lat", "msg_bw" };

enum ctl_type {
	C_HELLO = 1,
	C_START,
	C_READY,
	C_END,
	C_RESULT,
	C_BYE,
};

#define F_VERIFY	(1u << 0)
#define F_EVENT		(1u << 1)
#define F_ZCOPY		(1u << 2)


/* A control message; both ends are the same build, so host order. */
struct ctl {
	uint32_t magic;
	uint16_t version;
	uint16_t type;		/* enum ctl_type */
	uint32_t test;		/* enum mp_test */
	uint32_t flags;		/* F_* */
	uint64_t size;		/* HELLO: largest; START: this round's */
	uint64_t iters;
	uint32_t status;	/* HELLO, RESULT: 0 or what went wrong */
	uint32_t resv;
};

struct mp {
	struct perf_opts o;

	/* the connection */
	struct lchan_ctx ctx;
	struct lchan_msg *m;
	struct lchan_mr mr;	/* sbuf and rbuf, when zero-copy */
	uint8_t *area;
	uint8_t *sbuf;
	uint8_t *rbuf;
	size_t max_size;
	char device[32];

	/* the server: what the client asked for */
	bool peer_event;
	bool peer_zcopy;
	bool peer_verify;

	double tsc_per_us;
	uint64_t timeout_tsc;
};

/* ------------------------------------------------------------- messages */

static void fail(const char *what, long err)
{
	fprintf(stderr, "lchan_msg_perf: %s: %s\n", what, strerror((int)-err));
}

/* Where the stream stands, when it stopped moving. */
static void mp_dump(struct mp *p)
{
	char buf[512];

	lchan_msg_describe(p->m, buf, sizeof(buf));
	fprintf(stderr, "lchan_msg_perf: %s\n", buf);
	perf_dump_chan("lchan_msg_perf", lchan_msg_chan(p->m));
}

/*
 * One message out.  Busy style: LCHAN_MSG_DONTWAIT and try again while
 * the peer holds back credits (the library takes completions meanwhile),
 * and LCHAN_MSG_BUSY_POLL so that a large message waits for its reader by
 * spinning too; event style: let the call sleep.  @more: a receive
 * follows at once (LCHAN_MSG_MORE: it posts the message).
 */
static int msg_out(struct mp *p, const void *buf, size_t len, bool busy,
		   bool zcopy, bool more)
{
	unsigned flags = (busy ? LCHAN_MSG_DONTWAIT | LCHAN_MSG_BUSY_POLL : 0) |
			 (more ? LCHAN_MSG_MORE : 0);
	uint64_t t0 = 0;
	unsigned spins = 0;
	ssize_t n;

	for (;;) {
		n = zcopy ? lchan_msg_send_mr(p->m, &p->mr, buf, len, flags) :
			    lchan_msg_send(p->m, buf, len, flags);
		if (n != -EAGAIN)
			break;
		if (!t0)
			t0 = ticks();
		if (++spins % 4096 == 0 && ticks() - t0 > p->timeout_tsc) {
			fprintf(stderr, "lchan_msg_perf: no credit from the peer for %u s\n",
				p->o.timeout_s);
			mp_dump(p);
			return -ETIMEDOUT;
		}
	}
	if (n < 0) {
		fail("send", n);
		return (int)n;
	}
	return 0;
}


/* One message in; its length, or an error (the peer closing is one). */
static ssize_t msg_in(struct mp *p, void *buf, size_t cap, bool busy,
		      bool zcopy)
{
	/* Busy style: the call spins (a large message's bytes excepted). */
	unsigned flags = busy ? LCHAN_MSG_BUSY_POLL : 0;
	int ms = (int)p->o.timeout_s * 1000;
	ssize_t n;

	n = zcopy ? lchan_msg_recv_mr(p->m, &p->mr, buf, cap, flags, ms) :
		    lchan_msg_recv(p->m, buf, cap, flags, ms);
	if (n == 0) {
		fprintf(stderr, "lchan_msg_perf: the peer closed\n");
		return -EPIPE;
	}
	if (n < 0)
		fail("receive", n);
	if (n == -ETIMEDOUT)
		mp_dump(p);
	return n;
}

/* Control messages: always the plain calls, waiting unless @busy. */
static int send_ctl_busy(struct mp *p, struct ctl *c, bool busy)
{
	c->magic = MP_MAGIC;
	c->version = MP_VERSION;
	return msg_out(p, c, sizeof(*c), busy, false, false);
}

static int send_ctl(struct mp *p, struct ctl *c)
{
	return send_ctl_busy(p, c, false);
}

static int recv_ctl(struct mp *p, struct ctl *c, int type, bool busy)
{
	ssize_t n = msg_in(p, c, sizeof(*c), busy, false);

	if (n < 0)
		return (int)n;
	if ((size_t)n != sizeof(*c) || c->magic != MP_MAGIC ||
	    c->version != MP_VERSION) {
		fprintf(stderr, "lchan_msg_perf: the peer speaks another protocol\n");
		return -EPROTO;
	}
	if (type && c->type != type) {
		fprintf(stderr, "lchan_msg_perf: control message %u where %d belongs\n",
			c->type, type);
		return -EPROTO;
	}
	return 0;
}

/* -------------------------------------------------------------- buffers */

/* Message @i of @size bytes: the pattern, with @i in its first bytes. */
static void stamp(uint8_t *buf, size_t size, unsigned long i)
{
	uint64_t seq = i;
	size_t j, k = size < sizeof(seq) ? size : sizeof(seq);

	memcpy(buf, &seq, k);
	for (j = k; j < size; j++)
		buf[j] = pattern(size, j);
}

static bool stamped(const uint8_t *buf, size_t size, unsigned long i)
{
	uint64_t seq = i;
	size_t j, k = size < sizeof(seq) ? size : sizeof(seq);

	if (memcmp(buf, &seq, k))
		return false;
	for (j = k; j < size; j++)
		if (buf[j] != pattern(size, j))
			return false;
	return true;
}

/* Send and receive buffers for messages up to @max bytes. */
static int setup_buffers(struct mp *p, size_t max, bool zcopy)
{
	size_t area = (max + 4095) & ~(size_t)4095;
	int ret;

	p->max_size = max;
	p->area = aligned_alloc(4096, 2 * area);
	if (!p->area)
		return -ENOMEM;
	memset(p->area, 0, 2 * area);
	p->sbuf = p->area;
	p->rbuf = p->area + area;
	if (!zcopy)
		return 0;
	/* Registered once, up front: the zero-copy path of the API. */
	ret = lchan_mr_reg(&p->ctx, lchan_msg_chan(p->m), p->area, 2 * area,
			   LCHAN_ACCESS_LOCAL_WRITE | LCHAN_ACCESS_REMOTE_READ,
			   &p->mr);
	if (ret)
		fail("registering the buffers", ret);
	return ret;
}

static void msg_opts(struct mp *p, struct lchan_msg_opts *o, size_t max)
{
	memset(o, 0, sizeof(*o));
	o->max_msg = max;
	o->buf_size = p->o.buf_size;
	o->nbufs = p->o.nbufs;
	o->nsend = p->o.nbufs;
	o->timeout_ms = p->o.timeout_s * 1000;
	o->flags = p->o.direct ? LCHAN_MSG_OPT_DIRECT : 0;
}

/* --------------------------------------------------------------- client */

/* Ping-pong: the server sends every message straight back. */
static int client_lat(struct mp *p, size_t size, unsigned long n,
		      uint64_t *t, bool *bad)
{
	bool busy = !p->o.event;
	unsigned long i;

	for (i = 0; i < n; i++) {
		uint64_t t0;
		ssize_t got;
		int ret;

		if (p->o.verify)
			stamp(p->sbuf, size, i);
		t0 = ticks();
		ret = msg_out(p, p->sbuf, size, busy, p->o.zcopy, true);
		if (ret)
			return ret;
		got = msg_in(p, p->rbuf, p->max_size, busy, p->o.zcopy);
		if (got < 0)
			return (int)got;
		t[i] = ticks() - t0;
		if ((size_t)got != size) {
			fprintf(stderr, "lchan_msg_perf: reply %lu has %zd bytes, not %zu\n",
				i, got, size);
			return -EIO;
		}
		if (p->o.verify && memcmp(p->rbuf, p->sbuf, size))
			*bad = true;
	}
	return 0;
}

/* A stream of @n messages; the server's RESULT says it has them all. */
static int client_bw(struct mp *p, size_t size, unsigned long n,
		     struct ctl *result)
{
	bool busy = !p->o.event;
	unsigned long i;
	int ret;

	for (i = 0; i < n; i++) {
		if (p->o.verify)
			stamp(p->sbuf, size, i);
		ret = msg_out(p, p->sbuf, size, busy, p->o.zcopy, false);
		if (ret)
			return ret;
	}
	return recv_ctl(p, result, C_RESULT, busy);
}

static int client_round(struct mp *p, size_t size, unsigned long n,
			struct perf_result *res)
{
	struct ctl c = { .type = C_START, .size = size, .iters = n };
	uint64_t *t = NULL;
	struct perf_meter mt;
	bool bad = false;
	int ret;

	memset(res, 0, sizeof(*res));
	res->size = size;
	res->iters = n;
	res->verify = p->o.verify ? "ok" : "off";
	if (p->o.test == T_LAT) {
		t = calloc(n, sizeof(*t));
		if (!t)
			return -ENOMEM;
	}
	/* Without --verify the content is a constant pattern, set here. */
	stamp(p->sbuf, size, 0);
	ret = send_ctl(p, &c);
	if (!ret)
		ret = recv_ctl(p, &c, C_READY, false);
	if (ret)
		goto out;

	perf_meter_start(&mt,
			 p->o.poller ? (int)lchan_msg_chan(p->m)->info.id : -1,
			 perf_chan_stat(lchan_msg_chan(p->m)->info.id, "enters"));
	if (p->o.test == T_LAT)
		ret = client_lat(p, size, n, t, &bad);
	else
		ret = client_bw(p, size, n, &c);
	perf_meter_stop(&mt, res, p->o.test == T_BW, &p->tsc_per_us);
	perf_meter_enters(&mt, res,
			  perf_chan_stat(lchan_msg_chan(p->m)->info.id, "enters"));
	if (ret)
		goto out;
	if (t)
		perf_lat_stats(res, t, n, 1.0 / p->tsc_per_us / 2.0);
	if (p->o.test == T_LAT) {
		c = (struct ctl){ .type = C_END, .size = size, .iters = n };
		ret = send_ctl(p, &c);
		if (!ret)
			ret = recv_ctl(p, &c, C_RESULT, false);
		if (ret)
			goto out;
	}
	if (c.status || bad)
		res->verify = "fail";
out:
	free(t);
	return ret;
}

/* --------------------------------------------------------------- server */

static int server_round(struct mp *p, const struct ctl *start)
{
	bool busy = !p->peer_event, bad = false;
	struct ctl c = { .type = C_READY };
	size_t size = start->size;
	unsigned long n = start->iters, i;
	ssize_t got;
	int ret;

	if (!size || size > p->max_size) {
		fprintf(stderr, "lchan_msg_perf: size %zu out of range\n", size);
		return -EPROTO;
	}
	ret = send_ctl(p, &c);
	if (ret)
		return ret;
	for (i = 0; i < n; i++) {
		got = msg_in(p, p->rbuf, p->max_size, busy, p->peer_zcopy);
		if (got < 0)
			return (int)got;
		if ((size_t)got != size) {
			fprintf(stderr, "lchan_msg_perf: message %lu has %zd bytes, not %zu\n",
				i, got, size);
			return -EIO;
		}
		if (p->peer_verify && !stamped(p->rbuf, size, i))
			bad = true;
		/* Latency: the message goes straight back, as it came. */
		if (start->test == T_LAT) {
			ret = msg_out(p, p->rbuf, size, busy,
				      p->peer_zcopy, true);
			if (ret)
				return ret;
		}
	}
	if (bad)
		fprintf(stderr, "lchan_msg_perf: %s of %zu bytes: data check failed\n",
			test_names[start->test], size);
	if (start->test == T_LAT) {
		ret = recv_ctl(p, &c, C_END, false);
		if (ret)
			return ret;
	}
	c = (struct ctl){ .type = C_RESULT, .status = bad };
	/* bw: the client's clock stops when this arrives; no other style. */
	return send_ctl_busy(p, &c, busy);
}

static int run_server(struct mp *p)
{
	struct lchan_msg_listener *lst;
	struct lchan_msg_opts o;
	struct ctl c;
	int ret;

	msg_opts(p, &o, SERVER_MAX_MSG);
	ret = lchan_msg_listen(&p->ctx, p->o.host, p->o.port, 1, &o, &lst);
	if (ret) {
		fail("listen", ret);
		return ret;
	}
	if (!p->o.json)
		fprintf(stderr, "lchan_msg_perf: listening on port %u (%s)\n",
			lchan_msg_listener_port(lst), perf_mode_name(&p->o));
	ret = lchan_msg_accept(lst, -1, &p->m);
	lchan_msg_listener_close(lst);
	if (ret) {
		fail("accept", ret);
		return ret;
	}
	ret = recv_ctl(p, &c, C_HELLO, false);
	if (ret)
		return ret;
	if (c.test > T_BW || !c.size || c.size > MAX_SIZE) {
		fprintf(stderr, "lchan_msg_perf: bad HELLO (test %u, size %llu)\n",
			c.test, (unsigned long long)c.size);
		return -EPROTO;
	}
	p->o.test = (int)c.test;
	p->peer_event = c.flags & F_EVENT;
	p->peer_zcopy = c.flags & F_ZCOPY;
	p->peer_verify = c.flags & F_VERIFY;
	ret = setup_buffers(p, c.size, p->peer_zcopy);
	c = (struct ctl){ .type = C_HELLO, .status = ret ? 1 : 0 };
	if (send_ctl(p, &c) || ret)
		return ret ? ret : -EIO;

	for (;;) {
		ret = recv_ctl(p, &c, 0, false);
		if (ret)
			return ret;
		if (c.type == C_BYE)
			break;
		if (c.type != C_START) {
			fprintf(stderr, "lchan_msg_perf: control message %u where START belongs\n",
				c.type);
			return -EPROTO;
		}
		c.test = (uint32_t)p->o.test;
		ret = server_round(p, &c);
		if (ret)
			return ret;
	}
	c = (struct ctl){ .type = C_BYE };
	return send_ctl(p, &c);
}

/* --------------------------------------------------------------- output */

static void print_header(struct mp *p)
{
	perf_print_title(&p->o, "lchan_msg_perf", test_names[p->o.test],
			 p->device, lchan_msg_chan(p->m)->info.id);
	printf(" Receive        : %s\n", p->o.event ?
	       "event (lchan_msg_recv waits)" :
	       "busy polling (LCHAN_MSG_DONTWAIT | LCHAN_MSG_BUSY_POLL)");
	printf(" Buffers        : %s\n", p->o.zcopy ?
	       "registered up front (lchan_msg_send_mr/recv_mr)" :
	       "the caller's, unregistered (lchan_msg_send/recv)");
	perf_print_columns(&p->o, p->o.test == T_LAT ? "RTT/2 (one way)" : NULL);
}

static void print_json(struct mp *p, const struct perf_result *res, unsigned n)
{
	struct json j = { 0 };

	perf_json_head(&j, &p->o, "lchan_msg_perf", test_names[p->o.test]);
	json_str(&j, "buffers", p->o.zcopy ? "registered" : "plain");
	perf_json_chan(&j, p->device, lchan_msg_chan(p->m));
	json_uint(&j, "buf_size", p->o.buf_size);
	json_uint(&j, "nbufs", p->o.nbufs);
	json_str(&j, "latency", p->o.test == T_LAT ? "rtt/2" : "none");
	perf_json_results(&j, res, n, p->o.test == T_LAT);
}

static int run_client(struct mp *p)
{
	struct lchan_msg_opts o;
	struct perf_results rs;
	struct ctl c;
	unsigned i;
	int ret;

	ret = perf_results_init(&rs, &p->o);
	if (ret)
		return ret;

	/* The library's largest message must hold ours (default 4 MiB). */
	msg_opts(p, &o, rs.max > (4u << 20) ? rs.max : 0);
	ret = lchan_msg_connect(&p->ctx, p->o.host, p->o.port, &o, &p->m);
	if (ret) {
		fail("connect", ret);
		goto out;
	}
	perf_chan_device(lchan_msg_chan(p->m)->info.id, p->device,
			 sizeof(p->device));
	ret = setup_buffers(p, rs.max, p->o.zcopy);
	if (ret)
		goto out;
	c = (struct ctl){
		.type = C_HELLO,
		.test = (uint32_t)p->o.test,
		.flags = (p->o.verify ? F_VERIFY : 0) | (p->o.event ? F_EVENT : 0) |
			 (p->o.zcopy ? F_ZCOPY : 0),
		.size = rs.max,
	};
	ret = send_ctl(p, &c);
	if (!ret)
		ret = recv_ctl(p, &c, C_HELLO, false);
	if (!ret && c.status) {
		fprintf(stderr, "lchan_msg_perf: the server could not set up its buffers\n");
		ret = -EIO;
	}
	if (ret)
		goto out;

	if (!p->o.json)
		print_header(p);
	for (i = 0; i < p->o.nsizes; i++) {
		ret = client_round(p, p->o.sizes[i], p->o.iters, &rs.res[rs.n]);
		if (ret)
			break;
		perf_results_add(&rs, &p->o, p->o.test == T_LAT);
	}
	if (!ret) {
		c = (struct ctl){ .type = C_BYE };
		ret = send_ctl(p, &c);
		if (!ret)
			ret = recv_ctl(p, &c, C_BYE, false);
	}
	if (!ret && p->o.json)
		print_json(p, rs.res, rs.n);
	if (!ret && rs.bad)
		ret = -EIO;
out:
	free(rs.res);
	return ret;
}

/* -------------------------------------------------------------- options */

static void usage(void)
{
	printf(
"usage: lchan_msg_perf -s [-a ADDR] [-p PORT] [--mode M]\n"
"       lchan_msg_perf -c ADDR [-p PORT] [-t TEST] [-S SIZES] [--all] [options]\n"
"\n"
"  -s, --server       server (the client says what to run)\n"
"  -c, --client ADDR  client: connect to the server at ADDR\n"
"  -a, --addr ADDR    the address: where the server listens (default any),\n"
"                     the server a client connects to (as -c ADDR)\n"
"  -p, --port PORT    port, 1..65535 (default 18517)\n"
"  -t, --test TEST    lat (ping-pong, default) or bw (a stream, one reply)\n"
"  -S, --size SIZES   message size, or a comma list (K, M, G suffixes), each\n"
"                     1..1G; default 64 for lat, 1M for bw\n"
"      --all          client: every power of two from 2 to the -S size\n"
"                     (default 64K)\n"
"  -n, --iters N      messages per size (default 1000)\n"
"  -m, --mode M       doorbell (default), poller (a kernel thread submits)\n"
"                     or direct (the CQ polled in the calls; IB/RoCE)\n"
"      --poller-idle MS   poller: idle time before it sleeps (default 1000)\n"
"      --poller-cpu CPU   poller: pin the thread\n"
"  -e, --event        blocking calls (default: DONTWAIT | BUSY_POLL in a loop)\n"
"  -z, --zero-copy    buffers registered up front, lchan_msg_send_mr/recv_mr\n"
"                     (default: lchan_msg_send/recv on unregistered buffers)\n"
"      --buf-size N   the library's payload per buffer (default 8192)\n"
"      --nbufs N      receive buffers (credits) and send buffers (default 32)\n"
"  -V, --verify       check every message's content\n"
"  -J, --json         machine-readable results on stdout\n"
"      --timeout S    give up after S seconds without progress (default 30)\n"
"  -h, --help         this text\n"
"\n"
"Exit status: 0 done, 1 error or data check failed, 2 usage error,\n"
"3 the lchan module is not loaded.\n");
}

static int find_test(const char *name)
{
	if (!strcmp(name, "lat") || !strcmp(name, "msg_lat"))
		return T_LAT;
	if (!strcmp(name, "bw") || !strcmp(name, "msg_bw"))
		return T_BW;
	return -1;
}

static void parse_args(struct mp *p, int argc, char **argv)
{
	static const struct perf_tool tool = {
		"lchan_msg_perf", PERF_FOR_MSG, "18517", find_test,
		"lat, bw", usage,
	};

	perf_opts_parse(&p->o, &tool, argc, argv);
	perf_opts_finish(&p->o, p->o.test == T_LAT ? 64 : 1u << 20);
	if (!p->o.iters)
		p->o.iters = 1000;
}

int main(int argc, char **argv)
{
	struct mp p = { 0 };
	int ret;

	parse_args(&p, argc, argv);
	p.timeout_tsc = perf_calibrate(p.o.timeout_s, &p.tsc_per_us);
	p.ctx.fd = -1;

	ret = perf_open_ctx(&p.ctx, &p.o, "lchan_msg_perf");
	if (ret) {
		lchan_ctx_close(&p.ctx);
		return ret;
	}
	ret = p.o.server ? run_server(&p) : run_client(&p);
	if (p.m) {
		if (p.mr.handle)
			lchan_mr_dereg(&p.ctx, &p.mr);
		/* Sends end of stream after what we sent; waits for it. */
		lchan_msg_close(p.m);
	}
	lchan_ctx_close(&p.ctx);
	free(p.area);
	return ret ? CLI_EXIT_FAIL : 0;
}
