// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * lchan_interop: lchan against programs written for rdma_cm and verbs,
 * not for lchan, in either role, every byte checked.
 *
 *   lchan_interop rping -s|-c -a ADDR [-p PORT] [-C COUNT] [-S SIZE] [-m MODE]
 *   lchan_interop rdma-cm -s|-c -a ADDR [-p PORT] [-m MODE]
 *
 * rping (rdmacm-utils): per ping the client advertises a start buffer,
 * which the server RDMA READs, then an rdma buffer, into which the server
 * RDMA WRITEs what it read; each time the server answers with a 16-byte
 * go-ahead.  `rping -V` compares the two buffers.  rdma-cm: librdmacm's
 * examples rdma_client and rdma_server, one 16-byte SEND each way, the
 * client's first, then the program disconnects.  The protocols are those
 * of rdma-core's librdmacm/examples/{rping,rdma_server,rdma_client}.c
 * (v44.0, Debian 12).
 *
 * The peer is a plain rdma_cm program: lchan's iWARP opening exchange
 * (LCHAN_OPEN_EXCHANGE) is never asked for, and in both protocols the
 * connecting side sends first, as MPA wants.  Receives are posted before
 * the establish (LCHAN_DEFER_ESTABLISH): iWARP has no receiver-not-ready
 * retry.  One operation at a time, each waited for, as the peers do: a
 * buffer is never reused while the device may still read it.
 *
 * Every wait is bounded by -t; one that runs out prints what it waited
 * for and the channel's rings and sysfs attributes.  Exit status: 0 the
 * exchange completed and every byte was checked; 1 set-up (listen,
 * connect, accept); 2 usage; 3 the lchan module is not loaded (cli.h);
 * 5 the peer's data, a length or an address was wrong; 6 an operation
 * failed or the peer broke off; 7 nothing within -t.  4 is left out:
 * kselftest and the rig read it as a skip.
 */
#define _GNU_SOURCE
#include <endian.h>
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "liblchan.h"
#include "cli.h"
#include "perf_util.h"

#define IC_TOOL		"lchan_interop"
/* rdma_server's and rdma_client's messages; rping's address message too. */
#define IC_MSG		16
/* Receives kept posted: each peer has one message in flight. */
#define IC_NRECV	2
/* Fills lchan's buffers: a check of the peer's bytes never sees stale ones. */
#define IC_POISON	0xa5
#define IC_PAGE		4096
#define IC_CONNECT_MS	10000
/* The poller sleeps after 10 ms idle, so it is also woken mid-run. */
#define IC_POLLER_IDLE_MS 10
/* rping's -S range: its message's prefix and INT_MAX's digits fit. */
#define IC_RPING_MIN	26
#define IC_RPING_MAX	65535

/* The tools' shared statuses (cli.h), then this tool's own. */
enum ic_exit {
	IC_EXIT_OK = 0,
	IC_EXIT_SETUP = CLI_EXIT_FAIL,
	IC_EXIT_DATA = 5,
	IC_EXIT_BROKEN = 6,
	IC_EXIT_STALL = 7,
};

enum ic_proto { IC_RPING, IC_RDMA_CM };
enum ic_mode { IC_DOORBELL, IC_POLLER, IC_DIRECT };

static const char *const ic_proto_name[] = { "rping", "rdma-cm" };
static const char *const ic_mode_name[] = { "doorbell", "poller", "direct" };
/* The peers' own default ports. */
static const char *const ic_default_port[] = { "7174", "7471" };

/* rping's struct rping_rdma_info as it goes on the wire: big-endian. */
struct ic_rping_info {
	uint64_t buf;
	uint32_t rkey;
	uint32_t size;
};

_Static_assert(sizeof(struct ic_rping_info) == IC_MSG, "rping_rdma_info");

struct ic {
	/* options */
	enum ic_proto proto;
	int server;			/* -1 until -s or -c */
	const char *addr;
	const char *port;
	unsigned count;			/* rping's pings */
	unsigned size;			/* rping's bytes per ping */
	enum ic_mode mode;
	double secs;			/* the longest wait for one step */
	char who[24];			/* "rping client", for messages */

	struct lchan_ctx ctx;
	struct lchan_chan chan;
	struct lchan_listener lst;
	struct lchan_mr mr;
	bool have_ctx, have_chan, have_lst, have_mr;
	uint8_t *buf;			/* IC_NRECV receive slots, then sends */
	size_t slot;			/* bytes per slot */
	unsigned nsend;			/* send slots */
	unsigned access;		/* the MR's */
	unsigned posted, done;		/* SQEs, and their completions */
	uint8_t want;			/* LCHAN_CQE_* of the SQE in flight */
	bool have_recv;			/* a RECV reaped, not yet taken */
	struct lchan_cqe recv;
	char step[96];			/* what it waits for now */
};

