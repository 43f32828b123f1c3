// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/* The option table of lchan_perf and lchan_msg_perf, and its parser. */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perf_opts.h"

#define PERF_FOR_TOOLS	(PERF_FOR_LCHAN | PERF_FOR_MSG)
#define PERF_FOR_SIDES	(PERF_FOR_SERVER | PERF_FOR_CLIENT)
#define PERF_FOR_ALL	(PERF_FOR_TOOLS | PERF_FOR_SIDES)

/* Long options without a letter: numbered above the letters. */
enum {
	PERF_O_ALL = 256,
	PERF_O_IDLE,
	PERF_O_CPU,
	PERF_O_TIMEOUT,
	PERF_O_TX_DEPTH,
	PERF_O_RX_DEPTH,
	PERF_O_BUF_SIZE,
	PERF_O_NBUFS,
};

struct perf_opt {
	const char *name;	/* --name; NULL: only the letter */
	int val;		/* the letter (below 256), or PERF_O_* */
	int has_arg;
	unsigned who;		/* PERF_FOR_* */
};

/* In the order of --help's listing, which getopt's messages follow too. */
static const struct perf_opt perf_opt_table[] = {
	{ "server", 's', no_argument, PERF_FOR_ALL },
	{ "client", 'c', required_argument, PERF_FOR_ALL },
	/* -a: the listen address to a server, "all sizes" to a client. */
	{ NULL, 'a', required_argument, PERF_FOR_TOOLS | PERF_FOR_SERVER },
	{ NULL, 'a', no_argument, PERF_FOR_TOOLS | PERF_FOR_CLIENT },
	{ "port", 'p', required_argument, PERF_FOR_ALL },
	{ "size", 'S', required_argument, PERF_FOR_ALL },
	{ "all", PERF_O_ALL, no_argument, PERF_FOR_ALL },
	{ "iters", 'n', required_argument, PERF_FOR_ALL },
	{ "mode", 'm', required_argument, PERF_FOR_ALL },
	{ "poller-idle", PERF_O_IDLE, required_argument, PERF_FOR_ALL },
	{ "poller-cpu", PERF_O_CPU, required_argument, PERF_FOR_ALL },
	{ "event", 'e', no_argument, PERF_FOR_ALL },
	{ "verify", 'V', no_argument, PERF_FOR_ALL },
	{ "json", 'J', no_argument, PERF_FOR_ALL },
	{ "timeout", PERF_O_TIMEOUT, required_argument, PERF_FOR_ALL },
	{ "help", 'h', no_argument, PERF_FOR_ALL },
	{ "test", 't', required_argument, PERF_FOR_ALL },
	{ "batch", 'b', required_argument, PERF_FOR_LCHAN | PERF_FOR_SIDES },
	{ "cq-mod", 'Q', required_argument, PERF_FOR_LCHAN | PERF_FOR_SIDES },
	{ "tx-depth", PERF_O_TX_DEPTH, required_argument,
	  PERF_FOR_LCHAN | PERF_FOR_SIDES },
	{ "rx-depth", PERF_O_RX_DEPTH, required_argument,
	  PERF_FOR_LCHAN | PERF_FOR_SIDES },
	{ "zero-copy", 'z', no_argument, PERF_FOR_MSG | PERF_FOR_SIDES },
	{ "buf-size", PERF_O_BUF_SIZE, required_argument,
	  PERF_FOR_MSG | PERF_FOR_SIDES },
	{ "nbufs", PERF_O_NBUFS, required_argument,
	  PERF_FOR_MSG | PERF_FOR_SIDES },
};

#define PERF_NOPTS	(sizeof(perf_opt_table) / sizeof(perf_opt_table[0]))

static int perf_parse_size(const char *s, size_t *out)
{
	char *end;
	unsigned long long v = strtoull(s, &end, 0);

	if (end == s)
		return -EINVAL;
	if (*end == 'k' || *end == 'K')
		v <<= 10, end++;
	else if (*end == 'm' || *end == 'M')
		v <<= 20, end++;
	if (*end || !v || v > (1ULL << 30))
		return -EINVAL;
	*out = (size_t)v;
	return 0;
}

/* Sizes "64,4k,1M" into @sizes (at most @max, each 1 B to 1 GiB). */
static int perf_parse_sizes(const char *arg, size_t *sizes, unsigned max,
			    unsigned *n)
{
	char *copy = strdup(arg), *tok, *save = NULL;
	int ret = 0;

	if (!copy)
		return -ENOMEM;
	*n = 0;
	for (tok = strtok_r(copy, ",", &save); tok && !ret;
	     tok = strtok_r(NULL, ",", &save)) {
		if (*n == max)
			ret = -E2BIG;
		else
			ret = perf_parse_size(tok, &sizes[(*n)++]);
	}
	free(copy);
	return ret || !*n ? -EINVAL : 0;
}

/* A number up to @max, or a message and exit status 2. */
static unsigned long perf_parse_ulong(const char *s, unsigned long max)
{
	char *end;
	unsigned long v = strtoul(s, &end, 0);

	if (end == s || *end || v > max) {
		fprintf(stderr, "%s: bad number '%s'\n",
			program_invocation_short_name, s);
		exit(2);
	}
	return v;
}


