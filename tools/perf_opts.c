// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/* The option table of lchan_perf and lchan_msg_perf, and its parser. */
#define _GNU_SOURCE
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "perf_opts.h"

#define PERF_FOR_TOOLS	(PERF_FOR_LCHAN | PERF_FOR_MSG)

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

/* In the order of --help's listing. */
static const struct perf_opt perf_opt_table[] = {
	{ "server", 's', no_argument, PERF_FOR_TOOLS },
	{ "client", 'c', required_argument, PERF_FOR_TOOLS },
	{ "addr", 'a', required_argument, PERF_FOR_TOOLS },
	{ "port", 'p', required_argument, PERF_FOR_TOOLS },
	{ "size", 'S', required_argument, PERF_FOR_TOOLS },
	{ "all", PERF_O_ALL, no_argument, PERF_FOR_TOOLS },
	{ "iters", 'n', required_argument, PERF_FOR_TOOLS },
	{ "mode", 'm', required_argument, PERF_FOR_TOOLS },
	{ "poller-idle", PERF_O_IDLE, required_argument, PERF_FOR_TOOLS },
	{ "poller-cpu", PERF_O_CPU, required_argument, PERF_FOR_TOOLS },
	{ "event", 'e', no_argument, PERF_FOR_TOOLS },
	{ "verify", 'V', no_argument, PERF_FOR_TOOLS },
	{ "json", 'J', no_argument, PERF_FOR_TOOLS },
	{ "timeout", PERF_O_TIMEOUT, required_argument, PERF_FOR_TOOLS },
	{ "help", 'h', no_argument, PERF_FOR_TOOLS },
	{ "test", 't', required_argument, PERF_FOR_TOOLS },
	{ "batch", 'b', required_argument, PERF_FOR_LCHAN },
	{ "cq-mod", 'Q', required_argument, PERF_FOR_LCHAN },
	{ "tx-depth", PERF_O_TX_DEPTH, required_argument, PERF_FOR_LCHAN },
	{ "rx-depth", PERF_O_RX_DEPTH, required_argument, PERF_FOR_LCHAN },
	{ "zero-copy", 'z', no_argument, PERF_FOR_MSG },
	{ "buf-size", PERF_O_BUF_SIZE, required_argument, PERF_FOR_MSG },
	{ "nbufs", PERF_O_NBUFS, required_argument, PERF_FOR_MSG },
};

#define PERF_NOPTS	(sizeof(perf_opt_table) / sizeof(perf_opt_table[0]))

/* How messages name option @val: "-S", or "--timeout" without a letter. */
static const char *perf_opt_name(int val, char *buf, size_t len)
{
	unsigned i;

	if (val < 256) {
		snprintf(buf, len, "-%c", val);
		return buf;
	}
	for (i = 0; i < PERF_NOPTS; i++)
		if (perf_opt_table[i].val == val)
			snprintf(buf, len, "--%s", perf_opt_table[i].name);
	return buf;
}

/* Sizes "64,4k,1M" into o->sizes, each checked. */
static void perf_parse_sizes(struct perf_opts *o, const char *opt,
			     const char *arg)
{
	const char *p = arg;

	o->nsizes = 0;
	for (;;) {
		size_t len = strcspn(p, ",");
		char tok[32];

		if (o->nsizes == PERF_MAX_SIZES)
			cli_usage_error("%s: more than %u sizes in '%s'", opt,
					PERF_MAX_SIZES, arg);
		snprintf(tok, sizeof(tok), "%.*s", (int)len, p);
		if (len >= sizeof(tok))
			cli_usage_error("%s: bad size '%.*s' (1..%lu)", opt,
					(int)len, p, CLI_SIZE_MAX);
		o->sizes[o->nsizes++] = cli_size(opt, tok, 1, CLI_SIZE_MAX);
		if (!p[len])
			break;
		p += len + 1;
	}
}

/* Take option @val with its value @arg, checked. */
static void perf_opt_set(struct perf_opts *o, const struct perf_tool *t,
			 int val, const char *arg)
{
	char name[32];
	const char *opt = perf_opt_name(val, name, sizeof(name));

	switch (val) {
	case 's':
		o->server = true;
		break;
	case 'c':
		o->client = true;
		cli_address(&o->host, opt, arg);
		break;
	case 'a':
		cli_address(&o->host, opt, arg);
		break;
	case PERF_O_ALL:
		o->all = true;
		break;
	case 'p':
		o->port = cli_port(opt, arg);
		break;
	case 'S':
		perf_parse_sizes(o, opt, arg);
		break;
	case 'n':
		o->iters = cli_number(opt, arg, 1, 1UL << 30);
		break;
	case 'm':
		o->poller = false;
		o->direct = false;
		if (!strcmp(arg, "poller")) {
			o->poller = true;
		} else if (!strcmp(arg, "direct")) {
			o->direct = true;
		} else if (strcmp(arg, "doorbell")) {
			cli_usage_error("%s: bad mode '%s' (doorbell, poller, direct)",
					opt, arg);
		}
		break;
	case PERF_O_IDLE:
		o->idle_ms = (unsigned)cli_number(opt, arg, 0, 600000);
		break;
	case PERF_O_CPU:
		o->poller_cpu = (int)cli_number(opt, arg, 0, 4095);
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
		o->timeout_s = (unsigned)cli_number(opt, arg, 1, 3600);
		break;
	case 't':
		o->test = t->find_test(arg);
		if (o->test < 0)
			cli_usage_error("%s: unknown test '%s' (%s)", opt, arg,
					t->tests);
		break;
	case 'b':
		o->batch = (unsigned)cli_number(opt, arg, 1, 4096);
		break;
	case 'Q':
		o->cq_mod = (unsigned)cli_number(opt, arg, 1, 4096);
		break;
	case PERF_O_TX_DEPTH:
		o->tx_depth = (unsigned)cli_number(opt, arg, 4, 4096);
		break;
	case PERF_O_RX_DEPTH:
		o->rx_depth = (unsigned)cli_number(opt, arg, 4, 4096);
		break;
	case 'z':
		o->zcopy = true;
		break;
	case PERF_O_BUF_SIZE:
		o->buf_size = (unsigned)cli_size(opt, arg, 1, 1UL << 24);
		break;
	case PERF_O_NBUFS:
		o->nbufs = (unsigned)cli_number(opt, arg, 1, 1024);
		break;
	case 'h':
		t->usage();
		exit(0);
	default:
		/* getopt said what it did not know */
		cli_bad_option();
	}
}

void perf_opts_parse(struct perf_opts *o, const struct perf_tool *t, int argc,
		     char **argv)
{
	struct option longs[PERF_NOPTS + 1];
	char shorts[2 * PERF_NOPTS + 1];
	unsigned i, nl = 0, ns = 0;
	int val;

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
	for (i = 0; i < PERF_NOPTS; i++) {
		const struct perf_opt *d = &perf_opt_table[i];

		if (!(d->who & t->tool))
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

	cli_start(argv);
	while ((val = getopt_long(argc, argv, shorts, longs, NULL)) != -1)
		perf_opt_set(o, t, val, optarg);
	cli_no_operands(argc, argv, optind);
	cli_one_side(o->server, o->client);
}

void perf_opts_finish(struct perf_opts *o, size_t def_size)
{
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
}