static const uint8_t ic_zeros[IC_MSG];

static int __attribute__((format(printf, 3, 4)))
ic_fail(const struct ic *ic, int status, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, IC_TOOL ": %s: ", ic->who);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return status;
}

static void __attribute__((format(printf, 2, 3)))
ic_step(struct ic *ic, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(ic->step, sizeof(ic->step), fmt, ap);
	va_end(ap);
}

/* A wait that ran out: what it waited for, then where the channel stands. */
static int ic_stall(const struct ic *ic)
{
	ic_fail(ic, IC_EXIT_STALL, "nothing in %g s waiting for %s", ic->secs,
		ic->step);
	if (ic->have_chan)
		perf_dump_chan(IC_TOOL, &ic->chan);
	return IC_EXIT_STALL;
}

static int ic_wait_ms(const struct ic *ic)
{
	return (int)(ic->secs * 1000);
}

static const char *ic_op_name(unsigned op)
{
	switch (op) {
	case LCHAN_CQE_SEND: return "SEND";
	case LCHAN_CQE_RECV: return "RECV";
	case LCHAN_CQE_WRITE: return "WRITE";
	case LCHAN_CQE_READ: return "READ";
	}
	return "operation";
}

static uint8_t *ic_recv_slot(struct ic *ic, unsigned i)
{
	return ic->buf + (size_t)i * ic->slot;
}

static uint8_t *ic_send_slot(struct ic *ic, unsigned i)
{
	return ic->buf + (size_t)(IC_NRECV + i) * ic->slot;
}

static int ic_post_recv(struct ic *ic, unsigned i)
{
	struct lchan_rqe *rqe = lchan_get_rqe(&ic->chan);

	if (!rqe)
		return -ENOSPC;
	lchan_prep_recv(rqe, &ic->mr, ic_recv_slot(ic, i), ic->slot, i);
	return 0;
}

/*
 * The buffer (poisoned) and the context, a poller one in poller mode.
 * @slot bytes per slot, @nsend send slots after the receive slots.
 */
static int ic_open(struct ic *ic, size_t slot, unsigned nsend,
		   unsigned access)
{
	size_t len = slot * (IC_NRECV + nsend);
	int ret;

	ic->slot = slot;
	ic->nsend = nsend;
	ic->access = access;
	ic->buf = aligned_alloc(IC_PAGE,
				(len + IC_PAGE - 1) & ~(size_t)(IC_PAGE - 1));
	if (!ic->buf)
		return ic_fail(ic, IC_EXIT_SETUP, "%zu bytes: %s", len,
			       strerror(ENOMEM));
	memset(ic->buf, IC_POISON, len);
	ret = lchan_ctx_open(&ic->ctx);
	if (ret)
		return cli_open_failed(LCHAN_DEVICE_PATH, ret);
	ic->have_ctx = true;
	if (ic->mode == IC_POLLER) {
		ret = lchan_ctx_setup_poller(&ic->ctx, IC_POLLER_IDLE_MS, -1,
					     NULL);
		if (ret)
			return ic_fail(ic, IC_EXIT_SETUP, "poller: %s",
				       strerror(-ret));
	}
	return 0;
}

/* Connect and accept options; never LCHAN_OPEN_EXCHANGE (plain peers). */
static struct lchan_opts ic_opts(const struct ic *ic)
{
	return (struct lchan_opts){
		.timeout_ms = IC_CONNECT_MS,
		.flags = LCHAN_DEFER_ESTABLISH |
			 (ic->mode == IC_DIRECT ? LCHAN_DIRECT_POLL : 0),
	};
}

/* Register the buffer, post the receives, establish; -errno. */
static int ic_prepare(struct ic *ic)
{
	unsigned i;
	int ret;

	ret = lchan_mr_reg(&ic->ctx, &ic->chan, ic->buf,
			   ic->slot * (IC_NRECV + ic->nsend), ic->access,
			   &ic->mr);
	if (ret)
		return ret;
	ic->have_mr = true;
	for (i = 0; i < IC_NRECV; i++) {
		ret = ic_post_recv(ic, i);
		if (ret)
			return ret;
	}
	ret = lchan_submit(&ic->chan);
	if (ret < 0)
		return ret;
	return lchan_establish(&ic->chan, IC_CONNECT_MS);
}

/*
 * Undo a connection attempt that failed, for the next one: the channel
 * first, whose posted receives hold the MR.
 */
static void ic_drop_chan(struct ic *ic)
{
	lchan_chan_close(&ic->chan);
	ic->have_chan = false;
	if (ic->have_mr)
		lchan_mr_dereg(&ic->ctx, &ic->mr);
	ic->have_mr = false;
}

