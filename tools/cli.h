/* SPDX-License-Identifier: LGPL-2.1-or-later OR MIT */
/*
 * What every program of tools/ does alike on its command line: -h and
 * --help print the usage on stdout and exit 0; a usage error is one line
 * on stderr naming what was wrong, then "Try 'TOOL --help'.", and exit
 * status 2; ports, sizes and numbers are checked before anything is
 * opened; a missing lchan module is one line saying how to load it, and
 * exit status 3.
 */
#ifndef LCHAN_CLI_H
#define LCHAN_CLI_H

#include <stdbool.h>
#include <stddef.h>

/* The exit statuses, the same in every tool and in its man page; 0: done. */
#define CLI_EXIT_FAIL		1	/* an error, a failed data check */
#define CLI_EXIT_USAGE		2	/* a bad command line */
#define CLI_EXIT_NO_MODULE	3	/* lchan is not loaded */
#define CLI_EXIT_SKIP		4	/* kselftest's KSFT_SKIP: not run here */

#define CLI_PORT_MAX	65535
#define CLI_SIZE_MAX	(1ul << 30)

/*
 * First thing in main(): getopt's own messages ("invalid option",
 * "option requires an argument") then name the tool as ours do.
 */
void cli_start(char **argv);

/* "TOOL: <fmt>" and the --help hint on stderr; exit status 2. */
__attribute__((format(printf, 1, 2), noreturn))
void cli_usage_error(const char *fmt, ...);
/* After getopt's message (its '?'): the --help hint; exit status 2. */
__attribute__((noreturn)) void cli_bad_option(void);
/* Operands left after the options are a usage error. */
void cli_no_operands(int argc, char **argv, int optind);

/*
 * Checked values of option @opt ("-p", "--timeout"): the value, or a
 * usage error naming @opt, @arg and the range.
 */
const char *cli_port(const char *opt, const char *arg);
unsigned long cli_number(const char *opt, const char *arg, unsigned long min,
			 unsigned long max);
/* Bytes, with an optional K, M or G suffix (powers of 1024). */
size_t cli_size(const char *opt, const char *arg, size_t min, size_t max);
double cli_seconds(const char *opt, const char *arg, double min, double max);

/*
 * -a ADDR and -c ADDR name one address: where a server listens, what a
 * client connects to.  A second, different one is a usage error.
 */
void cli_address(const char **addr, const char *opt, const char *arg);
/* Exactly one of -s (server) and -c ADDR (client), else a usage error. */
void cli_one_side(bool server, bool client);

/*
 * Opening @path (/dev/lchan) failed with @err (<0): one line on stderr,
 * the module hint when the device is not there.  Returns the exit
 * status: 3 for a missing module, else 1.
 */
int cli_open_failed(const char *path, int err);
/* "TOOL: @path: @what: is the lchan module loaded? ..."; returns 3. */
int cli_module_missing(const char *path, const char *what);

#endif /* LCHAN_CLI_H */
