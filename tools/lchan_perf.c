// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * lchan_perf: latency and bandwidth of an lchan channel, in the manner of
 * perftest (ib_send_lat, ib_write_bw, ...), so that the numbers of both
 * can be read side by side.
 *
 *   lchan_perf -s [-a ADDR] [-p PORT] [--mode doorbell|poller]
 *   lchan_perf -c ADDR [-p PORT] [-t TEST] [-S SIZE[,SIZE...]] [--all] [-n N]
 *              [-b BATCH] [--mode doorbell|poller] [--event] [--json] ...
 *
 * The client chooses the test and sends its parameters to the server over
 * the channel itself (SEND/RECV control messages), so the server needs no
 * test options.  Latency tests report RTT/2 for SEND and WRITE ping-pong
 * and the whole operation for READ and atomics, as perftest does.
 *
 * Protocol (every message a struct perf_msg in a SEND):
 *   C->S HELLO (test, flags, largest size, the client's buffers)
 *   S->C HELLO (the server's buffers, receives posted)
 *   per size: C->S START, S->C READY, the test, C->S END, S->C RESULT
 *   C->S BYE, S->C BYE
 * During send_bw the server also sends CREDIT messages: the receives it
 * has re-posted, so the client never sends into an empty receive queue
 * (iWARP has no receiver-not-ready retry).
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "liblchan.h"
#include "perf_util.h"

#define PERF_MAGIC	0x4c505246u	/* "LPRF" */
#define PERF_VERSION	1
#define CTRL_SIZE	128		/* bytes of a control message slot */
#define CTRL_BUFS	64		/* control send buffers, used in turn */
#define SLOT_BUDGET	(64u << 20)	/* receive slots, all together */
#define MIN_SLOTS	8
#define CTRL_BIT	(1ULL << 63)	/* SQE user_data: a control SEND */

enum msg_type {
	M_HELLO = 1,
	M_START,
	M_READY,
	M_END,
	M_RESULT,
	M_CREDIT,
	M_BYE,
};

#define F_VERIFY	(1u << 0)
#define F_EVENT		(1u << 1)

/* A control message; both ends are the same build, so host order. */
struct perf_msg {
	uint32_t magic;
	uint16_t version;
	uint16_t type;		/* enum msg_type */
	uint32_t test;		/* the test's index in perf_tests[] */
	uint32_t flags;		/* F_* */
	uint64_t size;		/* START: message size; HELLO: largest */
	uint64_t iters;
	uint64_t target;	/* HELLO: where the peer may WRITE */
	uint64_t src;		/* HELLO: where the peer may READ */
	uint64_t counter;	/* HELLO: the atomic word */
	uint32_t rkey;
	uint32_t status;	/* RESULT: 0, or what failed verification */
	uint64_t count;		/* READY: receives posted; CREDIT: re-posted */
	uint64_t value;		/* RESULT: atomic counter */
};

_Static_assert(sizeof(struct perf_msg) <= CTRL_SIZE, "control message size");

struct perf_test;

struct perf {
	struct perf_opts o;
	const struct perf_test *ops;	/* the test, o.test's row */

	/* the channel */
	struct lchan_ctx ctx;
	struct lchan_chan chan;
	struct lchan_mr ctrl_mr;
	struct lchan_mr data_mr;
	uint8_t *ctrl;		/* CTRL_BUFS send buffers, then one receive */
	uint8_t *data;
	size_t data_len;
	uint8_t *slots;		/* receive buffers */
	size_t slot_size;
	unsigned nslots;
	uint8_t *src;		/* what we send, write, or the peer reads */
	uint8_t *target;	/* the peer writes here */
	uint8_t *dst;		/* our READs land here */
	uint64_t *counter;	/* the peer's FETCH_ADD target */
	uint64_t *fetched;	/* FETCH_ADD results land here */
	size_t max_size;
	uint64_t features;
	char device[32];

	/* the peer */
	uint64_t peer_target;
	uint64_t peer_src;
	uint64_t peer_counter;
	uint32_t peer_rkey;

	/* queue state */
	uint64_t rq_posted;	/* receives ever prepared (slot numbers) */
	uint64_t data_posted;	/* data SQEs of the current test */
	uint64_t data_done;	/* ... known complete (signalled CQEs) */
	uint64_t ctrl_sent;
	uint64_t ctrl_done;
	bool flags_event;	/* the server: how the client wants polling */
	bool flags_verify;

	/* time */
	double tsc_per_us;
	uint64_t timeout_tsc;
};

/* One size of a test, as either side runs it. */
struct perf_round {
	size_t size;
	unsigned long n;
	uint64_t *t;		/* client, latency: the samples */
	uint64_t credit;	/* client: receives the server has posted */
	uint8_t *last;		/* server: the last message received */
};

/*
 * What differs from one test to another; perf_tests[] has a row for each,
 * and a row's index is the test's number in HELLO.
 */
struct perf_test {
	const char *name;
	bool lat;
	bool halve;		/* report RTT/2 */
	size_t def_size;	/* perftest's defaults */
	size_t fixed_size;	/* the only size it runs, or 0 */
	bool signal_all;	/* each operation is waited for */
	bool credits;		/* SENDs: keep to the server's receives */
	bool polls_memory;	/* waits for data, not for completions */
	uint64_t feature;	/* the LCHAN_FEATURE_* it needs, or 0 */
	const char *no_feature;	/* why it is skipped without */
	/* the data operation of user_data @seq */
	void (*prep)(struct perf *p, struct lchan_sqe *sqe, size_t size,
		     uint64_t seq);
	/* the client's timed part */
	int (*client)(struct perf *p, struct perf_round *r);
	/* the server's part; NULL: one-sided, the server only waits */
	int (*server)(struct perf *p, struct perf_round *r);
	/* with --verify: after each operation, the client */
	int (*check_op)(struct perf *p, unsigned long i);
	/* with --verify: after the round, each side (NULL: nothing) */
	bool (*client_check)(struct perf *p, const struct perf_round *r);
	bool (*server_check)(struct perf *p, const struct perf_round *r);
};

/* ------------------------------------------------------------- the rings */

static void fail(const char *what, int err)
{
	fprintf(stderr, "lchan_perf: %s: %s\n", what, strerror(-err));
}

static int submit(struct perf *p)
{
	int ret = lchan_submit(&p->chan);

	if (ret < 0) {
		fail("submit", ret);
		return ret;
	}
	return 0;
}

/* An SQE; when the ring is full, push what is there and wait for room. */
static struct lchan_sqe *get_sqe(struct perf *p)
{
	uint64_t t0 = 0;
	unsigned spins = 0;

	for (;;) {
		struct lchan_sqe *sqe = lchan_get_sqe(&p->chan);

		if (sqe)
			return sqe;
		if (!t0)
			t0 = ticks();
		if (++spins % 1024 == 0) {
			if (submit(p))
				return NULL;
			if (ticks() - t0 > p->timeout_tsc) {
				fprintf(stderr, "lchan_perf: send ring stays full\n");
				perf_dump_chan("lchan_perf", &p->chan);
				return NULL;
			}
		}
	}
}

/* Prepare the receive of the next slot (submitted with the next submit). */
static int post_recv(struct perf *p)
{
	struct lchan_rqe *rqe = lchan_get_rqe(&p->chan);
	unsigned slot = (unsigned)(p->rq_posted % p->nslots);

	if (!rqe) {
		fprintf(stderr, "lchan_perf: receive ring full\n");
		return -ENOSPC;
	}
	lchan_prep_recv(rqe, &p->data_mr, p->slots + (size_t)slot * p->slot_size,
			(uint32_t)p->slot_size, slot);
	p->rq_posted++;
	return 0;
}

/*
 * Poller mode: wait until the kernel has taken every published receive.
 * A poller round takes receives before sends, but it reads the two tails
 * at different moments, so a SEND published right after receives can be
 * posted before them.  Where that matters (a credit, a reply the peer
 * answers at once, the receives before establish), wait here first.
 */
static int receives_taken(struct perf *p)
{
	uint64_t t0 = ticks();

	if (!(p->chan.info.chan_flags & LCHAN_CHAN_POLLER))
		return 0;
	while (lchan_load_acquire(p->chan.rq.khead) != p->chan.rq.published) {
		if (ticks() - t0 > p->timeout_tsc) {
			fprintf(stderr, "lchan_perf: the poller takes no receives\n");
			perf_dump_chan("lchan_perf", &p->chan);
			return -ETIMEDOUT;
		}
	}
	return 0;
}

/* What the peer's SEND brought: slot and length. */
struct recvd {
	uint8_t *buf;
	uint32_t len;
};

static const char *cqe_op_name(unsigned op)
{
	switch (op) {
	case LCHAN_CQE_SEND: return "SEND";
	case LCHAN_CQE_RECV: return "RECV";
	case LCHAN_CQE_WRITE: return "WRITE";
	case LCHAN_CQE_READ: return "READ";
	case LCHAN_CQE_FETCH_ADD: return "FETCH_ADD";
	case LCHAN_CQE_CMP_SWAP: return "CMP_SWAP";
	}
	return "operation";
}

/*
 * Take one CQE.  Send-side completions are accounted here; a receive is
 * handed back in @r (its slot is re-posted at once).  Returns 1 for a
 * receive, 0 for anything else, -EAGAIN when the ring is empty and
 * @wait is false, or an error.
 */
static int reap(struct perf *p, bool wait, bool event, struct recvd *r)
{
	struct lchan_cqe *cqe;
	uint64_t t0 = 0;
	unsigned spins = 0;
	int ret;

	for (;;) {
		if (!lchan_peek_cqe(&p->chan, &cqe))
			break;
		if (!wait)
			return -EAGAIN;
		if (event) {
			ret = lchan_wait_cqe(&p->chan, &cqe,
					     (int)p->o.timeout_s * 1000);
			if (ret) {
				fail("waiting for a completion", ret);
				return ret;
			}
			break;
		}
		/* Direct polling: the ring shows what ENTER polled. */
		if (p->o.direct) {
			ret = lchan_submit(&p->chan);
			if (ret < 0) {
				fail("polling the completion queue", ret);
				return ret;
			}
		}
		if (!t0)
			t0 = ticks();
		if (++spins % 4096 == 0 && ticks() - t0 > p->timeout_tsc) {
			fprintf(stderr, "lchan_perf: no completion for %u s\n",
				p->o.timeout_s);
			perf_dump_chan("lchan_perf", &p->chan);
			return -ETIMEDOUT;
		}
	}

	if (cqe->status) {
		fprintf(stderr, "lchan_perf: %s failed: %s (status %u, vendor error %u)\n",
			cqe_op_name(cqe->opcode), lchan_cqe_status_str(cqe->status),
			cqe->status, cqe->vendor_err);
		lchan_cqe_seen(&p->chan);
		return -EIO;
	}
	if (cqe->opcode == LCHAN_CQE_RECV) {
		r->buf = p->slots + (size_t)cqe->user_data * p->slot_size;
		r->len = cqe->byte_len;
		lchan_cqe_seen(&p->chan);
		ret = post_recv(p);
		return ret ? ret : 1;
	}
	if (cqe->user_data & CTRL_BIT) {
		p->ctrl_done = cqe->user_data & ~CTRL_BIT;
	} else if (cqe->user_data > p->data_done) {
		/* RC completes in order: everything before it is done too. */
		p->data_done = cqe->user_data;
	}
	lchan_cqe_seen(&p->chan);
	return 0;
}

/* Reap one completion where no message may arrive: 0, or <0. */
static int reap_no_msg(struct perf *p, bool wait, bool event)
{
	struct recvd r;
	int ret = reap(p, wait, event, &r);

	if (ret == 1) {
		fprintf(stderr, "lchan_perf: unexpected message\n");
		return -EPROTO;
	}
	return ret;
}

/* Reap everything ready without waiting. */
static int reap_ready(struct perf *p)
{
	int ret;

	while (!(ret = reap_no_msg(p, false, false)))
		;
	return ret == -EAGAIN ? 0 : ret;
}

/* ------------------------------------------------------- control messages */

static int send_ctrl(struct perf *p, struct perf_msg *m)
{
	struct lchan_sqe *sqe;
	uint8_t *buf;

	/* A control buffer is reused only after its SEND completed. */
	while (p->ctrl_sent - p->ctrl_done >= CTRL_BUFS) {
		int ret = reap_no_msg(p, true, true);

		if (ret)
			return ret;
	}
	buf = p->ctrl + (p->ctrl_sent % CTRL_BUFS) * CTRL_SIZE;
	m->magic = PERF_MAGIC;
	m->version = PERF_VERSION;
	memcpy(buf, m, sizeof(*m));
	if (receives_taken(p))
		return -ETIMEDOUT;
	sqe = get_sqe(p);
	if (!sqe)
		return -ENOSPC;
	p->ctrl_sent++;
	lchan_prep_send(sqe, &p->ctrl_mr, buf, sizeof(*m),
			CTRL_BIT | p->ctrl_sent);
	return submit(p);
}

static int check_msg(const struct recvd *r, struct perf_msg *m, int type)
{
	if (r->len != sizeof(*m)) {
		fprintf(stderr, "lchan_perf: a %u-byte message where a control message belongs\n",
			r->len);
		return -EPROTO;
	}
	memcpy(m, r->buf, sizeof(*m));
	if (m->magic != PERF_MAGIC || m->version != PERF_VERSION) {
		fprintf(stderr, "lchan_perf: the peer speaks another protocol\n");
		return -EPROTO;
	}
	if (type && m->type != type) {
		fprintf(stderr, "lchan_perf: control message %u where %d belongs\n",
			m->type, type);
		return -EPROTO;
	}
	return 0;
}

/* Wait (sleeping) for the next control message, of @type unless 0. */
static int recv_ctrl(struct perf *p, struct perf_msg *m, int type)
{
	struct recvd r;
	int ret;

	for (;;) {
		ret = reap(p, true, true, &r);
		if (ret < 0)
			return ret;
		if (ret == 1)
			break;
	}
	/* The re-posted receive goes out with the next submit. */
	return check_msg(&r, m, type);
}

/* -------------------------------------------------------------- buffers */

static void fill_pattern(uint8_t *buf, size_t size)
{
	size_t j;

	for (j = 0; j < size; j++)
		buf[j] = pattern(size, j);
}

/* First @len bytes of @buf hold the pattern of a @size-byte message. */
static bool check_pattern(const uint8_t *buf, size_t size, size_t len)
{
	size_t j;

	for (j = 0; j < len; j++)
		if (buf[j] != pattern(size, j))
			return false;
	return true;
}

static size_t round_up(size_t v, size_t to)
{
	return (v + to - 1) / to * to;
}

/* The data buffers for messages up to @max bytes, registered. */
static int setup_data(struct perf *p, size_t max)
{
	size_t area, off = 0;
	int ret;

	p->max_size = max;
	p->slot_size = round_up(max > CTRL_SIZE ? max : CTRL_SIZE, 64);
	p->nslots = p->o.rx_depth;
	if ((size_t)p->nslots * p->slot_size > SLOT_BUDGET)
		p->nslots = (unsigned)(SLOT_BUDGET / p->slot_size);
	if (p->nslots < MIN_SLOTS)
		p->nslots = MIN_SLOTS;
	area = round_up(max, 4096);
	p->data_len = round_up((size_t)p->nslots * p->slot_size, 4096) +
		      3 * area + 4096;
	p->data = aligned_alloc(4096, p->data_len);
	if (!p->data)
		return -ENOMEM;
	memset(p->data, 0, p->data_len);
	p->slots = p->data;
	off = round_up((size_t)p->nslots * p->slot_size, 4096);
	p->src = p->data + off;
	off += area;
	p->target = p->data + off;
	off += area;
	p->dst = p->data + off;
	off += area;
	p->counter = (uint64_t *)(p->data + off);
	p->fetched = (uint64_t *)(p->data + off + 64);
	ret = lchan_mr_reg(&p->ctx, &p->chan, p->data, p->data_len,
			   LCHAN_ACCESS_ALL, &p->data_mr);
	if (ret)
		fail("registering the data buffers", ret);
	return ret;
}

static int setup_ctrl(struct perf *p)
{
	size_t len = round_up((CTRL_BUFS + 1) * CTRL_SIZE, 4096);
	int ret;

	p->ctrl = aligned_alloc(4096, len);
	if (!p->ctrl)
		return -ENOMEM;
	memset(p->ctrl, 0, len);
	ret = lchan_mr_reg(&p->ctx, &p->chan, p->ctrl, len,
			   LCHAN_ACCESS_LOCAL_WRITE, &p->ctrl_mr);
	if (ret)
		fail("registering the control buffers", ret);
	return ret;
}

/* Fill the receive queue (rx_depth receives) and push it to the kernel. */
static int fill_rq(struct perf *p)
{
	unsigned i;
	int ret;

	for (i = 0; i < p->o.rx_depth; i++) {
		ret = post_recv(p);
		if (ret)
			return ret;
	}
	ret = submit(p);
	return ret ? ret : receives_taken(p);
}

static void describe_self(struct perf *p, struct perf_msg *m)
{
	m->target = (uintptr_t)p->target;
	m->src = (uintptr_t)p->src;
	m->counter = (uintptr_t)p->counter;
	m->rkey = p->data_mr.rkey;
}

static void learn_peer(struct perf *p, const struct perf_msg *m)
{
	p->peer_target = m->target;
	p->peer_src = m->src;
	p->peer_counter = m->counter;
	p->peer_rkey = m->rkey;
}

/* --------------------------------------------------------- the channel */

static void chan_opts(struct perf *p, struct lchan_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->sq_entries = p->o.tx_depth;
	o->rq_entries = p->o.rx_depth;
	o->flags = LCHAN_DEFER_ESTABLISH |
		   (p->o.direct ? LCHAN_DIRECT_POLL : 0);
}

static int establish(struct perf *p)
{
	int ret = lchan_establish(&p->chan, p->o.timeout_s * 1000);

	if (ret) {
		fail("establishing the connection", ret);
		return ret;
	}
	p->features = p->chan.info.features;
	perf_chan_device(p->chan.info.id, p->device,
			 sizeof(p->device));
	return 0;
}

/* --------------------------------------------------------- client tests */

/* Wait for the completion of every data SQE (the last one is signalled). */
static int drain(struct perf *p)
{
	while (p->data_done < p->data_posted) {
		int ret = reap_no_msg(p, true, false);

		if (ret)
			return ret;
	}
	return 0;
}

static void prep_send(struct perf *p, struct lchan_sqe *sqe, size_t size,
		      uint64_t seq)
{
	lchan_prep_send(sqe, &p->data_mr, p->src, (uint32_t)size, seq);
}

static void prep_write(struct perf *p, struct lchan_sqe *sqe, size_t size,
		       uint64_t seq)
{
	lchan_prep_write(sqe, &p->data_mr, p->src, (uint32_t)size,
			 p->peer_target, p->peer_rkey, seq);
}

static void prep_read(struct perf *p, struct lchan_sqe *sqe, size_t size,
		      uint64_t seq)
{
	lchan_prep_read(sqe, &p->data_mr, p->dst, (uint32_t)size,
			p->peer_src, p->peer_rkey, seq);
}

static void prep_fetch_add(struct perf *p, struct lchan_sqe *sqe,
			   size_t size, uint64_t seq)
{
	(void)size;
	lchan_prep_fetch_add(sqe, &p->data_mr, p->fetched, p->peer_counter,
			     p->peer_rkey, 1, seq);
}

/* The test's operation; signalled every cq_mod-th data SQE. */
static int prep_data(struct perf *p, struct lchan_sqe *sqe, size_t size,
		     unsigned long i, unsigned long n)
{
	uint64_t seq = ++p->data_posted;

	p->ops->prep(p, sqe, size, seq);
	/* Operations the caller waits for are always signalled. */
	if (!p->ops->signal_all && seq % p->o.cq_mod && i + 1 != n)
		sqe->flags |= LCHAN_SQE_UNSIGNALED;
	return 0;
}

/* Wait for the next receive (busy or event) while accounting sends. */
static int wait_recv(struct perf *p, bool event, struct recvd *r)
{
	int ret;

	for (;;) {
		ret = reap(p, true, event, r);
		if (ret)
			return ret < 0 ? ret : 0;
	}
}

/* Room for another data SQE in the window we allow ourselves. */
static int window_wait(struct perf *p, bool event)
{
	while (p->data_posted - p->data_done >= p->o.tx_depth - 1) {
		int ret = reap_no_msg(p, true, event);

		if (ret)
			return ret;
	}
	return 0;
}

/* The test's operation @i of @n, handed to the kernel. */
static int post_data(struct perf *p, size_t size, unsigned long i,
		     unsigned long n)
{
	struct lchan_sqe *sqe = get_sqe(p);

	if (!sqe)
		return -ENOSPC;
	prep_data(p, sqe, size, i, n);
	return submit(p);
}

static int client_send_lat(struct perf *p, struct perf_round *rd)
{
	size_t size = rd->size;
	unsigned long n = rd->n, i;
	uint64_t *t = rd->t;
	struct recvd r;
	int ret;

	for (i = 0; i < n; i++) {
		uint64_t t0 = ticks();

		ret = window_wait(p, p->o.event);
		if (!ret)
			ret = post_data(p, size, i, n);
		if (!ret)
			ret = wait_recv(p, p->o.event, &r);
		if (ret)
			return ret;
		t[i] = ticks() - t0;
		if (r.len != size) {
			fprintf(stderr, "lchan_perf: reply %lu has %u bytes, not %zu\n",
				i, r.len, size);
			return -EIO;
		}
	}
	return 0;
}

/* Spin until the last byte of @buf reads @v; watch the CQ for errors. */
static int wait_byte(struct perf *p, volatile uint8_t *buf, uint8_t v)
{
	uint64_t t0 = 0;
	unsigned spins = 0;

	while (lchan_load_acquire(buf) != v) {
		if (++spins % 1024)
			continue;
		if (lchan_cq_ready(&p->chan)) {
			int ret = reap_ready(p);

			if (ret)
				return ret;
		}
		if (!t0)
			t0 = ticks();
		else if (ticks() - t0 > p->timeout_tsc) {
			fprintf(stderr, "lchan_perf: no write from the peer for %u s\n",
				p->o.timeout_s);
			perf_dump_chan("lchan_perf", &p->chan);
			return -ETIMEDOUT;
		}
	}
	return 0;
}

/* The marker of write_lat round @i: never 0, never the previous one. */
static uint8_t marker(unsigned long i)
{
	return (uint8_t)(i % 255 + 1);
}

static int write_ping(struct perf *p, size_t size, unsigned long i,
		      unsigned long n)
{
	int ret = reap_ready(p);

	if (!ret)
		ret = window_wait(p, false);
	if (ret)
		return ret;
	p->src[size - 1] = marker(i);
	return post_data(p, size, i, n);
}

static int client_write_lat(struct perf *p, struct perf_round *rd)
{
	size_t size = rd->size;
	unsigned long n = rd->n, i;
	uint64_t *t = rd->t;
	int ret;

	for (i = 0; i < n; i++) {
		uint64_t t0 = ticks();

		ret = write_ping(p, size, i, n);
		if (!ret)
			ret = wait_byte(p, p->target + size - 1, marker(i));
		if (ret)
			return ret;
		t[i] = ticks() - t0;
	}
	return 0;
}

/* READ or FETCH_ADD: one at a time, each waited for. */
static int client_one_sided_lat(struct perf *p, struct perf_round *rd)
{
	size_t size = rd->size;
	unsigned long n = rd->n, i;
	uint64_t *t = rd->t;
	int ret;

	for (i = 0; i < n; i++) {
		uint64_t t0 = ticks(), want = p->data_posted + 1;

		ret = post_data(p, size, i, n);
		while (!ret && p->data_done < want)
			ret = reap_no_msg(p, true, p->o.event);
		if (ret)
			return ret;
		t[i] = ticks() - t0;
		if (p->o.verify && p->ops->check_op) {
			ret = p->ops->check_op(p, i);
			if (ret)
				return ret;
		}
	}
	return 0;
}

/* atomic_lat: each FETCH_ADD returns the count before it. */
static int check_fetched(struct perf *p, unsigned long i)
{
	if (*p->fetched == i)
		return 0;
	fprintf(stderr, "lchan_perf: fetch_add %lu returned %" PRIu64 "\n", i,
		*p->fetched);
	return -EIO;
}

/*
 * Bandwidth: keep up to tx_depth - 1 operations in flight, handed to the
 * kernel @batch at a time, one in cq_mod signalled.  send_bw also keeps to
 * the receives the server has posted (credit).
 */
static int client_bw(struct perf *p, struct perf_round *rd)
{
	size_t size = rd->size;
	unsigned long n = rd->n, i = 0;
	uint64_t credit = rd->credit;
	int ret;

	while (p->data_done < n) {
		bool more;
		unsigned k = 0;
		struct recvd r;

		for (;;) {
			struct lchan_sqe *sqe;

			more = i < n &&
			       p->data_posted - p->data_done < p->o.tx_depth - 1 &&
			       (!p->ops->credits || p->data_posted < credit);
			if (!more || k == p->o.batch)
				break;
			sqe = lchan_get_sqe(&p->chan);
			if (!sqe)
				break;
			prep_data(p, sqe, size, i, n);
			i++;
			k++;
		}
		if (k) {
			ret = submit(p);
			if (ret)
				return ret;
		}
		/* Wait only when nothing more may be posted. */
		ret = reap(p, !more, p->o.event, &r);
		if (ret == -EAGAIN)
			continue;
		if (ret < 0)
			return ret;
		if (ret == 1) {
			struct perf_msg m;

			ret = check_msg(&r, &m, M_CREDIT);
			if (ret)
				return ret;
			if (m.count > credit)
				credit = m.count;
		}
	}
	return 0;
}

static int client_run(struct perf *p, size_t size, unsigned long n,
		      struct perf_result *res)
{
	struct perf_msg m = { .type = M_START, .size = size, .iters = n };
	struct perf_round rd = { .size = size, .n = n };
	struct perf_meter mt;
	int ret;

	memset(res, 0, sizeof(*res));
	res->size = size;
	res->iters = n;
	res->verify = p->o.verify ? "ok" : "off";
	if (p->ops->lat) {
		rd.t = calloc(n, sizeof(*rd.t));
		if (!rd.t)
			return -ENOMEM;
	}
	fill_pattern(p->src, size);
	memset(p->target, 0, size);
	memset(p->dst, 0, size);
	ret = send_ctrl(p, &m);
	if (!ret)
		ret = recv_ctrl(p, &m, M_READY);
	if (ret)
		goto out;
	/* One receive stays for END; the rest is ours to fill. */
	rd.credit = m.count - 1;
	p->data_posted = 0;
	p->data_done = 0;

	perf_meter_start(&mt, p->o.poller ? (int)p->chan.info.id : -1,
			 perf_chan_stat(p->chan.info.id, "enters"));
	ret = p->ops->client(p, &rd);
	perf_meter_stop(&mt, res, !p->ops->lat, &p->tsc_per_us);
	perf_meter_enters(&mt, res,
			  perf_chan_stat(p->chan.info.id, "enters"));
	if (!ret)
		ret = drain(p);
	if (ret)
		goto out;
	if (rd.t)
		perf_lat_stats(res, rd.t, n, 1.0 / p->tsc_per_us /
			       (p->ops->halve ? 2.0 : 1.0));

	/* Our own checks: what we read, or what the server wrote. */
	if (p->o.verify && p->ops->client_check &&
	    !p->ops->client_check(p, &rd))
		res->verify = "fail";

	m = (struct perf_msg){ .type = M_END, .size = size, .iters = n };
	ret = send_ctrl(p, &m);
	/* Credits may still be on their way before the result. */
	while (!ret) {
		ret = recv_ctrl(p, &m, 0);
		if (ret || m.type == M_RESULT)
			break;
		if (m.type != M_CREDIT) {
			fprintf(stderr, "lchan_perf: control message %u where a result belongs\n",
				m.type);
			ret = -EPROTO;
		}
	}
	if (ret)
		goto out;
	if (m.status)
		res->verify = "fail";
out:
	free(rd.t);
	return ret;
}

/* --------------------------------------------------------- server side */

/* The client's message @i of the round: its size, and (@verify) its data. */
static int server_recv(struct perf *p, const struct perf_round *rd,
		       unsigned long i, bool verify, struct recvd *r)
{
	int ret = wait_recv(p, p->flags_event, r);

	if (ret)
		return ret;
	if (r->len != rd->size) {
		fprintf(stderr, "lchan_perf: message %lu has %u bytes, not %zu\n",
			i, r->len, rd->size);
		return -EIO;
	}
	if (verify && !check_pattern(r->buf, rd->size, rd->size)) {
		fprintf(stderr, "lchan_perf: message %lu corrupt\n", i);
		return -EIO;
	}
	return 0;
}

static int server_send_lat(struct perf *p, struct perf_round *rd)
{
	size_t size = rd->size;
	unsigned long n = rd->n, i;
	struct recvd r;
	int ret;

	for (i = 0; i < n; i++) {
		ret = server_recv(p, rd, i, p->flags_verify, &r);
		if (!ret)
			ret = window_wait(p, p->flags_event);
		if (!ret)
			ret = post_data(p, size, i, n);
		if (ret)
			return ret;
	}
	return 0;
}

static int server_write_lat(struct perf *p, struct perf_round *rd)
{
	size_t size = rd->size;
	unsigned long n = rd->n, i;
	int ret;

	for (i = 0; i < n; i++) {
		ret = wait_byte(p, p->target + size - 1, marker(i));
		if (!ret)
			ret = write_ping(p, size, i, n);
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * send_bw receiver: count @n messages; every quarter of the receive queue
 * re-posted, tell the client how many receives it may fill (CREDIT).
 */
static int server_send_bw(struct perf *p, struct perf_round *rd)
{
	uint64_t base = p->rq_posted, granted = 0;
	unsigned quarter = p->o.rx_depth / 4 ? p->o.rx_depth / 4 : 1;
	unsigned long n = rd->n, i;
	struct recvd r;
	int ret;

	for (i = 0; i < n; i++) {
		ret = server_recv(p, rd, i, false, &r);
		if (ret)
			return ret;
		rd->last = r.buf;
		/* reap() prepared a new receive; hand a quarter over at once. */
		if (p->rq_posted - base - granted >= quarter && i + 1 < n) {
			struct perf_msg m = { .type = M_CREDIT };

			ret = submit(p);
			if (ret)
				return ret;
			granted = p->rq_posted - base;
			m.count = p->o.rx_depth - 1 + granted;
			ret = send_ctrl(p, &m);
			if (ret)
				return ret;
		}
	}
	return submit(p);
}

/* ------------------------------------------------------------ the tests */

/* What the peer wrote; write_lat's last byte is the round's marker. */
static bool check_target(struct perf *p, const struct perf_round *rd)
{
	return check_pattern(p->target, rd->size, rd->size);
}

static bool check_target_lat(struct perf *p, const struct perf_round *rd)
{
	return check_pattern(p->target, rd->size, rd->size - 1);
}

/* What we read. */
static bool check_dst(struct perf *p, const struct perf_round *rd)
{
	return check_pattern(p->dst, rd->size, rd->size);
}

static bool check_last(struct perf *p, const struct perf_round *rd)
{
	(void)p;
	return rd->last && check_pattern(rd->last, rd->size, rd->size);
}

/* One FETCH_ADD of 1 per operation. */
static bool check_counter(struct perf *p, const struct perf_round *rd)
{
	return *p->counter == rd->n;
}

static const struct perf_test perf_tests[] = {
	{
		.name = "send_lat", .lat = true, .halve = true, .def_size = 2,
		.prep = prep_send,
		.client = client_send_lat,
		.server = server_send_lat,
	}, {
		.name = "write_lat", .lat = true, .halve = true, .def_size = 2,
		.polls_memory = true,
		.prep = prep_write,
		.client = client_write_lat,
		.server = server_write_lat,
		.client_check = check_target_lat,
		.server_check = check_target_lat,
	}, {
		.name = "read_lat", .lat = true, .def_size = 2,
		.signal_all = true,
		.prep = prep_read,
		.client = client_one_sided_lat,
		.client_check = check_dst,
	}, {
		.name = "atomic_lat", .lat = true, .def_size = 8,
		.fixed_size = 8, .signal_all = true,
		.feature = LCHAN_FEATURE_ATOMIC,
		.no_feature = "the device has no atomic operations (LCHAN_FEATURE_ATOMIC)",
		.prep = prep_fetch_add,
		.client = client_one_sided_lat,
		.check_op = check_fetched,
		.server_check = check_counter,
	}, {
		.name = "send_bw", .def_size = 65536,
		.credits = true,
		.prep = prep_send,
		.client = client_bw,
		.server = server_send_bw,
		.server_check = check_last,
	}, {
		.name = "write_bw", .def_size = 65536,
		.prep = prep_write,
		.client = client_bw,
		.server_check = check_target,
	}, {
		.name = "read_bw", .def_size = 65536,
		.prep = prep_read,
		.client = client_bw,
		.client_check = check_dst,
	},
};

#define PERF_NTESTS	(sizeof(perf_tests) / sizeof(perf_tests[0]))

/* ------------------------------------------------------------ the server */

/* Serve one START .. RESULT round. */
static int server_round(struct perf *p, const struct perf_msg *start)
{
	struct perf_msg m = { .type = M_READY };
	struct perf_round rd = { .size = start->size, .n = start->iters };
	size_t size = start->size;
	int ret;

	if (size > p->max_size || !size) {
		fprintf(stderr, "lchan_perf: size %zu out of range\n", size);
		return -EPROTO;
	}
	fill_pattern(p->src, size);
	memset(p->target, 0, size);
	*p->counter = 0;
	p->data_posted = 0;
	p->data_done = 0;
	/* Every receive is posted: the client may fill all but one. */
	ret = submit(p);
	if (!ret)
		ret = receives_taken(p);
	if (ret)
		return ret;
	m.count = p->o.rx_depth;
	ret = send_ctrl(p, &m);
	if (ret)
		return ret;

	/* One-sided tests: nothing to do but wait (sleeping) for END. */
	if (p->ops->server)
		ret = p->ops->server(p, &rd);
	if (!ret)
		ret = drain(p);
	if (ret)
		return ret;
	ret = recv_ctrl(p, &m, M_END);
	if (ret)
		return ret;

	m = (struct perf_msg){ .type = M_RESULT };
	if (p->flags_verify && p->ops->server_check &&
	    !p->ops->server_check(p, &rd))
		m.status = 1;
	m.value = *p->counter;
	if (m.status)
		fprintf(stderr, "lchan_perf: %s of %zu bytes: data check failed\n",
			p->ops->name, size);
	return send_ctrl(p, &m);
}

/*
 * After the last BYE: the client closes once it has it, and its close is
 * the answer.  The BYE's own completion is not: a peer that closes at once
 * can make siw fail a SEND whose bytes it has (the flush of a request
 * still in progress reports a local QP operation error).  What completes
 * meanwhile is taken unseen.
 */
static int wait_peer_close(struct perf *p)
{
	struct pollfd pfd = { .fd = p->chan.fd, .events = POLLRDHUP };
	struct lchan_cqe *cqe;
	int ret;

	ret = poll(&pfd, 1, (int)p->o.timeout_s * 1000);
	while (!lchan_peek_cqe(&p->chan, &cqe))
		lchan_cqe_seen(&p->chan);
	if (ret > 0)
		return 0;
	if (ret < 0)
		return -errno;
	fprintf(stderr, "lchan_perf: the client did not close within %u s\n",
		p->o.timeout_s);
	perf_dump_chan("lchan_perf", &p->chan);
	return -ETIMEDOUT;
}

static int run_server(struct perf *p)
{
	struct lchan_listener lst;
	struct lchan_opts opts;
	struct perf_msg m;
	struct recvd r;
	int ret;

	ret = perf_listen(&p->ctx, &p->o, "lchan_perf", &lst);
	if (ret)
		return ret;
	chan_opts(p, &opts);
	ret = lchan_accept(&lst, &opts, &p->chan);
	lchan_listener_close(&lst);
	if (ret) {
		fail("accept", ret);
		return ret;
	}

	/* One receive for HELLO: the data buffers' size comes with it. */
	ret = setup_ctrl(p);
	if (ret)
		return ret;
	{
		struct lchan_rqe *rqe = lchan_get_rqe(&p->chan);

		lchan_prep_recv(rqe, &p->ctrl_mr, p->ctrl + CTRL_BUFS * CTRL_SIZE,
				CTRL_SIZE, 0);
	}
	ret = submit(p);
	if (!ret)
		ret = receives_taken(p);
	if (!ret)
		ret = establish(p);
	if (ret)
		return ret;

	/* The first CQE is that receive; it is not a slot. */
	{
		struct lchan_cqe *cqe;

		ret = lchan_wait_cqe(&p->chan, &cqe, (int)p->o.timeout_s * 1000);
		if (ret) {
			fail("waiting for the client", ret);
			return ret;
		}
		if (cqe->status || cqe->opcode != LCHAN_CQE_RECV) {
			fprintf(stderr, "lchan_perf: first message: %s\n",
				lchan_cqe_status_str(cqe->status));
			lchan_cqe_seen(&p->chan);
			return -EIO;
		}
		r.buf = p->ctrl + CTRL_BUFS * CTRL_SIZE;
		r.len = cqe->byte_len;
		lchan_cqe_seen(&p->chan);
	}
	ret = check_msg(&r, &m, M_HELLO);
	if (ret)
		return ret;
	if (m.test >= PERF_NTESTS) {
		fprintf(stderr, "lchan_perf: unknown test %u\n", m.test);
		return -EPROTO;
	}
	p->o.test = (int)m.test;
	p->ops = &perf_tests[m.test];
	p->flags_event = m.flags & F_EVENT;
	p->flags_verify = m.flags & F_VERIFY;
	learn_peer(p, &m);
	ret = setup_data(p, m.size);
	if (!ret)
		ret = fill_rq(p);
	if (ret)
		return ret;
	m = (struct perf_msg){ .type = M_HELLO, .count = p->o.rx_depth };
	describe_self(p, &m);
	ret = send_ctrl(p, &m);

	while (!ret) {
		ret = recv_ctrl(p, &m, 0);
		if (ret)
			break;
		if (m.type == M_BYE) {
			m = (struct perf_msg){ .type = M_BYE };
			ret = send_ctrl(p, &m);
			if (!ret)
				ret = wait_peer_close(p);
			break;
		}
		if (m.type != M_START) {
			fprintf(stderr, "lchan_perf: control message %u where START belongs\n",
				m.type);
			ret = -EPROTO;
			break;
		}
		ret = server_round(p, &m);
	}
	return ret;
}

/* ---------------------------------------------------------------- output */

static void print_header(struct perf *p)
{
	perf_print_title(&p->o, "lchan_perf", p->ops->name, p->device,
			 p->chan.info.id);
	printf(" Completions    : %s\n", p->o.event ? "event (poll(2))" :
	       "busy polling of the CQ ring");
	printf(" TX depth       : %u  RX depth: %u", p->o.tx_depth, p->o.rx_depth);
	if (!p->ops->lat)
		printf("  batch: %u  CQ moderation: %u", p->o.batch, p->o.cq_mod);
	printf("\n");
	perf_print_columns(&p->o, !p->ops->lat ? NULL : p->ops->halve ?
			   "RTT/2 (one way)" : "whole operation");
}

static void print_json(struct perf *p, const struct perf_result *res,
		       unsigned n, const char *skipped)
{
	struct json j = { 0 };

	perf_json_head(&j, &p->o, "lchan_perf", p->ops->name);
	perf_json_chan(&j, p->device, &p->chan);
	json_uint(&j, "tx_depth", p->o.tx_depth);
	json_uint(&j, "rx_depth", p->o.rx_depth);
	json_uint(&j, "batch", p->o.batch);
	json_uint(&j, "cq_mod", p->o.cq_mod);
	json_str(&j, "latency", !p->ops->lat ? "none" :
		      p->ops->halve ? "rtt/2" : "operation");
	if (skipped)
		json_str(&j, "skipped", skipped);
	perf_json_results(&j, res, n, p->ops->lat);
}

/* ---------------------------------------------------------------- client */

static int run_client(struct perf *p)
{
	struct lchan_opts opts;
	struct perf_results rs;
	struct perf_msg m;
	const char *skipped = NULL;
	unsigned i;
	int ret;

	ret = perf_results_init(&rs, &p->o);
	if (ret)
		return ret;

	chan_opts(p, &opts);
	opts.flags |= LCHAN_OPEN_EXCHANGE;	/* the peer is lchan_perf */
	ret = lchan_connect(&p->ctx, p->o.host, p->o.port, &opts, &p->chan);
	if (ret) {
		fail("connect", ret);
		goto out;
	}
	ret = setup_ctrl(p);
	if (!ret)
		ret = setup_data(p, rs.max);
	if (!ret)
		ret = fill_rq(p);
	if (!ret)
		ret = establish(p);
	if (ret)
		goto out;

	m = (struct perf_msg){
		.type = M_HELLO,
		.test = (uint32_t)p->o.test,
		.flags = (p->o.verify ? F_VERIFY : 0) | (p->o.event ? F_EVENT : 0),
		.size = rs.max,
	};
	describe_self(p, &m);
	ret = send_ctrl(p, &m);
	if (!ret)
		ret = recv_ctrl(p, &m, M_HELLO);
	if (ret)
		goto out;
	learn_peer(p, &m);

	if ((p->features & p->ops->feature) != p->ops->feature)
		skipped = p->ops->no_feature;
	if (p->ops->polls_memory && p->o.event && !p->o.json)
		fprintf(stderr, "lchan_perf: %s polls memory: --event does not apply\n",
			p->ops->name);
	if (!skipped && !p->o.json)
		print_header(p);
	for (i = 0; !skipped && i < p->o.nsizes; i++) {
		size_t size = p->o.sizes[i];

		if (size > p->chan.info.max_msg_size) {
			fprintf(stderr, "lchan_perf: %zu bytes is above the channel's limit (%u): skipped\n",
				size, p->chan.info.max_msg_size);
			continue;
		}
		ret = client_run(p, size, p->o.iters, &rs.res[rs.n]);
		if (ret)
			break;
		perf_results_add(&rs, &p->o, p->ops->lat);
	}
	if (!ret) {
		m = (struct perf_msg){ .type = M_BYE };
		ret = send_ctrl(p, &m);
		if (!ret)
			ret = recv_ctrl(p, &m, M_BYE);
	}
	if (!ret && skipped && !p->o.json)
		printf("lchan_perf: %s: skipped: %s\n", p->ops->name,
		       skipped);
	if (!ret && p->o.json)
		print_json(p, rs.res, rs.n, skipped);
	if (!ret && rs.bad)
		ret = -EIO;
	if (!ret && skipped)
		ret = 1;
out:
	free(rs.res);
	return ret;
}

/* ---------------------------------------------------------------- options */

static void usage(void)
{
	printf(
"usage: lchan_perf -s [-a ADDR] [-p PORT] [--mode M] [--event]\n"
"       lchan_perf -c ADDR [-p PORT] [-t TEST] [-S SIZES] [--all] [options]\n"
"\n"
"  -s, --server       server (the client says what to run)\n"
"  -c, --client ADDR  client: connect to the server at ADDR\n"
"  -a, --addr ADDR    the address: where the server listens (default any),\n"
"                     the server a client connects to (as -c ADDR)\n"
"  -p, --port PORT    port, 1..65535 (default 18515)\n"
"  -t, --test TEST    send_lat (default), write_lat, read_lat, atomic_lat,\n"
"                     send_bw, write_bw, read_bw\n"
"  -S, --size SIZES   message size, or a comma list (K, M, G suffixes), each\n"
"                     1..1G; default 2 for latency, 8 for atomic_lat, 64K\n"
"                     for bandwidth\n"
"      --all          client: every power of two from 2 to the -S size\n"
"                     (default 64K)\n"
"  -n, --iters N      iterations per size (default 1000, 5000 for bandwidth)\n"
"  -b, --batch N      bandwidth: operations per submit (default 16)\n"
"  -Q, --cq-mod N     one completion per N operations (default tx-depth/4\n"
"                     for bandwidth, tx-depth/2 for latency)\n"
"      --tx-depth N   send ring entries, 4..4096 (default 128)\n"
"      --rx-depth N   receive ring entries, 4..4096 (default 512)\n"
"  -m, --mode M       doorbell (default: one ENTER per submit), poller\n"
"                     (a kernel thread submits; no system call), or\n"
"                     direct (the CQ polled in ENTER; IB/RoCE)\n"
"      --poller-idle MS   poller: idle time before it sleeps (default 1000)\n"
"      --poller-cpu CPU   poller: pin the thread\n"
"  -e, --event        sleep in poll(2) for completions (default: busy poll)\n"
"  -V, --verify       check the data moved (outside the timed loop)\n"
"  -J, --json         machine-readable results on stdout\n"
"      --timeout S    give up after S seconds without progress (default 30)\n"
"  -h, --help         this text\n"
"\n"
"Exit status: 0 done, 1 error or data check failed, 2 usage error,\n"
"3 the lchan module is not loaded, 4 test skipped.\n");
}

static int find_test(const char *name)
{
	int i;

	for (i = 0; i < (int)PERF_NTESTS; i++)
		if (!strcmp(name, perf_tests[i].name))
			return i;
	return -1;
}

static void parse_args(struct perf *p, int argc, char **argv)
{
	static const struct perf_tool tool = {
		"lchan_perf", PERF_FOR_LCHAN, "18515", find_test,
		"send_lat, write_lat, read_lat, atomic_lat, send_bw, write_bw, read_bw",
		usage,
	};

	perf_opts_parse(&p->o, &tool, argc, argv);
	p->ops = &perf_tests[p->o.test];
	if (p->ops->fixed_size)
		p->o.all = false;
	perf_opts_finish(&p->o, p->ops->def_size);
	if (p->ops->fixed_size) {
		p->o.sizes[0] = p->ops->fixed_size;
		p->o.nsizes = 1;
	}
	/* The kernel rounds rings up to powers of two; so do we. */
	while (p->o.tx_depth & (p->o.tx_depth - 1))
		p->o.tx_depth++;
	while (p->o.rx_depth & (p->o.rx_depth - 1))
		p->o.rx_depth++;
	if (!p->o.iters)
		p->o.iters = p->ops->lat ? 1000 : 5000;
	if (!p->o.cq_mod)
		p->o.cq_mod = p->ops->lat ? p->o.tx_depth / 2 :
						     p->o.tx_depth / 4;
	if (p->o.cq_mod > p->o.tx_depth / 2)
		p->o.cq_mod = p->o.tx_depth / 2;
}

int main(int argc, char **argv)
{
	struct perf p = { 0 };
	int ret;

	parse_args(&p, argc, argv);
	p.timeout_tsc = perf_calibrate(p.o.timeout_s, &p.tsc_per_us);
	p.chan.fd = -1;
	p.ctx.fd = -1;

	ret = perf_open_ctx(&p.ctx, &p.o, "lchan_perf");
	if (ret) {
		lchan_ctx_close(&p.ctx);
		return ret;
	}
	ret = p.o.server ? run_server(&p) : run_client(&p);
	lchan_chan_close(&p.chan);
	lchan_ctx_close(&p.ctx);
	free(p.data);
	free(p.ctrl);
	if (ret == 1)
		return CLI_EXIT_SKIP;
	return ret ? CLI_EXIT_FAIL : 0;
}