static void ic_connected(struct ic *ic)
{
	char dev[64];

	perf_chan_device(ic->chan.info.id, dev, sizeof(dev));
	printf("connected: channel %u on %s, %s\n", ic->chan.info.id, dev,
	       ic_mode_name[ic->mode]);
	fflush(stdout);
}

/*
 * lchan as the client.  The program may not listen yet: a refused
 * attempt is tried again until it does or -t has passed.
 */
static int ic_connect(struct ic *ic)
{
	struct lchan_opts opts = ic_opts(ic);
	double end = now_s() + ic->secs;
	int ret;

	ic_step(ic, "a connection to %s port %s", ic->addr, ic->port);
	for (;;) {
		ret = lchan_connect(&ic->ctx, ic->addr, ic->port, &opts,
				    &ic->chan);
		if (!ret) {
			ic->have_chan = true;
			ret = ic_prepare(ic);
			if (!ret) {
				ic_connected(ic);
				return 0;
			}
			ic_drop_chan(ic);
		}
		if (ret != -ECONNREFUSED || now_s() > end)
			break;
		usleep(50000);
	}
	return ic_fail(ic, IC_EXIT_SETUP, "connect to %s port %s: %s%s",
		       ic->addr, ic->port, strerror(-ret),
		       ret == -ECONNREFUSED ? ", for as long as -t" : "");
}

/*
 * lchan as the server: listen, say so on stdout (the peer may start
 * then), take one connection within -t, post the receives, establish.
 */
static int ic_accept(struct ic *ic)
{
	struct lchan_opts opts = ic_opts(ic);
	double end = now_s() + ic->secs;
	struct pollfd pfd;
	char name[80];
	int ret;

	ret = lchan_listen(&ic->ctx, ic->addr, ic->port, 1, LCHAN_FD_NONBLOCK,
			   &ic->lst);
	if (ret)
		return ic_fail(ic, IC_EXIT_SETUP, "listen on %s port %s: %s",
			       ic->addr, ic->port, strerror(-ret));
	ic->have_lst = true;
	lchan_addr_format(&ic->lst.addr, name, sizeof(name));
	printf("listening on %s\n", name);
	fflush(stdout);

	pfd = (struct pollfd){ .fd = ic->lst.fd, .events = POLLIN };
	ic_step(ic, "a connection on %s", name);
	do {
		ret = poll(&pfd, 1, 100) < 0 ? -errno : 0;
		if (!ret)
			ret = lchan_accept(&ic->lst, &opts, &ic->chan);
	} while ((ret == -EAGAIN || ret == -EINTR) && now_s() < end);
	if (ret == -EAGAIN)
		return ic_stall(ic);
	if (ret)
		return ic_fail(ic, IC_EXIT_SETUP, "accept: %s", strerror(-ret));
	ic->have_chan = true;
	ret = ic_prepare(ic);
	if (ret)
		return ic_fail(ic, IC_EXIT_SETUP,
			       "set-up of the accepted channel: %s",
			       strerror(-ret));
	lchan_listener_close(&ic->lst);
	ic->have_lst = false;
	ic_connected(ic);
	return 0;
}

/*
 * The next CQE: a RECV is kept for ic_recv(), anything else must be the
 * completion of the one SQE in flight.  Every one must have succeeded.
 */
static int ic_reap(struct ic *ic)
{
	struct lchan_cqe *p, cqe;
	int ret;

	ret = lchan_wait_cqe(&ic->chan, &p, ic_wait_ms(ic));
	if (ret == -ETIMEDOUT)
		return ic_stall(ic);
	if (ret)
		return ic_fail(ic, IC_EXIT_BROKEN, "%s: %s", ic->step,
			       strerror(-ret));
	cqe = *p;
	lchan_cqe_seen(&ic->chan);
	if (cqe.status == LCHAN_CQE_WR_FLUSH_ERR)
		return ic_fail(ic, IC_EXIT_BROKEN,
			       "%s: the connection ended (a %s was flushed)",
			       ic->step, ic_op_name(cqe.opcode));
	if (cqe.status != LCHAN_CQE_OK) {
		ic_fail(ic, IC_EXIT_BROKEN,
			"%s: %s failed: %s (status %u, vendor error %u)",
			ic->step, ic_op_name(cqe.opcode),
			lchan_cqe_status_str(cqe.status), cqe.status,
			cqe.vendor_err);
		perf_dump_chan(IC_TOOL, &ic->chan);
		return IC_EXIT_BROKEN;
	}
	if (cqe.opcode == LCHAN_CQE_RECV) {
		if (ic->have_recv)
			return ic_fail(ic, IC_EXIT_BROKEN,
				       "%s: a second message before the first was answered",
				       ic->step);
		ic->recv = cqe;
		ic->have_recv = true;
		return 0;
	}
	if (ic->done >= ic->posted || cqe.opcode != ic->want)
		return ic_fail(ic, IC_EXIT_BROKEN,
			       "%s: a %s completion where %s belongs",
			       ic->step, ic_op_name(cqe.opcode),
			       ic->done < ic->posted ? ic_op_name(ic->want) :
			       "none");
	ic->done++;
	return 0;
}

