/* SPDX-License-Identifier: LGPL-2.1-or-later OR MIT */
/*
 * What lchan_echo and tcp_echo share, so that the two differ only in how
 * they move a message: the options, the buffers and their data, the clock
 * and the client's report.
 */
#ifndef LCHAN_ECHO_UTIL_H
#define LCHAN_ECHO_UTIL_H

#include <stdbool.h>
#include <stddef.h>

#include "measure.h"

struct echo_opts {
	const char *tool;	/* its name, in messages */
	bool server;		/* -s */
	bool lchan;		/* lchan_echo, not tcp_echo: it opens /dev/lchan */
	bool stream;		/* tcp_echo -L: over an lchan stream channel */
	/* -a or -c: where the server listens (NULL: any), or the server */
	const char *addr;
	const char *port;	/* -p */
	unsigned count;		/* -n: the client's round trips */
	size_t size;		/* -S: the client's message, the server's largest */
};

/*
 * The options of @tool (whose default port is @port; @lchan: it is
 * lchan_echo) from @argv, checked; a usage error, or --help, exits
 * (cli.h).
 */
void echo_opts_parse(struct echo_opts *o, const char *tool, const char *port,
		     bool lchan, int argc, char **argv);
/* Two buffers of o->size bytes: 0, or 1 (the exit status) after a message. */
int echo_buffers(const struct echo_opts *o, unsigned char **out,
		 unsigned char **in);
/* The bytes of the client's message @i. */
void echo_fill(unsigned char *p, unsigned i, size_t len);
/*
 * "<tool>: @what: <strerror(-@ret)>" on stderr, or "bad data" for @ret 0;
 * returns 1, the exit status.
 */
int echo_die(const struct echo_opts *o, const char *what, long ret);
/*
 * The client's check of a reply to @out, @ret the receive's result:
 * 0, or 1 (the exit status) after a message.
 */
int echo_check(const struct echo_opts *o, const unsigned char *out,
	       const unsigned char *in, long ret);
/* The client's summary of o->count round trips of o->size since @t0. */
void echo_report(const struct echo_opts *o, double t0);

#endif /* LCHAN_ECHO_UTIL_H */