/* Take option @val; 0, or <0 when the value (or the option) is bad. */
static int perf_opt_set(struct perf_opts *o, const struct perf_tool *t,
			int val, const char *arg)
{
	switch (val) {
	case 's':
		/* Found before getopt, for -a's sake. */
		break;
	case 'c':
		o->host = arg;
		break;
	case 'a':
		if (o->server)
			o->host = arg;
		else
			o->all = true;
		break;
	case PERF_O_ALL:
		o->all = true;
		break;
	case 'p':
		o->port = arg;
		break;
	case 'S':
		o->sizes_arg = arg;
		break;
	case 'n':
		o->iters = perf_parse_ulong(arg, 1UL << 30);
		break;
	case 'm':
		if (!strcmp(arg, "poller")) {
			o->poller = true;
		} else if (!strcmp(arg, "direct") &&
			   t->tool == PERF_FOR_LCHAN) {
			o->direct = true;
		} else if (strcmp(arg, "doorbell")) {
			fprintf(stderr, "%s: --mode is doorbell or poller%s\n",
				t->name, t->tool == PERF_FOR_LCHAN ?
				" or direct" : "");
			return -EINVAL;
		}
		break;
	case PERF_O_IDLE:
		o->idle_ms = (unsigned)perf_parse_ulong(arg, 600000);
		break;
	case PERF_O_CPU:
		o->poller_cpu = (int)perf_parse_ulong(arg, 4095);
		break;
	case 'e':
		o->event = true;
		break;
	case 'V':
		o->verify = true;
		break;
	case 'J':
		o->json = true;
		break;
	case PERF_O_TIMEOUT:
		o->timeout_s = (unsigned)perf_parse_ulong(arg, 3600);
		if (!o->timeout_s)
			o->timeout_s = 1;
		break;
	case 't':
		o->test = t->find_test(arg);
		if (o->test < 0) {
			fprintf(stderr, "%s: unknown test '%s'\n", t->name,
				arg);
			return -EINVAL;
		}
		break;
	case 'b':
		o->batch = (unsigned)perf_parse_ulong(arg, 4096);
		break;
	case 'Q':
		o->cq_mod = (unsigned)perf_parse_ulong(arg, 4096);
		break;
	case PERF_O_TX_DEPTH:
		o->tx_depth = (unsigned)perf_parse_ulong(arg, 4096);
		break;
	case PERF_O_RX_DEPTH:
		o->rx_depth = (unsigned)perf_parse_ulong(arg, 4096);
		break;
	case 'z':
		o->zcopy = true;
		break;
	case PERF_O_BUF_SIZE:
		o->buf_size = (unsigned)perf_parse_ulong(arg, 1UL << 24);
		break;
	case PERF_O_NBUFS:
		o->nbufs = (unsigned)perf_parse_ulong(arg, 1024);
		break;
	default:
		/* -h, and what getopt did not know ('?') */
		return -EINVAL;
	}
	return 0;
}

int perf_opts_parse(struct perf_opts *o, const struct perf_tool *t, int argc,
		    char **argv)
{
	struct option longs[PERF_NOPTS + 1];
	char shorts[2 * PERF_NOPTS + 1];
	unsigned who = t->tool, i, nl = 0, ns = 0;
	int val, ret;

	*o = (struct perf_opts){
		.port = t->port,
		.poller_cpu = -1,
		.timeout_s = 30,
		.batch = 16,
		.tx_depth = 128,
		.rx_depth = 512,
		.buf_size = 8192,
		.nbufs = 32,
	};
	for (i = 1; i < (unsigned)argc; i++)
		if (!strcmp(argv[i], "-s") || !strcmp(argv[i], "--server"))
			o->server = true;
	who |= o->server ? PERF_FOR_SERVER : PERF_FOR_CLIENT;

	for (i = 0; i < PERF_NOPTS; i++) {
		const struct perf_opt *d = &perf_opt_table[i];

		if ((d->who & who) != who)
			continue;
		if (d->name)
			longs[nl++] = (struct option){ d->name, d->has_arg,
						       NULL, d->val };
		if (d->val < 256) {
			shorts[ns++] = (char)d->val;
			if (d->has_arg == required_argument)
				shorts[ns++] = ':';
		}
	}
	longs[nl] = (struct option){ NULL, 0, NULL, 0 };
	shorts[ns] = 0;

	while ((val = getopt_long(argc, argv, shorts, longs, NULL)) != -1) {
		ret = perf_opt_set(o, t, val, optarg);
		if (ret)
			return ret;
	}
	return 0;
}

int perf_opts_finish(struct perf_opts *o, const char *tool, int argc,
		     size_t def_size)
{
	if (optind != argc || (!o->server && !o->host))
		return -EINVAL;
	if (o->sizes_arg && perf_parse_sizes(o->sizes_arg, o->sizes,
					PERF_MAX_SIZES, &o->nsizes)) {
		fprintf(stderr, "%s: bad size list '%s'\n", tool,
			o->sizes_arg);
		return -EINVAL;
	}
	if (o->all) {
		size_t top = o->nsizes ? o->sizes[o->nsizes - 1] : 65536, s;

		o->nsizes = 0;
		for (s = 2; s <= top && o->nsizes < PERF_MAX_SIZES; s *= 2)
			o->sizes[o->nsizes++] = s;
	}
	if (!o->nsizes) {
		o->sizes[0] = def_size;
		o->nsizes = 1;
	}
	return 0;
}