/* Submit the SQE just filled, whose completion will be @want. */
static int ic_post(struct ic *ic, uint8_t want)
{
	int ret;

	ic->want = want;
	ic->posted++;
	ret = lchan_submit(&ic->chan);
	if (ret < 0)
		return ic_fail(ic, IC_EXIT_BROKEN, "%s: submit: %s", ic->step,
			       strerror(-ret));
	return 0;
}

/* Submit the SQE just filled and wait for its completion (@want). */
static int ic_run(struct ic *ic, uint8_t want)
{
	int st = ic_post(ic, want);

	while (!st && ic->done < ic->posted)
		st = ic_reap(ic);
	return st;
}

/* The SQE to fill (one operation at a time: the ring has room). */
static int ic_sqe(struct ic *ic, struct lchan_sqe **sqe)
{
	*sqe = lchan_get_sqe(&ic->chan);
	if (!*sqe)
		return ic_fail(ic, IC_EXIT_BROKEN, "%s: the send ring is full",
			       ic->step);
	return 0;
}

/* Fill an SQE: SEND @len bytes of @msg from send slot 0. */
static int ic_prep_send(struct ic *ic, const void *msg, uint32_t len)
{
	uint8_t *p = ic_send_slot(ic, 0);
	struct lchan_sqe *sqe;
	int st = ic_sqe(ic, &sqe);

	if (st)
		return st;
	memcpy(p, msg, len);
	lchan_prep_send(sqe, &ic->mr, p, len, ic->posted + 1);
	return 0;
}

/* SEND @len bytes of @msg and wait for its completion. */
static int ic_send(struct ic *ic, const void *msg, uint32_t len)
{
	int st = ic_prep_send(ic, msg, len);

	return st ? st : ic_run(ic, LCHAN_CQE_SEND);
}

/* SEND @len bytes of @msg, not waited for. */
static int ic_post_send(struct ic *ic, const void *msg, uint32_t len)
{
	int st = ic_prep_send(ic, msg, len);

	return st ? st : ic_post(ic, LCHAN_CQE_SEND);
}

static int ic_wait_peer_close(struct ic *ic);

/*
 * SEND the protocol's last message, after which the program ends the
 * connection.  Its receipt shows in the program's exit status, not in
 * this completion: the program may tear its end down as soon as its
 * receive completes, before its device has acknowledged the SEND (rxe
 * acknowledges after it completes the receive), and the SEND is then
 * flushed by the disconnect.  So it is not waited for: either outcome
 * ends in the peer's close.
 */
static int ic_send_last(struct ic *ic, const void *msg, uint32_t len)
{
	int st = ic_post_send(ic, msg, len);

	return st ? st : ic_wait_peer_close(ic);
}

/*
 * The peer's next message, which must be IC_MSG bytes, into @msg.  The
 * slot is poisoned and posted again at once (the peer sends its next
 * only after lchan's answer).
 */
static int ic_recv(struct ic *ic, void *msg)
{
	unsigned i;
	uint32_t n;
	uint8_t *p;
	int ret, st;

	while (!ic->have_recv) {
		st = ic_reap(ic);
		if (st)
			return st;
	}
	ic->have_recv = false;
	i = (unsigned)ic->recv.user_data;
	n = ic->recv.byte_len;
	p = ic_recv_slot(ic, i);
	memcpy(msg, p, n < IC_MSG ? n : IC_MSG);
	memset(p, IC_POISON, n < ic->slot ? n : ic->slot);
	ret = ic_post_recv(ic, i);
	if (!ret)
		ret = lchan_submit(&ic->chan);
	if (ret < 0)
		return ic_fail(ic, IC_EXIT_BROKEN, "%s: receive again: %s",
			       ic->step, strerror(-ret));
	if (n != IC_MSG)
		return ic_fail(ic, IC_EXIT_DATA, "%s: %u bytes, not %u",
			       ic->step, n, IC_MSG);
	return 0;
}

/*
 * The program ends the connection as its protocol's last step: lchan's
 * receives still posted are flushed, no message comes, and the channel
 * settles (-ENOTCONN once the ring is empty).  A last SEND still in
 * flight (ic_send_last()) completes or is flushed.
 */
