// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/* The command line and start-up conventions of the tools (cli.h). */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

void cli_start(char **argv)
{
	argv[0] = program_invocation_short_name;
}

void cli_bad_option(void)
{
	fprintf(stderr, "Try '%s --help'.\n", program_invocation_short_name);
	exit(CLI_EXIT_USAGE);
}

void cli_usage_error(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", program_invocation_short_name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	cli_bad_option();
}

void cli_no_operands(int argc, char **argv, int optind)
{
	if (optind < argc)
		cli_usage_error("unexpected argument '%s'", argv[optind]);
}

/* Decimal digits from @s into *@v; the rest in *@end.  false: none, or too big. */
static bool cli_digits(const char *s, unsigned long long *v, char **end)
{
	if (!isdigit((unsigned char)*s))
		return false;	/* no sign, no blank */
	errno = 0;
	*v = strtoull(s, end, 10);
	return !errno;
}

const char *cli_port(const char *opt, const char *arg)
{
	unsigned long long v;
	char *end;

	if (!cli_digits(arg, &v, &end) || *end || !v || v > CLI_PORT_MAX)
		cli_usage_error("%s: bad port '%s' (1..%u)", opt, arg,
				CLI_PORT_MAX);
	return arg;
}

unsigned long cli_number(const char *opt, const char *arg, unsigned long min,
			 unsigned long max)
{
	unsigned long long v;
	char *end;

	if (!cli_digits(arg, &v, &end) || *end || v < min || v > max)
		cli_usage_error("%s: bad number '%s' (%lu..%lu)", opt, arg, min,
				max);
	return (unsigned long)v;
}

size_t cli_size(const char *opt, const char *arg, size_t min, size_t max)
{
	unsigned long long v;
	unsigned shift = 0;
	char *end;
	bool ok = cli_digits(arg, &v, &end);

	if (ok && *end) {
		switch (*end++) {
		case 'k': case 'K': shift = 10; break;
		case 'm': case 'M': shift = 20; break;
		case 'g': case 'G': shift = 30; break;
		default: ok = false;
		}
		ok = ok && !*end && v <= (max >> shift);
		v <<= shift;
	}
	if (!ok || v < min || v > max)
		cli_usage_error("%s: bad size '%s' (%zu..%zu)", opt, arg, min,
				max);
	return (size_t)v;
}

double cli_seconds(const char *opt, const char *arg, double min, double max)
{
	char *end;
	double v;

	errno = 0;
	v = isdigit((unsigned char)*arg) || *arg == '.' ?
	    strtod(arg, &end) : NAN;
	if (isnan(v) || errno || *end || v < min || v > max)
		cli_usage_error("%s: bad time '%s' (%g..%g seconds)", opt, arg,
				min, max);
	return v;
}

void cli_address(const char **addr, const char *opt, const char *arg)
{
	if (*addr && strcmp(*addr, arg))
		cli_usage_error("%s %s: a second address (the first: %s)", opt,
				arg, *addr);
	*addr = arg;
}

void cli_one_side(bool server, bool client)
{
	if (server && client)
		cli_usage_error("-s and -c: the server or a client, not both");
	if (!server && !client)
		cli_usage_error("-s (the server) or -c ADDR (a client) is needed");
}

int cli_module_missing(const char *path, const char *what)
{
	fprintf(stderr, "%s: %s: %s: is the lchan module loaded? (modprobe lchan)\n",
		program_invocation_short_name, path, what);
	return CLI_EXIT_NO_MODULE;
}

int cli_open_failed(const char *path, int err)
{
	/* No node (ENOENT), or a node without its driver (ENODEV, ENXIO). */
	if (err == -ENOENT || err == -ENODEV || err == -ENXIO)
		return cli_module_missing(path, "no such device");
	fprintf(stderr, "%s: %s: %s\n", program_invocation_short_name, path,
		strerror(-err));
	return CLI_EXIT_FAIL;
}
