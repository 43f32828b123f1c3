// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * lchan_pingpong: a server and a client bounce messages over an lchan
 * channel.  Every byte is checked; the client prints round-trip latency.
 *
 *   lchan_pingpong -s [-a ADDR] [-p PORT] [-n COUNT] [-S SIZE]
 *   lchan_pingpong -c ADDR [-p PORT] [-n COUNT] [-S SIZE] [-b] [-q]
 */
#define _GNU_SOURCE
#include <getopt.h>
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

struct pp {
	struct lchan_ctx ctx;
	struct lchan_chan chan;
	struct lchan_mr mr;
	uint8_t *buf;		/* [0, size): receive; [size, 2 size): send */
	size_t size;
	unsigned long count;
	int busy_poll;
	int quiet;
};

static uint8_t pattern(unsigned long i, size_t j)
{
	return (uint8_t)(i * 167u + j * 13u + 5);
}

static int post_recv(struct pp *pp)
{
	struct lchan_rqe *rqe = lchan_get_rqe(&pp->chan);

	if (!rqe)
		return -ENOSPC;
	lchan_prep_recv(rqe, &pp->mr, pp->buf, pp->size, 0);
	return 0;
}

static int send_msg(struct pp *pp, unsigned long i)
{
	struct lchan_sqe *sqe = lchan_get_sqe(&pp->chan);
	uint8_t *p = pp->buf + pp->size;
	size_t j;

	if (!sqe)
		return -ENOSPC;
	for (j = 0; j < pp->size; j++)
		p[j] = pattern(i, j);
	lchan_prep_send(sqe, &pp->mr, p, pp->size, i);
	return 0;
}

/* Next CQE, by busy polling or by sleeping in poll(2). */
static int next_cqe(struct pp *pp, struct lchan_cqe *out)
{
	struct lchan_cqe *cqe;
	int ret;

	if (pp->busy_poll) {
		uint64_t t0 = now_ns();

		while (lchan_peek_cqe(&pp->chan, &cqe)) {
			if (now_ns() - t0 > 10000000000ull)
				return -ETIMEDOUT;
		}
	} else {
		ret = lchan_wait_cqe(&pp->chan, &cqe, 10000);
		if (ret)
			return ret;
	}
	*out = *cqe;
	lchan_cqe_seen(&pp->chan);
	return 0;
}

/* Wait for the receive of message @i, check it, re-post the buffer. */
static int recv_msg(struct pp *pp, unsigned long i)
{
	struct lchan_cqe cqe;
	size_t j;
	int ret;

	for (;;) {
		ret = next_cqe(pp, &cqe);
		if (ret)
			return ret;
		if (cqe.status) {
			fprintf(stderr, "lchan_pingpong: %s failed: %s\n",
				cqe.opcode == LCHAN_CQE_RECV ? "receive" : "send",
				lchan_cqe_status_str(cqe.status));
			return -EIO;
		}
		if (cqe.opcode == LCHAN_CQE_RECV)
			break;
	}
	if (cqe.byte_len != pp->size) {
		fprintf(stderr, "lchan_pingpong: message %lu: %u bytes, not %zu\n",
			i, cqe.byte_len, pp->size);
		return -EIO;
	}
	for (j = 0; j < pp->size; j++) {
		if (pp->buf[j] != pattern(i, j)) {
			fprintf(stderr, "lchan_pingpong: message %lu byte %zu wrong\n",
				i, j);
			return -EIO;
		}
	}
	return post_recv(pp);
}

/* Register the buffer and post the one receive before the peer can send. */
static int prepare(struct pp *pp)
{
	int ret;

	ret = lchan_mr_reg(&pp->ctx, &pp->chan, pp->buf, 2 * pp->size,
			   LCHAN_ACCESS_LOCAL_WRITE, &pp->mr);
	if (ret)
		return ret;
	ret = post_recv(pp);
	if (ret)
		return ret;
	ret = lchan_submit(&pp->chan);
	if (ret < 0)
		return ret;
	return lchan_establish(&pp->chan, 10000);
}

static int run_server(struct pp *pp, const char *addr, const char *port)
{
	struct lchan_opts opts = { .flags = LCHAN_DEFER_ESTABLISH };
	struct lchan_listener lst;
	unsigned long i;
	int ret;

	ret = lchan_listen(&pp->ctx, addr, port, 1, 0, &lst);
	if (ret)
		return ret;
	if (!pp->quiet) {
		char name[80];

		lchan_addr_format(&lst.addr, name, sizeof(name));
		printf("listening on %s\n", name);
		fflush(stdout);
	}
	ret = lchan_accept(&lst, &opts, &pp->chan);
	lchan_listener_close(&lst);
	if (ret)
		return ret;
	ret = prepare(pp);
	for (i = 0; !ret && i < pp->count; i++) {
		ret = recv_msg(pp, i);
		if (!ret)
			ret = send_msg(pp, i);
		if (!ret)
			ret = lchan_submit(&pp->chan) < 0 ? -EIO : 0;
	}
	/* Let the last send complete before closing. */
	if (!ret) {
		struct lchan_cqe cqe;

		do {
			ret = next_cqe(pp, &cqe);
		} while (!ret && cqe.opcode != LCHAN_CQE_SEND);
	}
	return ret;
}