static int ic_wait_peer_close(struct ic *ic)
{
	double end = now_s() + ic->secs;
	struct lchan_cqe *p;
	int ret, left;

	if (ic->have_recv)
		return ic_fail(ic, IC_EXIT_BROKEN,
			       "%s: a message after the last", ic->step);
	for (;;) {
		left = (int)((end - now_s()) * 1000);
		ret = lchan_wait_cqe(&ic->chan, &p, left > 0 ? left : 0);
		if (ret == -ENOTCONN)
			return 0;
		if (ret == -ETIMEDOUT)
			return ic_stall(ic);
		if (ret)
			return ic_fail(ic, IC_EXIT_BROKEN, "%s: %s", ic->step,
				       strerror(-ret));
		if (p->status == LCHAN_CQE_OK && ic->done < ic->posted &&
		    p->opcode == ic->want) {
			ic->done++;
		} else if (p->status != LCHAN_CQE_WR_FLUSH_ERR) {
			ret = ic_fail(ic, IC_EXIT_BROKEN,
				      "%s: a %s of %u bytes after the last message: %s",
				      ic->step, ic_op_name(p->opcode),
				      p->byte_len,
				      lchan_cqe_status_str(p->status));
			lchan_cqe_seen(&ic->chan);
			return ret;
		}
		lchan_cqe_seen(&ic->chan);
	}
}

/* Offset of the first byte of [@from, @to) that is not poison, or -1. */
static long ic_unpoisoned(const uint8_t *p, size_t from, size_t to)
{
	size_t i;

	for (i = from; i < to; i++)
		if (p[i] != IC_POISON)
			return (long)i;
	return -1;
}

static long ic_first_diff(const uint8_t *a, const uint8_t *b, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (a[i] != b[i])
			return (long)i;
	return -1;
}

/* lchan's own 16-byte message: any bytes but the zeros of the peers'. */
static void ic_fill_msg(uint8_t *msg, unsigned seed)
{
	unsigned j;

	for (j = 0; j < IC_MSG; j++)
		msg[j] = (uint8_t)(seed * 131u + j * 7u + 1);
}

/* ------------------------------------------------------------- rdma-cm */

/*
 * rdma_server: posts a 16-byte receive, accepts, waits for the client's
 * message, answers with its send_msg (16 bytes it never writes: zeros,
 * sent inline) and, once that SEND completed, disconnects.  lchan
 * connects, sends 16 bytes first, checks the answer and sees it go.
 */
static int ic_rdma_cm_client(struct ic *ic)
{
	uint8_t msg[IC_MSG], got[IC_MSG];
	long bad;
	int st;

	ic_fill_msg(msg, 1);
	/*
	 * The answer shows that the message arrived; the SEND's completion
	 * may come after it or be flushed by the disconnect that follows
	 * (ic_send_last()), so it is not waited for first.
	 */
	ic_step(ic, "the SEND of lchan's message, then rdma_server's answer");
	st = ic_post_send(ic, msg, sizeof(msg));
	if (!st)
		st = ic_recv(ic, got);
	if (st)
		return st;
	bad = ic_first_diff(got, ic_zeros, IC_MSG);
	if (bad >= 0)
		return ic_fail(ic, IC_EXIT_DATA,
			       "rdma_server's answer: byte %ld is 0x%02x, not 0",
			       bad, got[bad]);
	ic_step(ic, "rdma_server's disconnect");
	return ic_wait_peer_close(ic);
}

/*
 * rdma_client: posts a 16-byte receive, connects, sends its send_msg
 * (zeros, inline), waits for that SEND's and then the answer's
 * completion and disconnects.  lchan takes the 16 bytes and answers.
 */
static int ic_rdma_cm_server(struct ic *ic)
{
	uint8_t msg[IC_MSG], got[IC_MSG];
	long bad;
	int st;

	ic_step(ic, "rdma_client's message");
	st = ic_recv(ic, got);
	if (st)
		return st;
	bad = ic_first_diff(got, ic_zeros, IC_MSG);
	if (bad >= 0)
		return ic_fail(ic, IC_EXIT_DATA,
			       "rdma_client's message: byte %ld is 0x%02x, not 0",
			       bad, got[bad]);
	ic_fill_msg(msg, 2);
	ic_step(ic, "the SEND of lchan's answer, then rdma_client's disconnect");
	return ic_send_last(ic, msg, sizeof(msg));
}

/* --------------------------------------------------------------- rping */

/*
 * What rping's client puts in its start buffer for ping @ping:
 * "rdma-ping-<ping>: ", then the letters 'A' to 'z' (65 to 122) round
 * and round, from 'A' + ping % 58, and a NUL as the last byte.  Its
 * server writes back strlen() + 1 bytes of what it read: all @size.
 */
