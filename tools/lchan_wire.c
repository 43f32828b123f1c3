// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * lchan_wire: a byte-checked stream both ways over one channel, for the
 * failures of a wire (make check-2node).  Each side sends numbered
 * messages for -t seconds, then one marked last, and checks that the
 * peer's arrive in order, none lost, none twice, every byte as sent.  It
 * reports the longest time without any completion (a cut link stalls the
 * stream) and, when the channel fails, how long it took to notice: from
 * the last good completion, and from the posting of the oldest send still
 * unanswered (what the bound counts from), to the first error, beside
 * the bound the channel's RC timing sets,
 * (retry_count + 1) * 4.096 us * 2^ack_timeout.
 *
 * With -i the channel stays idle instead: nothing is sent, and only its
 * keepalive (-k) can notice a peer that vanished.  The time of the first
 * error on the boot clock (/proc/uptime's) is printed, for comparing with
 * when the wire was cut.
 *
 * iWARP breaks the connection on a SEND that finds no receive, and a send
 * completes there once TCP has it, not once the peer has consumed it: so
 * each message says how many the sender has received and re-posted, and
 * nobody sends beyond what the peer has said it can take.  The last
 * WIRE_RESERVE receives are for messages that carry only that count, so
 * two full windows cannot wait on each other.
 *
 * A side that may not send (the peer has not said it can take more) and
 * has nothing in flight would never notice a peer that vanished: RC
 * notices only a send that goes unanswered.  So after WIRE_PROBE_S like
 * that it sends one such count-only message, a probe, as TCP probes a
 * zero window.  When even the peer's receives for counts are taken (all
 * answered, the peer's own count not yet in), the probe is a zero-length
 * RDMA WRITE, which consumes none and which RC completes on the peer's
 * acknowledgement.  Not on iWARP, where a WRITE completes once TCP has it:
 * there only a keepalive (-k) notices such a loss.
 *
 * A side that has sent its last and has the peer's sends a closing
 * message (its count covers the peer's last) and nothing after it.  It is
 * done when its closing message has completed and the peer's has arrived:
 * then nothing more comes, and the peer has everything.  Done on a
 * completion alone, an iWARP side (whose completion means only that TCP
 * has the message) could close with the peer's messages unread in its
 * socket, and TCP then resets the connection and drops what it has not
 * delivered yet.  The peer may close while our own sends wait for an RC
 * acknowledgement that the wire lost: their flush is no loss, as the
 * peer's closing message said the data arrived.
 *
 *   lchan_wire -s [-a ADDR] [options]
 *   lchan_wire -c ADDR [options]
 *
 * Exit status: 0 as expected (the stream whole; with -x, the peer lost,
 * noticed within the bound, the data whole up to then; with -o, the data
 * whole whether or not the loss was noticed within -L), 1 not, 2 a usage
 * error, 3 no lchan module (cli.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "liblchan.h"
#include "measure.h"

#define WIRE_NRECV	32
#define WIRE_RESERVE	4
#define WIRE_LAST	1u	/* message flag: the sender's last data */
#define WIRE_ACK_ONLY	2u	/* message flag: carries only 'ack' */
#define WIRE_CLOSING	4u	/* message flag: the sender's final message */
#define WIRE_PROBE_S	0.2	/* blocked, nothing in flight: then a probe */
#define WIRE_RDMA_PROBE	UINT64_MAX	/* user_data of an RDMA probe */
#define WIRE_BOUND_SLACK_S 1.0	/* over the RC bound: timer ticks, emulation */

struct wire_hdr {
	uint64_t seq;
	uint64_t ack;		/* messages the sender has received, re-posted */
	uint32_t flags;
	uint32_t size;
};

struct wire {
	struct lchan_ctx ctx;
	struct lchan_chan chan;
	struct lchan_mr mr;
	uint8_t *buf;		/* WIRE_NRECV receive slots, then window sends */
	size_t size;
	unsigned window;
	double secs;		/* sending time */
	double limit;		/* silence before giving up */
	bool expect_loss;
	bool loss_untimed;	/* -X: the time is reported, not judged */
	bool observe;
	bool idle;		/* -i: send nothing */
	struct lchan_opts opts;

	uint64_t sent, send_done, received;
	uint64_t received_data;	/* of those, messages that carried data */
	double t_start, t_through;	/* the stream: begun, both lasts in */
	uint64_t peer_ack;	/* the peer can take seq < peer_ack + NRECV */
	uint64_t ack_sent;	/* 'received' as last told to the peer */
	uint64_t last_seq;
	bool last_sent, peer_last;
	bool closing_sent;	/* the message that acknowledges the peer's last */
	bool peer_closing;	/* the peer's: it has ours, and sends no more */
	bool peer_closed;	/* ... and the peer closed after it */
	bool rdma_probe_out;	/* a probe that consumes no receive */
	double t_rdma_probe;	/* when the last such probe went */
	double t_last_good, longest_gap, t_first_err;
	double t_posted[64];	/* by seq % window: when each send went */
	double t_oldest_at_err;	/* posting time of the oldest unanswered */
	double t_last_acked;	/* the last send completion */
	double t_settled;	/* a wait without timeout ended: ENOTCONN */
	unsigned first_err;
	unsigned first_err_op;
	unsigned cause;		/* the first error status that is not a flush */
	bool q_err[2];		/* an error completion seen: [0] SQ, [1] RQ */
	uint64_t good_after_err;	/* successes after one: order broken */
	struct timespec boot_first_err;
	bool corrupt;
};

static uint8_t wire_pattern(uint64_t seq, size_t j)
{
	return (uint8_t)(seq * 131u + j * 7u + 3);
}

static uint8_t *recv_slot(struct wire *w, unsigned i)
{
	return w->buf + (size_t)i * w->size;
}

static uint8_t *send_slot(struct wire *w, uint64_t seq)
{
	return w->buf + (size_t)(WIRE_NRECV + seq % w->window) * w->size;
}

static int post_recv(struct wire *w, unsigned i)
{
	struct lchan_rqe *rqe = lchan_get_rqe(&w->chan);

	if (!rqe)
		return -ENOSPC;
	lchan_prep_recv(rqe, &w->mr, recv_slot(w, i), w->size, i);
	return 0;
}

static int send_next(struct wire *w, uint32_t flags)
{
	struct lchan_sqe *sqe = lchan_get_sqe(&w->chan);
	uint8_t *p = send_slot(w, w->sent);
	struct wire_hdr h = { .seq = w->sent, .ack = w->received,
			      .flags = flags, .size = (uint32_t)w->size };
	size_t j;

	if (!sqe)
		return -ENOSPC;
	memcpy(p, &h, sizeof(h));
	for (j = sizeof(h); j < w->size; j++)
		p[j] = wire_pattern(w->sent, j);
	lchan_prep_send(sqe, &w->mr, p, w->size, w->sent);
	w->t_posted[w->sent % w->window] = now_s();
	w->ack_sent = w->received;
	if (flags & WIRE_LAST) {
		w->last_sent = true;
		w->last_seq = w->sent;
	}
	w->sent++;
	return 0;
}

/* Nothing in flight, the peer still sending: a probe may be due. */
static bool wire_quiet(const struct wire *w)
{
	return w->sent && w->sent == w->send_done && !w->peer_last;
}

/* Blocked with nothing in flight for WIRE_PROBE_S, the peer still sending. */
static bool wire_probe_due(const struct wire *w)
{
	return wire_quiet(w) && w->sent < w->peer_ack + WIRE_NRECV &&
	       now_s() - w->t_posted[(w->sent - 1) % w->window] >= WIRE_PROBE_S;
}

/*
 * Blocked as above, and not even a count-only message may go.  IB and
 * RoCE: the channels with WRITE_IMM.
 */
static bool wire_rdma_probe_due(const struct wire *w)
{
	double t_last;

	if (!(w->chan.info.features & LCHAN_FEATURE_WRITE_IMM) ||
	    !wire_quiet(w) || w->rdma_probe_out ||
	    w->sent < w->peer_ack + WIRE_NRECV)
		return false;
	t_last = w->t_posted[(w->sent - 1) % w->window];
	if (w->t_rdma_probe > t_last)
		t_last = w->t_rdma_probe;
	return now_s() - t_last >= WIRE_PROBE_S;
}

static int send_rdma_probe(struct wire *w)
{
	struct lchan_sqe *sqe = lchan_get_sqe(&w->chan);

	if (!sqe)
		return -ENOSPC;
	lchan_prep_write(sqe, &w->mr, NULL, 0, 0, 0, WIRE_RDMA_PROBE);
	w->rdma_probe_out = true;
	w->t_rdma_probe = now_s();
	return 0;
}

/* What may go now: data within the window and the peer's receives. */
static int send_some(struct wire *w, double t_end)
{
	int ret = 0;

	while (!ret && w->sent - w->send_done < w->window) {
		bool room = w->sent < w->peer_ack + WIRE_NRECV - WIRE_RESERVE;

		if (!w->last_sent && room)
			ret = send_next(w, now_s() >= t_end ? WIRE_LAST : 0);
		else if (!w->peer_last && w->received > w->ack_sent &&
			 w->sent < w->peer_ack + WIRE_NRECV)
			ret = send_next(w, WIRE_ACK_ONLY);	/* unblock the peer */
		else if (w->last_sent && w->peer_last && !w->closing_sent &&
			 w->sent < w->peer_ack + WIRE_NRECV) {
			ret = send_next(w, WIRE_ACK_ONLY | WIRE_CLOSING);
			w->closing_sent = true;
		} else if (wire_probe_due(w)) {
			ret = send_next(w, WIRE_ACK_ONLY);
		} else {
			if (wire_rdma_probe_due(w))
				ret = send_rdma_probe(w);
			break;
		}
	}
	return ret;
}

/* A received message: the next in order, whole. */
static int check_recv(struct wire *w, const struct lchan_cqe *cqe)
{
	const uint8_t *p = recv_slot(w, (unsigned)cqe->user_data);
	struct wire_hdr h;
	size_t j;

	if (cqe->byte_len != w->size) {
		fprintf(stderr, "lchan_wire: message %" PRIu64 ": %u bytes, not %zu\n",
			w->received, cqe->byte_len, w->size);
		return -EIO;
	}
	memcpy(&h, p, sizeof(h));
	if (h.seq != w->received) {
		fprintf(stderr, "lchan_wire: message %" PRIu64 " came as number %" PRIu64 " (%s)\n",
			w->received, h.seq,
			h.seq < w->received ? "twice" : "some lost");
		return -EIO;
	}
	for (j = sizeof(h); j < w->size; j++) {
		if (p[j] != wire_pattern(h.seq, j)) {
			fprintf(stderr, "lchan_wire: message %" PRIu64 " byte %zu wrong\n",
				h.seq, j);
			return -EIO;
		}
	}
	w->received++;
	if (!(h.flags & WIRE_ACK_ONLY))
		w->received_data++;
	if (h.ack > w->peer_ack)
		w->peer_ack = h.ack;
	if (h.flags & WIRE_LAST)
		w->peer_last = true;
	if (h.flags & WIRE_CLOSING)
		w->peer_closing = true;
	return post_recv(w, (unsigned)cqe->user_data);
}

static void note_good(struct wire *w)
{
	double t = now_s();

	if (t - w->t_last_good > w->longest_gap)
		w->longest_gap = t - w->t_last_good;
	w->t_last_good = t;
}

/* Done: both closing messages are through. */
static bool wire_done(const struct wire *w)
{
	return (w->peer_closing && w->closing_sent &&
		w->send_done == w->sent) || w->peer_closed;
}

/*
 * A queue's completions come in order: once one of its requests failed or
 * was flushed, no older one may still succeed.  The keepalive's CQE
 * belongs to no queue.
 */
static void check_order(struct wire *w, const struct lchan_cqe *cqe)
{
	bool rq = cqe->opcode == LCHAN_CQE_RECV ||
		  cqe->opcode == LCHAN_CQE_RECV_WRITE_IMM;

	if (cqe->opcode == LCHAN_CQE_KEEPALIVE)
		return;
	if (cqe->status)
		w->q_err[rq] = true;
	else if (w->q_err[rq])
		w->good_after_err++;
}

static int handle_cqe(struct wire *w, const struct lchan_cqe *cqe)
{
	check_order(w, cqe);
	if (cqe->status) {
		/* The peer closed once it had everything: not a loss. */
		if (w->peer_closing) {
			w->peer_closed = true;
			return 0;
		}
		/* A flush follows the error that put the QP in error. */
		if (!w->cause && cqe->status != LCHAN_CQE_WR_FLUSH_ERR)
			w->cause = cqe->status;
		if (!w->t_first_err) {
			w->t_first_err = now_s();
			clock_gettime(CLOCK_BOOTTIME, &w->boot_first_err);
			w->first_err = cqe->status;
			w->first_err_op = cqe->opcode;
			/* Sends complete in order: send_done is the oldest. */
			if (w->sent > w->send_done)
				w->t_oldest_at_err =
					w->t_posted[w->send_done % w->window];
			else if (w->rdma_probe_out)
				w->t_oldest_at_err = w->t_rdma_probe;
		}
		return 0;
	}
	if (w->t_first_err)
		return 0;	/* in flight before the error */
	/* The peer is there; its count or data will unblock us. */
	if (cqe->user_data == WIRE_RDMA_PROBE) {
		w->rdma_probe_out = false;
		return 0;
	}
	note_good(w);
	if (cqe->opcode == LCHAN_CQE_SEND) {
		w->send_done++;
		w->t_last_acked = w->t_last_good;
		return 0;
	}
	if (check_recv(w, cqe)) {
		w->corrupt = true;
		return -EIO;
	}
	return 0;
}

/* A channel's sysfs attribute @name as a number; 0 when unreadable. */
static unsigned chan_attr(const struct lchan_chan *chan, const char *name)
{
	char path[128], buf[32];
	unsigned v = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/kernel/lchan/channels/%u/%s",
		 chan->info.id, name);
	f = fopen(path, "r");
	if (f) {
		if (fgets(buf, sizeof(buf), f))
			v = (unsigned)strtoul(buf, NULL, 10);
		fclose(f);
	}
	return v;
}

/*
 * The TCP connection an iWARP channel runs over, as /proc/net/tcp{,6}
 * shows it (queued bytes both ways, retransmission timer and count): a
 * stall there is TCP's, bytes received and not read are the device's.
 * Prints nothing for a channel without one (RoCE, InfiniBand).
 */
static void print_tcp_under(const struct lchan_chan *chan)
{
	static const char *const files[] = { "/proc/net/tcp", "/proc/net/tcp6" };
	char line[512], lport[8], rport[8];
	unsigned i;

	snprintf(lport, sizeof(lport), ":%04X ", chan->info.local.port);
	snprintf(rport, sizeof(rport), ":%04X ", chan->info.remote.port);
	for (i = 0; i < 2; i++) {
		FILE *f = fopen(files[i], "r");
		char *rem;

		if (!f)
			continue;
		while (fgets(line, sizeof(line), f)) {
			/* sl local rem st tx:rx tr:when retrnsmt ... */
			rem = strstr(line, lport);
			if (rem && strstr(rem + 6, rport))
				printf("tcp under the channel (%s): %s",
				       files[i] + 10, line);
		}
		fclose(f);
	}
}

static double rc_bound(const struct lchan_chan *chan, unsigned *t,
		       unsigned *r)
{
	*t = chan_attr(chan, "ack_timeout");
	*r = chan_attr(chan, "retry_count");
	if (!*t)
		return 0;	/* iWARP: TCP decides */
	return (*r + 1) * 4.096e-6 * (double)(1ULL << *t);
}

static const char *state_name(int state)
{
	switch (state) {
	case LCHAN_STATE_CONNECTING: return "connecting";
	case LCHAN_STATE_CONNECTED: return "connected";
	case LCHAN_STATE_DISCONNECTED: return "disconnected";
	case LCHAN_STATE_ERROR: return "error";
	}
	return "?";
}

static size_t put_str(char *b, size_t n, size_t cap, const char *str)
{
	while (*str && n < cap)
		b[n++] = *str++;
	return n;
}

static size_t put_u64(char *b, size_t n, size_t cap, uint64_t v)
{
	char d[20];
	size_t k = 0;

	do
		d[k++] = (char)('0' + v % 10);
	while ((v /= 10) && k < sizeof(d));
	while (k && n < cap)
		b[n++] = d[--k];
	return n;
}

/* The stream a signal handler describes. */
static const struct wire *wire_shown;

/*
 * Ended by a signal (the caller's time limit): where the stream stood,
 * so that a side that waited too long says what it waited on.  Only
 * async-signal-safe calls.
 */
static void wire_on_signal(int sig)
{
	const struct wire *w = wire_shown;
	size_t n = 0, cap = 255;
	ssize_t unused;
	char b[256];

	n = put_str(b, n, cap, "lchan_wire: ended by signal ");
	n = put_u64(b, n, cap, (uint64_t)sig);
	n = put_str(b, n, cap, ": sent ");
	n = put_u64(b, n, cap, w->sent);
	n = put_str(b, n, cap, ", completed ");
	n = put_u64(b, n, cap, w->send_done);
	n = put_str(b, n, cap, ", the peer takes seq < ");
	n = put_u64(b, n, cap, w->peer_ack + WIRE_NRECV);
	n = put_str(b, n, cap, ", received ");
	n = put_u64(b, n, cap, w->received);
	n = put_str(b, n, cap, w->rdma_probe_out ? ", an RDMA probe out" : "");
	n = put_str(b, n, cap, w->t_first_err ? ", after the first error\n" :
						", no error yet\n");
	/* Nothing to do about a failed write: the exit status tells. */
	unused = write(STDERR_FILENO, b, n);
	(void)unused;
	_exit(128 + sig);
}

/* The stream until both lasts are through, the channel fails, or silence. */
static int run(struct wire *w)
{
	double t_start = now_s(), t_end = t_start + w->secs;
	struct lchan_cqe *cqe;
	int ret = 0;

	w->t_last_good = w->t_start = t_start;
	while (!wire_done(w)) {
		if (!w->t_first_err && !w->idle) {
			ret = send_some(w, t_end);
			if (ret)
				return ret;
		}
		ret = lchan_submit(&w->chan);
		if (ret < 0 && !w->t_first_err) {
			if (!w->peer_closing)
				return ret;
			w->peer_closed = true;	/* before our closing message */
			break;
		}
		/*
		 * After the first error the wait has no timeout: the channel
		 * must settle (the flushed rest, then ENOTCONN) and so end it.
		 */
		ret = lchan_wait_cqe(&w->chan, &cqe, w->t_first_err ? -1 : 500);
		if (ret == -ETIMEDOUT) {
			if (now_s() - w->t_last_good > w->limit)
				return w->idle ? 0 : -ETIMEDOUT;
			continue;
		}
		if (ret == -ENOTCONN) {
			w->t_settled = now_s();
			if (!w->t_first_err && w->peer_closing) {
				w->peer_closed = true;
				break;
			}
			return w->t_first_err ? 0 : -ENOTCONN;
		}
		if (ret)
			return ret;
		ret = handle_cqe(w, cqe);
		lchan_cqe_seen(&w->chan);
		if (ret)
			return ret;
	}
	w->t_through = now_s();
	return 0;
}

static int prepare(struct wire *w)
{
	unsigned i;
	int ret;

	ret = lchan_mr_reg(&w->ctx, &w->chan, w->buf,
			   (size_t)(WIRE_NRECV + w->window) * w->size,
			   LCHAN_ACCESS_LOCAL_WRITE, &w->mr);
	for (i = 0; !ret && i < WIRE_NRECV; i++)
		ret = post_recv(w, i);
	if (!ret)
		ret = lchan_submit(&w->chan) < 0 ? -EIO : 0;
	if (!ret)
		ret = lchan_establish(&w->chan, 10000);
	return ret;
}

static void usage(void)
{
	printf("usage: lchan_wire -s [-a ADDR] [options]\n"
	       "       lchan_wire -c ADDR [options]\n"
	       "  -s        serve one client\n"
	       "  -c ADDR   connect to the server at ADDR\n"
	       "  -a ADDR   the address: where the server listens (default any), the\n"
	       "            server a client connects to (as -c ADDR)\n"
	       "  -p PORT   port, 1..65535 (default 18520)\n"
	       "  -S SIZE   message size, %zu..16M (K, M suffixes; default 4096)\n"
	       "  -t SECS   send for SECS, then the last message (default 10)\n"
	       "  -w N      sends in flight, 1..64 (default 8)\n"
	       "  -T T      ACK timeout exponent, 0..31 (lchan_rc_params; 0 the default)\n"
	       "  -R R      retry count, 0..7 (lchan_rc_params; 0 the default)\n"
	       "  -L SECS   give up after SECS without a completion (default 30)\n"
	       "  -C SECS   connect or accept within SECS (default 10)\n"
	       "  -x        expect the peer to be lost, noticed within the bound\n"
	       "  -X        as -x, the time reported but not judged\n"
	       "  -o        observe: the peer may be lost or not; report it\n"
	       "  -k MS     keepalive period, %u..%u (lchan_rc_params)\n"
	       "  -i        idle: send nothing, for -L SECS or until the channel fails\n"
	       "  -h, --help  this text\n"
	       "Exit status: 0 as expected, 1 not, 2 usage error,\n"
	       "3 the lchan module is not loaded.\n",
	       sizeof(struct wire_hdr), LCHAN_KEEPALIVE_MIN_MS,
	       LCHAN_KEEPALIVE_MAX_MS);
}

int main(int argc, char **argv)
{
	static const struct option longs[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct wire w = { .size = 4096, .window = 8, .secs = 10, .limit = 30 };
	const char *addr = NULL, *port = "18520";
	unsigned t, r;
	int opt, ret, state;
	bool server = false, client = false;
	double bound, took = 0, since_send = -1, since_ack = -1, t_close;
	bool ok;

	w.opts.flags = LCHAN_DEFER_ESTABLISH;
	cli_start(argv);
	while ((opt = getopt_long(argc, argv, "sc:a:p:S:t:w:T:R:L:C:xXok:ih",
				  longs, NULL)) != -1) {
		switch (opt) {
		case 's': server = true; break;
		case 'c': client = true; cli_address(&addr, "-c", optarg); break;
		case 'a': cli_address(&addr, "-a", optarg); break;
		case 'p': port = cli_port("-p", optarg); break;
		case 'S':
			w.size = cli_size("-S", optarg, sizeof(struct wire_hdr),
					  1u << 24);
			break;
		case 't': w.secs = cli_seconds("-t", optarg, 0, 86400); break;
		case 'w':
			w.window = (unsigned)cli_number("-w", optarg, 1, 64);
			break;
		case 'T':
			w.opts.flags |= LCHAN_OPTS_RC;
			w.opts.ack_timeout =
				(unsigned char)cli_number("-T", optarg, 0, 31);
			break;
		case 'R':
			w.opts.flags |= LCHAN_OPTS_RC;
			w.opts.retry_count =
				(unsigned char)cli_number("-R", optarg, 0, 7);
			break;
		case 'L': w.limit = cli_seconds("-L", optarg, 0.001, 86400); break;
		case 'x': w.expect_loss = true; break;
		case 'X': w.expect_loss = w.loss_untimed = true; break;
		case 'o': w.observe = true; break;
		case 'C':
			w.opts.timeout_ms = (unsigned)cli_number("-C", optarg, 1,
								 3600) * 1000;
			break;
		case 'k':
			w.opts.flags |= LCHAN_OPTS_KEEPALIVE;
			w.opts.keepalive_ms = (unsigned)cli_number("-k", optarg,
				LCHAN_KEEPALIVE_MIN_MS, LCHAN_KEEPALIVE_MAX_MS);
			break;
		case 'i': w.idle = true; break;
		case 'h': usage(); return 0;
		default: cli_bad_option();
		}
	}
	cli_no_operands(argc, argv, optind);
	cli_one_side(server, client);
	if (w.observe && w.expect_loss)
		cli_usage_error("-o and -%c: observe or expect a loss, not both",
				w.loss_untimed ? 'X' : 'x');
	w.buf = aligned_alloc(4096, ((WIRE_NRECV + w.window) * w.size + 4095) &
				    ~(size_t)4095);
	if (!w.buf)
		return 1;
	w.opts.sq_entries = w.window * 2;
	w.opts.rq_entries = WIRE_NRECV;
	ret = lchan_ctx_open(&w.ctx);
	if (ret)
		return cli_open_failed(LCHAN_DEVICE_PATH, ret);
	if (server) {
		struct lchan_listener lst;

		ret = lchan_listen(&w.ctx, addr, port, 1, 0, &lst);
		if (!ret) {
			printf("listening\n");
			fflush(stdout);
			ret = lchan_accept(&lst, &w.opts, &w.chan);
			lchan_listener_close(&lst);
		}
	} else {
		struct lchan_opts copts = w.opts;

		/* The peer is lchan_wire: either side may send first. */
		copts.flags |= LCHAN_OPEN_EXCHANGE;
		ret = lchan_connect(&w.ctx, addr, port, &copts, &w.chan);
	}
	if (!ret)
		ret = prepare(&w);
	if (ret) {
		fprintf(stderr, "lchan_wire: set-up: %s\n", strerror(-ret));
		return 1;
	}
	bound = rc_bound(&w.chan, &t, &r);
	wire_shown = &w;
	signal(SIGTERM, wire_on_signal);
	ret = run(&w);
	state = lchan_chan_state(&w.chan);
	if (w.t_first_err)
		took = w.t_first_err - w.t_last_good;
	if (w.t_oldest_at_err)
		since_send = w.t_first_err - w.t_oldest_at_err;
	if (w.t_last_acked)
		since_ack = w.t_first_err - w.t_last_acked;
	printf("sent %" PRIu64 " (%" PRIu64 " completed), received %" PRIu64
	       " in order, byte-exact%s; longest silence %.2f s\n",
	       w.sent, w.send_done, w.received, w.corrupt ? ": NO" : "",
	       w.longest_gap);
	if (w.t_through > w.t_start && !w.idle)
		printf("throughput %.2f MB/s received (%" PRIu64 " x %zu B in %.2f s)\n",
		       w.received_data * w.size / 1e6 / (w.t_through - w.t_start),
		       w.received_data, w.size, w.t_through - w.t_start);
	if (t)
		printf("rc %u/%u: bound %.3f s, judged against %.3f s\n", t, r,
		       bound, bound + WIRE_BOUND_SLACK_S);
	else
		printf("rc tcp: TCP's retransmission decides\n");
	/* iWARP, accepting side: the peer's first SEND waited in the socket. */
	if (chan_attr(&w.chan, "peer_first_reads"))
		printf("peer_first_reads: the accepting side found the peer's first SEND waiting in the socket\n");
	if (w.t_first_err)
		printf("peer lost: %s after %.3f s without a completion, %.3f s after the oldest unanswered send, %.3f s after the last send completion; state %s; a wait without timeout returned ENOTCONN %.3f s after the error; cause %s\n",
		       lchan_cqe_status_str(w.first_err), took, since_send,
		       since_ack, state_name(state),
		       w.t_settled - w.t_first_err,
		       w.cause ? lchan_cqe_status_str(w.cause) :
		       "none seen (flushes only)");
	else if (ret == -ETIMEDOUT || (w.idle && !ret))
		printf("nothing for %.0f s: no error yet; state %s\n", w.limit,
		       state_name(state));
	if (w.t_first_err || ret == -ETIMEDOUT)
		print_tcp_under(&w.chan);
	if (w.opts.keepalive_ms)
		printf("keepalive %u ms%s\n", w.opts.keepalive_ms,
		       w.first_err_op == LCHAN_CQE_KEEPALIVE ?
		       ": its CQE was the first error" : "");
	if (w.t_first_err)
		printf("first error at %lld.%03ld (boot clock)\n",
		       (long long)w.boot_first_err.tv_sec,
		       w.boot_first_err.tv_nsec / 1000000);
	if (w.good_after_err)
		printf("%" PRIu64 " completions after the first error: order broken\n",
		       w.good_after_err);
	if (ret && ret != -ETIMEDOUT)
		fprintf(stderr, "lchan_wire: %s\n", strerror(-ret));
	t_close = now_s();
	lchan_chan_close(&w.chan);
	lchan_ctx_close(&w.ctx);
	printf("closed in %.3f s\n", now_s() - t_close);
	free(w.buf);

	if (w.corrupt || w.good_after_err)
		return 1;
	if (w.observe)
		ok = !ret || ret == -ETIMEDOUT;
	else if (w.idle && w.expect_loss)
		/* When the wire was cut is the caller's to compare. */
		ok = !ret && w.t_first_err && w.t_settled &&
		     state == LCHAN_STATE_ERROR &&
		     w.first_err_op == LCHAN_CQE_KEEPALIVE;
	else if (w.idle)
		ok = !ret && !w.t_first_err && state == LCHAN_STATE_CONNECTED;
	else if (!w.expect_loss)
		ok = !ret && !w.t_first_err;
	else
		ok = !ret && w.t_first_err && w.t_settled &&
		     state == LCHAN_STATE_ERROR &&
		     (w.loss_untimed ||
		      (bound > 0 && since_send >= 0 &&
		       since_send <= bound + WIRE_BOUND_SLACK_S));
	return ok ? 0 : 1;
}
