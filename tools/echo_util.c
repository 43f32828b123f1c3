// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/* What lchan_echo and tcp_echo share (echo_util.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "echo_util.h"

/* The server takes any message up to this; the message layer's default. */
#define ECHO_MAX_SIZE	(4ul << 20)

static void echo_usage(const struct echo_opts *o)
{
	const char *L = o->lchan ? "" : " [-L]";

	printf("usage: %s -s [-a ADDR] [-p PORT]%s\n"
	       "       %s -c HOST [-p PORT] [-n COUNT] [-S SIZE]%s\n"
	       "  -s, --server        serve one client: echo its messages until it closes\n"
	       "  -c, --client HOST   connect to the server at HOST and time COUNT echoes\n"
	       "  -a, --addr ADDR     the address: where the server listens (default any),\n"
	       "                      the server a client connects to (as -c HOST)\n"
	       "  -p, --port PORT     port, 1..65535 (default %s)\n"
	       "  -n, --count COUNT   messages (default 1000)\n"
	       "  -S, --size SIZE     message size, 1..4M (K, M suffixes; default 64)\n"
	       "%s"
	       "  -h, --help          this text\n"
	       "Exit status: 0 done, 1 error or an echo that differs, 2 usage error,\n"
	       "3 the lchan module is not loaded%s.\n",
	       o->tool, L, o->tool, L, o->port,
	       o->lchan ? "" :
	       "  -L, --lchan-stream  the same byte stream over an lchan stream channel\n"
	       "                      (both sides), not a TCP connection\n",
	       o->lchan ? "" : " (-L)");
}

void echo_opts_parse(struct echo_opts *o, const char *tool, const char *port,
		     bool lchan, int argc, char **argv)
{
	static const struct option longs[] = {
		{ "server", no_argument, NULL, 's' },
		{ "client", required_argument, NULL, 'c' },
		{ "addr", required_argument, NULL, 'a' },
		{ "port", required_argument, NULL, 'p' },
		{ "count", required_argument, NULL, 'n' },
		{ "size", required_argument, NULL, 'S' },
		{ "lchan-stream", no_argument, NULL, 'L' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	bool client = false;
	int opt;

	*o = (struct echo_opts){ .tool = tool, .port = port, .count = 1000,
				 .lchan = lchan };
	cli_start(argv);
	while ((opt = getopt_long(argc, argv, lchan ? "sc:a:p:n:S:h" :
				  "sc:a:p:n:S:Lh", longs, NULL)) != -1) {
		switch (opt) {
		case 'L':
			if (lchan)
				cli_bad_option();
			o->stream = true;
			break;
		case 's':
			o->server = true;
			break;
		case 'c':
			client = true;
			cli_address(&o->addr, "-c", optarg);
			break;
		case 'a':
			cli_address(&o->addr, "-a", optarg);
			break;
		case 'p':
			o->port = cli_port("-p", optarg);
			break;
		case 'n':
			o->count = (unsigned)cli_number("-n", optarg, 1,
							1000000000);
			break;
		case 'S':
			o->size = cli_size("-S", optarg, 1, ECHO_MAX_SIZE);
			break;
		case 'h':
			echo_usage(o);
			exit(0);
		default:
			cli_bad_option();
		}
	}
	cli_no_operands(argc, argv, optind);
	cli_one_side(o->server, client);
	if (!o->size)	/* the server takes any message up to 4 MiB */
		o->size = o->server ? ECHO_MAX_SIZE : 64;
}

int echo_buffers(const struct echo_opts *o, unsigned char **out,
		 unsigned char **in)
{
	*out = malloc(o->size);
	*in = malloc(o->size);
	if (!*out || !*in)
		return echo_die(o, "malloc", -ENOMEM);
	return 0;
}

void echo_fill(unsigned char *p, unsigned i, size_t len)
{
	for (size_t j = 0; j < len; j++)
		p[j] = (unsigned char)(i * 31 + j * 7 + 1);
}

int echo_die(const struct echo_opts *o, const char *what, long ret)
{
	fprintf(stderr, "%s: %s: %s\n", o->tool, what,
		ret ? strerror((int)-ret) : "bad data");
	return 1;
}

int echo_check(const struct echo_opts *o, const unsigned char *out,
	       const unsigned char *in, long ret)
{
	if (ret < 0)
		return echo_die(o, "recv", ret);
	if ((size_t)ret != o->size || memcmp(in, out, o->size))
		return echo_die(o, "echo differs", 0);
	return 0;
}

void echo_report(const struct echo_opts *o, double t0)
{
	double secs = now_s() - t0;

	printf("%u echoes of %zu bytes: %.2f us round trip, %.1f MB/s each way\n",
	       o->count, o->size, secs * 1e6 / o->count,
	       o->count * (double)o->size / secs / 1e6);
}