static void ic_rping_fill(uint8_t *buf, unsigned size, unsigned ping)
{
	unsigned char c = 65 + ping % 58;
	unsigned i;
	int cc;

	cc = snprintf((char *)buf, size, "rdma-ping-%u: ", ping);
	for (i = (unsigned)cc; i < size; i++) {
		buf[i] = c;
		if (++c > 122)
			c = 65;
	}
	buf[size - 1] = 0;
}

static struct ic_rping_info ic_rping_info(const void *buf, uint32_t rkey,
					  uint32_t size)
{
	return (struct ic_rping_info){
		.buf = htobe64((uint64_t)(uintptr_t)buf),
		.rkey = htobe32(rkey),
		.size = htobe32(size),
	};
}

/*
 * lchan as rping's client, against `rping -s`: per ping, as rping's
 * client does,
 *   SEND  the start buffer's address (buf, rkey, size) -> server READs it
 *   RECV  go-ahead
 *   SEND  the rdma buffer's address                    -> server WRITEs it
 *   RECV  go-ahead
 *   the rdma buffer must now hold the start buffer, and nothing past it.
 * Then lchan disconnects, on which the server (which loops until the
 * disconnect) exits 0.
 */
static int ic_rping_client(struct ic *ic)
{
	uint8_t *start = ic_send_slot(ic, 1), *rdma = ic_send_slot(ic, 2);
	struct ic_rping_info info;
	uint8_t got[IC_MSG];
	unsigned ping;
	long bad;
	int st;

	for (ping = 0; ping < ic->count; ping++) {
		ic_rping_fill(start, ic->size, ping);
		memset(rdma, IC_POISON, ic->slot);
		info = ic_rping_info(start, ic->mr.rkey, ic->size);
		ic_step(ic, "ping %u: the SEND of the start buffer's address",
			ping);
		st = ic_send(ic, &info, sizeof(info));
		if (!st) {
			ic_step(ic,
				"ping %u: the go-ahead after the server's READ",
				ping);
			st = ic_recv(ic, got);
		}
		if (!st) {
			info = ic_rping_info(rdma, ic->mr.rkey, ic->size);
			ic_step(ic,
				"ping %u: the SEND of the rdma buffer's address",
				ping);
			st = ic_send(ic, &info, sizeof(info));
		}
		if (!st) {
			ic_step(ic,
				"ping %u: the go-ahead after the server's WRITE",
				ping);
			st = ic_recv(ic, got);
		}
		if (st)
			return st;
		bad = ic_first_diff(rdma, start, ic->size);
		if (bad >= 0)
			return ic_fail(ic, IC_EXIT_DATA,
				       "ping %u of %u bytes: byte %ld the server wrote is 0x%02x, not 0x%02x",
				       ping, ic->size, bad, rdma[bad],
				       start[bad]);
		bad = ic_unpoisoned(rdma, ic->size, ic->slot);
		if (bad >= 0)
			return ic_fail(ic, IC_EXIT_DATA,
				       "ping %u: the server wrote byte %ld, past the %u advertised",
				       ping, bad, ic->size);
	}
	return 0;
}

/* The address a client advertised: @size bytes, as -S says. */
static int ic_rping_remote(struct ic *ic, const struct ic_rping_info *info,
			   uint64_t *addr, uint32_t *rkey)
{
	uint32_t len = be32toh(info->size);

	*addr = be64toh(info->buf);
	*rkey = be32toh(info->rkey);
	if (len != ic->size)
		return ic_fail(ic, IC_EXIT_DATA,
			       "%s: the client's buffer has %u bytes, -S says %u",
			       ic->step, len, ic->size);
	return 0;
}

/*
 * lchan as rping's server, against `rping -c ... -V`: per ping, as
 * rping's server does,
 *   RECV  the client's start buffer address
 *   READ  that buffer, waited for; it must hold rping's pattern for this
 *         ping, and nothing may land past it
 *   SEND  go-ahead: 16 bytes (rping's server sends a buffer it never
 *         fills; the client checks only the length)
 *   RECV  the client's rdma buffer address
 *   WRITE what was read to it (strlen() + 1 = size bytes), waited for
 *   SEND  go-ahead; the client compares its buffers (-V)
 * After COUNT pings the client disconnects and exits 0.
 */
