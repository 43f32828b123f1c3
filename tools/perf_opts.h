/* SPDX-License-Identifier: LGPL-2.1-or-later OR MIT */
/*
 * The options of lchan_perf and lchan_msg_perf: one table for both, one
 * parser.  The rig runs either tool with the same command line.
 */
#ifndef LCHAN_PERF_OPTS_H
#define LCHAN_PERF_OPTS_H

#include <stdbool.h>
#include <stddef.h>

#define PERF_MAX_SIZES	64

/* Who takes an option. */
#define PERF_FOR_LCHAN	(1u << 0)	/* lchan_perf */
#define PERF_FOR_MSG	(1u << 1)	/* lchan_msg_perf */

/* What a tool tells the parser about itself. */
struct perf_tool {
	const char *name;
	unsigned tool;		/* PERF_FOR_LCHAN or PERF_FOR_MSG */
	const char *port;	/* the default */
	int (*find_test)(const char *name);	/* its number, or -1 */
	const char *tests;	/* their names, for a bad -t */
	void (*usage)(void);	/* --help: on stdout */
};

struct perf_opts {
	bool server;		/* -s */
	bool client;		/* -c */
	const char *host;	/* -a or -c: where the server listens, or the peer */
	const char *port;
	size_t sizes[PERF_MAX_SIZES];
	unsigned nsizes;
	const char *sizes_arg;	/* -S as given */
	bool all;		/* --all: every power of two */
	unsigned long iters;	/* 0: the tool's default */
	bool poller;		/* --mode poller */
	bool direct;		/* --mode direct */
	unsigned idle_ms;
	int poller_cpu;
	bool event;
	bool verify;
	bool json;
	unsigned timeout_s;
	int test;		/* -t, numbered by the tool's find_test() */

	/* lchan_perf */
	unsigned batch;
	unsigned cq_mod;	/* 0: the tool's default */
	unsigned tx_depth;
	unsigned rx_depth;

	/* lchan_msg_perf */
	bool zcopy;
	unsigned buf_size;
	unsigned nbufs;
};

/*
 * Defaults, then every option of @t in @argv, each value checked: a bad
 * one, or an option @t does not take, is a usage error (cli.h) and -h
 * prints @t's usage; neither returns.
 */
void perf_opts_parse(struct perf_opts *o, const struct perf_tool *t, int argc,
		     char **argv);
/*
 * After the tool's own adjustments, the sizes: -S, the --all sweep up to
 * the last -S size (64K without one), else @def_size.
 */
void perf_opts_finish(struct perf_opts *o, size_t def_size);

#endif /* LCHAN_PERF_OPTS_H */
