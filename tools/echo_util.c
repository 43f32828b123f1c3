// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/* What lchan_echo and tcp_echo share (echo_util.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "echo_util.h"

int echo_opts_parse(struct echo_opts *o, const char *tool, const char *port,
		    int argc, char **argv)
{
	int opt;

	*o = (struct echo_opts){ .tool = tool, .port = port, .count = 1000 };
	while ((opt = getopt(argc, argv, "sc:a:p:n:S:")) != -1) {
		switch (opt) {
		case 's': o->server = true; break;
		case 'c': o->host = optarg; break;
		case 'a': o->addr = optarg; break;
		case 'p': o->port = optarg; break;
		case 'n': o->count = strtoul(optarg, NULL, 0); break;
		case 'S': o->size = strtoul(optarg, NULL, 0); break;
		default: return 2;
		}
	}
	if (!o->size)	/* the server takes any message up to 4 MiB */
		o->size = o->server ? 4u << 20 : 64;
	if (o->server == !!o->host) {
		fprintf(stderr, "usage: %s -s [-a ADDR] [-p PORT] | -c HOST [-p PORT] [-n COUNT] [-S SIZE]\n",
			tool);
		return 2;
	}
	return 0;
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