static int ic_rping_server(struct ic *ic)
{
	uint8_t *buf = ic_send_slot(ic, 1), *want = ic_send_slot(ic, 2);
	struct ic_rping_info info;
	struct lchan_sqe *sqe;
	unsigned ping;
	uint64_t addr;
	uint32_t rkey;
	long bad;
	int st;

	for (ping = 0; ping < ic->count; ping++) {
		ic_step(ic, "ping %u: the client's start buffer address", ping);
		st = ic_recv(ic, &info);
		if (!st)
			st = ic_rping_remote(ic, &info, &addr, &rkey);
		if (st)
			return st;
		memset(buf, IC_POISON, ic->slot);
		ic_step(ic, "ping %u: the READ of the client's start buffer",
			ping);
		st = ic_sqe(ic, &sqe);
		if (st)
			return st;
		lchan_prep_read(sqe, &ic->mr, buf, ic->size, addr, rkey,
				ic->posted + 1);
		st = ic_run(ic, LCHAN_CQE_READ);
		if (st)
			return st;
		ic_rping_fill(want, ic->size, ping);
		bad = ic_first_diff(buf, want, ic->size);
		if (bad >= 0)
			return ic_fail(ic, IC_EXIT_DATA,
				       "ping %u of %u bytes: byte %ld read is 0x%02x, not rping's 0x%02x",
				       ping, ic->size, bad, buf[bad],
				       want[bad]);
		bad = ic_unpoisoned(buf, ic->size, ic->slot);
		if (bad >= 0)
			return ic_fail(ic, IC_EXIT_DATA,
				       "ping %u: the READ wrote byte %ld, past the %u read",
				       ping, bad, ic->size);
		ic_step(ic, "ping %u: the SEND of the go-ahead after the READ",
			ping);
		st = ic_send(ic, ic_zeros, IC_MSG);
		if (!st) {
			ic_step(ic, "ping %u: the client's rdma buffer address",
				ping);
			st = ic_recv(ic, &info);
		}
		if (!st)
			st = ic_rping_remote(ic, &info, &addr, &rkey);
		if (st)
			return st;
		ic_step(ic, "ping %u: the WRITE to the client's rdma buffer",
			ping);
		st = ic_sqe(ic, &sqe);
		if (st)
			return st;
		lchan_prep_write(sqe, &ic->mr, buf, ic->size, addr, rkey,
				 ic->posted + 1);
		st = ic_run(ic, LCHAN_CQE_WRITE);
		if (st)
			return st;
		/* -C is at least 1: the last go-ahead is sent below. */
		if (ping + 1 == ic->count)
			break;
		ic_step(ic, "ping %u: the SEND of the go-ahead after the WRITE",
			ping);
		st = ic_send(ic, ic_zeros, IC_MSG);
		if (st)
			return st;
	}
	ic_step(ic, "ping %u: the SEND of the last go-ahead, then the client's disconnect",
		ping);
	return ic_send_last(ic, ic_zeros, IC_MSG);
}

/* ------------------------------------------------------------- options */

static void ic_usage(FILE *f)
{
	fprintf(f,
"usage: lchan_interop rping -s|-c -a ADDR [-p PORT] [-C COUNT] [-S SIZE]\n"
"                     [-m MODE] [-t SECS]\n"
"       lchan_interop rdma-cm -s|-c -a ADDR [-p PORT] [-m MODE] [-t SECS]\n"
"lchan against programs written for rdma_cm, every byte checked:\n"
"  rping     rping's protocol: -c against rping -s, -s against rping -c\n"
"  rdma-cm   librdmacm's examples: -c against rdma_server, -s against\n"
"            rdma_client\n"
"options:\n"
"  -s, --server        listen on ADDR and take one connection\n"
"  -c, --client        connect to the server at ADDR\n"
"  -a, --addr ADDR     the server's address\n"
"  -p, --port PORT     port (default that of the peer: rping 7174,\n"
"                      rdma-cm 7471)\n"
"  -C, --count COUNT   rping: pings (default 10); a server expects exactly\n"
"                      COUNT\n"
"  -S, --size SIZE     rping: bytes per ping, %u to %u (default 64)\n"
"  -m, --mode MODE     doorbell (default), poller or direct (IB and RoCE)\n"
"  -t, --timeout SECS  the longest wait for any one step (default 30)\n"
"  -h, --help          this text\n"
"exit status: 0 every byte checked, 1 set-up failed, 2 usage, 3 lchan not\n"
"loaded, 5 the peer's data wrong, 6 an operation failed or the peer broke\n"
"off, 7 nothing within -t\n",
		IC_RPING_MIN, IC_RPING_MAX);
}