static int run_client(struct pp *pp, const char *addr, const char *port)
{
	/* The peer is lchan_pingpong, whose server may speak first. */
	struct lchan_opts opts = {
		.flags = LCHAN_DEFER_ESTABLISH | LCHAN_OPEN_EXCHANGE,
	};
	uint64_t *rtt, sum = 0;
	unsigned long i;
	int ret;

	rtt = calloc(pp->count, sizeof(*rtt));
	if (!rtt)
		return -ENOMEM;
	ret = lchan_connect(&pp->ctx, addr, port, &opts, &pp->chan);
	if (!ret)
		ret = prepare(pp);
	for (i = 0; !ret && i < pp->count; i++) {
		uint64_t t0 = now_ns();

		ret = send_msg(pp, i);
		if (!ret)
			ret = lchan_submit(&pp->chan) < 0 ? -EIO : 0;
		if (!ret)
			ret = recv_msg(pp, i);
		rtt[i] = now_ns() - t0;
	}
	if (!ret && pp->count) {
		for (i = 0; i < pp->count; i++)
			sum += rtt[i];
		qsort(rtt, pp->count, sizeof(*rtt), cmp_u64);
		printf("%lu round trips of %zu bytes, every byte checked\n",
		       pp->count, pp->size);
		printf("rtt_us min %.1f median %.1f avg %.1f p99 %.1f max %.1f\n",
		       pct(rtt, pp->count, 0, 1e-3),
		       pct(rtt, pp->count, 0.5, 1e-3),
		       (double)sum / 1e3 / (double)pp->count,
		       pct(rtt, pp->count, 0.99, 1e-3),
		       pct(rtt, pp->count, 1, 1e-3));
	}
	free(rtt);
	return ret;
}

static void usage(void)
{
	printf("usage: lchan_pingpong -s [-a ADDR] [options]\n"
	       "       lchan_pingpong -c ADDR [options]\n"
	       "  -s, --server       serve one client\n"
	       "  -c, --client ADDR  connect to the server at ADDR\n"
	       "  -a, --addr ADDR    the address: where the server listens (default\n"
	       "                     any), the server a client connects to (as -c)\n"
	       "  -p, --port PORT    port, 1..65535 (default 18515)\n"
	       "  -n, --count COUNT  round trips (default 1000)\n"
	       "  -S, --size SIZE    message size, 1..1G (K, M, G suffixes; default 64)\n"
	       "  -b, --busy-poll    busy-poll the completion ring instead of poll(2)\n"
	       "  -q, --quiet        quiet server\n"
	       "  -h, --help         this text\n"
	       "Exit status: 0 every message arrived intact, 1 error, 2 usage error,\n"
	       "3 the lchan module is not loaded.\n");
}

int main(int argc, char **argv)
{
	static const struct option longs[] = {
		{ "server", no_argument, NULL, 's' },
		{ "client", required_argument, NULL, 'c' },
		{ "addr", required_argument, NULL, 'a' },
		{ "port", required_argument, NULL, 'p' },
		{ "count", required_argument, NULL, 'n' },
		{ "size", required_argument, NULL, 'S' },
		{ "busy-poll", no_argument, NULL, 'b' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct pp pp = { .size = 64, .count = 1000 };
	const char *addr = NULL, *port = "18515";
	bool server = false, client = false;
	int opt, ret;

	cli_start(argv);
	while ((opt = getopt_long(argc, argv, "sc:a:p:n:S:bqh", longs,
				  NULL)) != -1) {
		switch (opt) {
		case 's': server = true; break;
		case 'c': client = true; cli_address(&addr, "-c", optarg); break;
		case 'a': cli_address(&addr, "-a", optarg); break;
		case 'p': port = cli_port("-p", optarg); break;
		case 'n': pp.count = cli_number("-n", optarg, 1, 1000000000); break;
		case 'S': pp.size = cli_size("-S", optarg, 1, CLI_SIZE_MAX); break;
		case 'b': pp.busy_poll = 1; break;
		case 'q': pp.quiet = 1; break;
		case 'h': usage(); return 0;
		default: cli_bad_option();
		}
	}
	cli_no_operands(argc, argv, optind);
	cli_one_side(server, client);
	pp.buf = aligned_alloc(4096, (2 * pp.size + 4095) & ~(size_t)4095);
	if (!pp.buf)
		return CLI_EXIT_FAIL;
	ret = lchan_ctx_open(&pp.ctx);
	if (ret)
		return cli_open_failed(LCHAN_DEVICE_PATH, ret);
	ret = server ? run_server(&pp, addr, port) :
		       run_client(&pp, addr, port);
	if (ret)
		fprintf(stderr, "lchan_pingpong: %s\n", strerror(-ret));
	lchan_chan_close(&pp.chan);
	lchan_ctx_close(&pp.ctx);
	free(pp.buf);
	return ret ? CLI_EXIT_FAIL : 0;
}