/* The options into @ic: -1 to go on, else the exit status. */
static int ic_parse(struct ic *ic, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "server", no_argument, NULL, 's' },
		{ "client", no_argument, NULL, 'c' },
		{ "addr", required_argument, NULL, 'a' },
		{ "port", required_argument, NULL, 'p' },
		{ "count", required_argument, NULL, 'C' },
		{ "size", required_argument, NULL, 'S' },
		{ "mode", required_argument, NULL, 'm' },
		{ "timeout", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	bool rping_opt = false;
	const char *proto;
	int c;

	proto = argc > 1 ? argv[1] : "";
	if (!strcmp(proto, "-h") || !strcmp(proto, "--help")) {
		ic_usage(stdout);
		return IC_EXIT_OK;
	}
	if (!strcmp(proto, "rping"))
		ic->proto = IC_RPING;
	else if (!strcmp(proto, "rdma-cm"))
		ic->proto = IC_RDMA_CM;
	else if (!*proto)
		cli_usage_error("which protocol: rping or rdma-cm?");
	else
		cli_usage_error("unknown protocol '%s': rping or rdma-cm",
				proto);
	/* Past the protocol: getopt takes argv[1] for its program name. */
	argv[1] = argv[0];
	while ((c = getopt_long(argc - 1, argv + 1, "sca:p:C:S:m:t:h",
				longopts, NULL)) != -1) {
		switch (c) {
		case 's':
		case 'c':
			if (ic->server >= 0 && ic->server != (c == 's'))
				cli_usage_error("-s and -c: one side only");
			ic->server = c == 's';
			break;
		case 'a':
			ic->addr = optarg;
			break;
		case 'p':
			ic->port = cli_port("-p", optarg);
			break;
		case 'C':
			ic->count = (unsigned)cli_number("-C", optarg, 1,
							 1000000);
			rping_opt = true;
			break;
		case 'S':
			ic->size = (unsigned)cli_size("-S", optarg,
						      IC_RPING_MIN,
						      IC_RPING_MAX);
			rping_opt = true;
			break;
		case 'm':
			if (!strcmp(optarg, "doorbell"))
				ic->mode = IC_DOORBELL;
			else if (!strcmp(optarg, "poller"))
				ic->mode = IC_POLLER;
			else if (!strcmp(optarg, "direct"))
				ic->mode = IC_DIRECT;
			else
				cli_usage_error("-m: unknown mode '%s' (doorbell, poller or direct)",
						optarg);
			break;
		case 't':
			ic->secs = cli_seconds("-t", optarg, 0.001, 86400);
			break;
		case 'h':
			ic_usage(stdout);
			return IC_EXIT_OK;
		default:
			cli_bad_option();
		}
	}
	cli_no_operands(argc - 1, argv + 1, optind);
	if (ic->server < 0)
		cli_usage_error("-s or -c: which side lchan takes");
	if (!ic->addr)
		cli_usage_error("-a ADDR: the server's address");
	if (rping_opt && ic->proto != IC_RPING)
		cli_usage_error("-C and -S are rping's");
	if (!ic->port)
		ic->port = ic_default_port[ic->proto];
	snprintf(ic->who, sizeof(ic->who), "%s %s", ic_proto_name[ic->proto],
		 ic->server ? "server" : "client");
	return -1;
}

static void ic_close(struct ic *ic)
{
	if (ic->have_chan)
		lchan_chan_close(&ic->chan);
	if (ic->have_lst)
		lchan_listener_close(&ic->lst);
	if (ic->have_ctx)
		lchan_ctx_close(&ic->ctx);
	free(ic->buf);
}

int main(int argc, char **argv)
{
	struct ic ic = { .server = -1, .count = 10, .size = 64, .secs = 30 };
	double t0;
	int st;

	cli_start(argv);
	st = ic_parse(&ic, argc, argv);
	if (st >= 0)
		return st;
	t0 = now_s();
	if (ic.proto == IC_RPING)
		/* A message slot, then as rping's start_buf and rdma_buf. */
		st = ic_open(&ic, (ic.size + IC_PAGE - 1) & ~(IC_PAGE - 1u), 3,
			     LCHAN_ACCESS_LOCAL_WRITE |
			     LCHAN_ACCESS_REMOTE_READ |
			     LCHAN_ACCESS_REMOTE_WRITE);
	else
		st = ic_open(&ic, IC_PAGE, 1, LCHAN_ACCESS_LOCAL_WRITE);
	if (!st)
		st = ic.server ? ic_accept(&ic) : ic_connect(&ic);
	if (!st) {
		if (ic.proto == IC_RPING)
			st = ic.server ? ic_rping_server(&ic) :
					 ic_rping_client(&ic);
		else
			st = ic.server ? ic_rdma_cm_server(&ic) :
					 ic_rdma_cm_client(&ic);
	}
	ic_close(&ic);
	if (st)
		return st;
	if (ic.proto == IC_RPING)
		printf("%s: %u pings of %u bytes, every byte checked, %.2f s\n",
		       ic.who, ic.count, ic.size, now_s() - t0);
	else
		printf("%s: %u bytes each way, checked, %.2f s\n", ic.who,
		       IC_MSG, now_s() - t0);
	return IC_EXIT_OK;
}
