// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * lchanctl: show lchan channels and devices, from sysfs only.
 *
 *   lchanctl [-j] [-p] [-d DIR] [list]     one line per channel
 *   lchanctl [-j] [-p] [-d DIR] show [ID]  every attribute of a channel
 *   lchanctl [-j] [-p] [-d DIR] devices    one line per RDMA device
 *
 * The text output follows the rdma tool: a name, then "key value" pairs on
 * one line.  With -j the same objects come out as a JSON array.  The sysfs
 * directory is /sys/kernel/lchan unless -d or LCHAN_SYSFS says otherwise.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "json.h"

#define LCHANCTL_SYSFS	"/sys/kernel/lchan"
#define MAX_ATTRS	64
#define MAX_VALUE	256

struct attr {
	char name[64];
	char value[MAX_VALUE];
};

/* One sysfs directory read in full: a channel or a device. */
struct obj {
	char name[64];
	unsigned nattrs;
	struct attr attrs[MAX_ATTRS];
};

struct opts {
	const char *root;
	bool json;
	bool pretty;
};

/* Attributes in the order people read them; the rest follow by name. */
static const char *const chan_order[] = {
	"state", "device", "port", "local_addr", "local_port", "remote_addr",
	"remote_port", "local_qpn", "remote_qpn", "pid", "comm", "kind",
	"mode", "ack_timeout", "retry_count", "keepalive_ms", "keepalive_probes",
	"sq_entries", "rq_entries", "cq_entries", "sq_outstanding",
	"rq_outstanding", "send_ops", "send_bytes", "recv_ops", "recv_bytes",
	"errors", "enters", "poller", "poller_ns", NULL,
};

static const char *const dev_order[] = {
	"transport", "ports", "channels", "max_qp_wr", "max_send_sge", NULL,
};

static const char *const *attr_order;

static int order_of(const char *name)
{
	int i;

	for (i = 0; attr_order && attr_order[i]; i++)
		if (!strcmp(attr_order[i], name))
			return i;
	return 1000;
}

static int cmp_attr(const void *a, const void *b)
{
	const struct attr *x = a, *y = b;
	int ox = order_of(x->name), oy = order_of(y->name);

	if (ox != oy)
		return ox < oy ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* Copy a name that fits; false (and nothing copied) when it does not. */
static bool copy_name(char *dst, size_t len, const char *src)
{
	size_t n = strlen(src);

	if (n >= len)
		return false;
	memcpy(dst, src, n + 1);
	return true;
}

/* A file's first line, without the newline; -errno on failure. */
static int read_value(int dirfd, const char *name, char *buf, size_t len)
{
	ssize_t n;
	int fd;

	fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = 0;
	buf[strcspn(buf, "\n")] = 0;
	return 0;
}

/*
 * Read every regular file of @dir into @o, sorted by @order.  -ENOENT when
 * the directory is gone (a channel closed while we looked).
 */
static int read_obj(const char *dir, const char *name,
		    const char *const *order, struct obj *o)
{
	struct dirent *de;
	struct stat st;
	DIR *d;
	int ret = 0;

	memset(o, 0, sizeof(*o));
	snprintf(o->name, sizeof(o->name), "%s", name);
	d = opendir(dir);
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		struct attr *a;

		if (de->d_name[0] == '.')
			continue;
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) ||
		    !S_ISREG(st.st_mode))
			continue;
		if (o->nattrs == MAX_ATTRS)
			break;
		a = &o->attrs[o->nattrs];
		if (!copy_name(a->name, sizeof(a->name), de->d_name))
			continue;
		ret = read_value(dirfd(d), de->d_name, a->value,
				 sizeof(a->value));
		if (ret == -ENOENT || ret == -ENODEV)
			break;		/* the object went away */
		if (ret) {
			/* Unreadable (e.g. write-only): show it as such. */
			snprintf(a->value, sizeof(a->value), "?");
			ret = 0;
		}
		o->nattrs++;
	}
	closedir(d);
	if (ret)
		return ret;
	attr_order = order;
	qsort(o->attrs, o->nattrs, sizeof(o->attrs[0]), cmp_attr);
	return 0;
}

static const char *get(const struct obj *o, const char *name)
{
	unsigned i;

	for (i = 0; i < o->nattrs; i++)
		if (!strcmp(o->attrs[i].name, name))
			return o->attrs[i].value;
	return NULL;
}

static const char *get_or(const struct obj *o, const char *name,
			  const char *dflt)
{
	const char *v = get(o, name);

	return v && *v ? v : dflt;
}

/* Names of the entries of @dir, sorted (numerically when @numeric). */
struct names {
	unsigned n;
	char (*v)[64];
};

static int cmp_num(const void *a, const void *b)
{
	unsigned long x = strtoul(a, NULL, 10), y = strtoul(b, NULL, 10);

	return x < y ? -1 : x > y;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(a, b);
}

static int list_dir(const char *dir, bool numeric, struct names *out)
{
	struct dirent *de;
	unsigned cap = 0;
	DIR *d;

	out->n = 0;
	out->v = NULL;
	d = opendir(dir);
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.' || strlen(de->d_name) >= sizeof(out->v[0]))
			continue;
		if (out->n == cap) {
			void *p;

			cap = cap ? 2 * cap : 16;
			p = realloc(out->v, cap * sizeof(*out->v));
			if (!p) {
				closedir(d);
				return -ENOMEM;
			}
			out->v = p;
		}
		copy_name(out->v[out->n++], sizeof(out->v[0]), de->d_name);
	}
	closedir(d);
	if (out->n)
		qsort(out->v, out->n, sizeof(out->v[0]),
		      numeric ? cmp_num : cmp_str);
	return 0;
}

/* ------------------------------------------------------------ commands */

static const char *const chan_list_keys[] = {
	"state", "device", "port", "local_addr", "local_port", "remote_addr",
	"remote_port", "pid", "comm", "kind", "mode", "ack_timeout",
	"retry_count", "keepalive_ms", "send_ops", "recv_ops", "errors", NULL,
};

/* "addr:port", "[addr6]:port", or "-" when there is no address. */
static void format_endpoint(const struct obj *o, const char *side, char *buf,
			    size_t len)
{
	char key[32];
	const char *addr, *port;

	snprintf(key, sizeof(key), "%s_addr", side);
	addr = get_or(o, key, "none");
	snprintf(key, sizeof(key), "%s_port", side);
	port = get_or(o, key, "0");
	if (!strcmp(addr, "none"))
		snprintf(buf, len, "-");
	else if (strchr(addr, ':'))
		snprintf(buf, len, "[%s]:%s", addr, port);
	else
		snprintf(buf, len, "%s:%s", addr, port);
}

/*
 * " rc T/R (S s)": the ACK timeout exponent, the retry count and the bound
 * they put on noticing a silent peer, (R + 1) * 4.096 us * 2^T; " rc tcp"
 * where they are 0 (iWARP: TCP retransmits).  Nothing from an older module.
 */
static void print_chan_rc(const struct obj *o)
{
	const char *t = get(o, "ack_timeout"), *r = get(o, "retry_count");
	unsigned long timeout, retry;

	if (!t || !r)
		return;
	timeout = strtoul(t, NULL, 10);
	retry = strtoul(r, NULL, 10);
	if (!timeout) {
		printf(" rc tcp");
		return;
	}
	printf(" rc %lu/%lu (%.3g s)", timeout, retry,
	       (retry + 1) * 4.096e-6 * (double)(1ULL << (timeout & 63)));
}

/* " keepalive N ms" or " keepalive off"; nothing from an older module. */
static void print_chan_keepalive(const struct obj *o)
{
	const char *ms = get(o, "keepalive_ms");

	if (!ms)
		return;
	if (!strtoul(ms, NULL, 10))
		printf(" keepalive off");
	else
		printf(" keepalive %s ms", ms);
}

static void print_chan_line(const struct obj *o)
{
	char local[96], remote[96];
	const char *mode = get(o, "mode"), *comm = get(o, "comm");
	const char *kind = get(o, "kind");

	format_endpoint(o, "local", local, sizeof(local));
	format_endpoint(o, "remote", remote, sizeof(remote));
	printf("chan %s dev %s/%s state %s %s -> %s pid %s", o->name,
	       get_or(o, "device", "-"), get_or(o, "port", "-"),
	       get_or(o, "state", "-"), local, remote, get_or(o, "pid", "-"));
	if (comm)
		printf(" prog %s", comm);
	/* A stream channel carries a socket's bytes: no rings to look at. */
	if (kind && !strcmp(kind, "stream"))
		printf(" kind stream");
	if (mode)
		printf(" mode %s", mode);
	print_chan_rc(o);
	print_chan_keepalive(o);
	printf(" send %s recv %s errors %s\n", get_or(o, "send_ops", "-"),
	       get_or(o, "recv_ops", "-"), get_or(o, "errors", "-"));
}

static void print_chan_detail(const struct obj *o)
{
	unsigned i;

	printf("chan %s\n", o->name);
	for (i = 0; i < o->nattrs; i++)
		printf("    %-15s %s\n", o->attrs[i].name, o->attrs[i].value);
}

static void print_dev_line(const struct obj *o)
{
	unsigned i;

	printf("%s:", o->name);
	for (i = 0; i < o->nattrs; i++)
		printf(" %s %s", o->attrs[i].name, o->attrs[i].value);
	putchar('\n');
}

/* One JSON object: the name under @name_key, then @keys (all when NULL). */
static void json_obj(struct json *j, const struct obj *o, const char *name_key,
		     const char *const *keys)
{
	unsigned i;

	json_open(j, NULL, '{');
	json_text(j, name_key, o->name);
	if (keys) {
		for (i = 0; keys[i]; i++) {
			const char *v = get(o, keys[i]);

			if (v)
				json_text(j, keys[i], v);
		}
	} else {
		for (i = 0; i < o->nattrs; i++)
			json_text(j, o->attrs[i].name, o->attrs[i].value);
	}
	json_close(j);
}

enum what { CHAN_LIST, CHAN_SHOW, DEV_LIST };

/*
 * List the channels or the devices and print each as @what asks.  @only:
 * one channel id, or NULL for all.  Returns the exit status.
 */
static int run(const struct opts *op, enum what what, const char *only)
{
	bool chans = what != DEV_LIST;
	struct json j = { .layout = op->pretty ? JSON_PRETTY : JSON_COMPACT };
	char dir[4096], path[4096 + 80];
	struct names names = { 0 };
	struct obj *o;
	unsigned i, shown = 0;
	int ret;

	snprintf(dir, sizeof(dir), "%s/%s", op->root,
		 chans ? "channels" : "devices");
	/* The module makes the directory when it loads. */
	if (access(dir, F_OK) && errno == ENOENT)
		return cli_module_missing(dir, "no such directory");
	o = malloc(sizeof(*o));
	if (!o)
		return CLI_EXIT_FAIL;
	if (only) {
		names.v = malloc(sizeof(*names.v));
		if (!names.v) {
			free(o);
			return CLI_EXIT_FAIL;
		}
		names.n = 1;
		snprintf(names.v[0], sizeof(names.v[0]), "%s", only);
	} else {
		ret = list_dir(dir, chans, &names);
		if (ret) {
			fprintf(stderr, "lchanctl: %s: %s\n", dir,
				strerror(-ret));
			free(o);
			return CLI_EXIT_FAIL;
		}
	}
	for (i = 0; i < names.n; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names.v[i]);
		ret = read_obj(path, names.v[i], chans ? chan_order : dev_order,
			       o);
		if (ret == -ENOENT && !only)
			continue;	/* closed meanwhile */
		if (ret) {
			if (ret == -ENOENT)
				fprintf(stderr, "lchanctl: no channel %s\n",
					only);
			else
				fprintf(stderr, "lchanctl: %s: %s\n", path,
					strerror(-ret));
			free(names.v);
			free(o);
			return CLI_EXIT_FAIL;
		}
		if (op->json && !shown)
			json_open(&j, NULL, '[');
		shown++;
		if (op->json)
			json_obj(&j, o, chans ? "id" : "name",
				 what == CHAN_LIST ? chan_list_keys : NULL);
		else if (what == CHAN_LIST)
			print_chan_line(o);
		else if (what == CHAN_SHOW)
			print_chan_detail(o);
		else
			print_dev_line(o);
	}
	if (op->json) {
		if (!shown)
			json_open(&j, NULL, '[');
		json_close(&j);
	}
	free(names.v);
	free(o);
	return 0;
}

static void usage(void)
{
	printf("usage: lchanctl [OPTIONS] [list]      one line per channel\n"
	       "       lchanctl [OPTIONS] show [ID]   every attribute of a channel\n"
	       "       lchanctl [OPTIONS] devices     the RDMA devices lchan uses\n"
	       "options:\n"
	       "  -j, --json        JSON output (an array of objects)\n"
	       "  -p, --pretty      indent the JSON\n"
	       "  -d, --sysfs DIR   read DIR instead of %s\n"
	       "                    (also: environment variable LCHAN_SYSFS)\n"
	       "  -h, --help        this text\n"
	       "Exit status: 0 done, 1 no such channel or an error, 2 usage error,\n"
	       "3 the lchan module is not loaded (no sysfs directory).\n",
	       LCHANCTL_SYSFS);
}

static bool valid_id(const char *s)
{
	return *s && strspn(s, "0123456789") == strlen(s) &&
	       strlen(s) < 16;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "pretty", no_argument, NULL, 'p' },
		{ "sysfs", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct opts op = { .root = getenv("LCHAN_SYSFS") };
	const char *cmd, *id = NULL;
	enum what what;
	int c, ret;

	if (!op.root || !*op.root)
		op.root = LCHANCTL_SYSFS;
	cli_start(argv);
	while ((c = getopt_long(argc, argv, "+jpd:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'j':
			op.json = true;
			break;
		case 'p':
			op.pretty = true;
			break;
		case 'd':
			op.root = optarg;
			break;
		case 'h':
			usage();
			return 0;
		default:
			cli_bad_option();
		}
	}
	cmd = optind < argc ? argv[optind++] : "list";
	if (!strcmp(cmd, "list") || !strcmp(cmd, "channels")) {
		what = CHAN_LIST;
	} else if (!strcmp(cmd, "show")) {
		what = CHAN_SHOW;
		if (optind < argc)
			id = argv[optind++];
		if (id && !valid_id(id))
			cli_usage_error("show: channel id '%s' is not a number",
					id);
	} else if (!strcmp(cmd, "devices") || !strcmp(cmd, "dev")) {
		what = DEV_LIST;
	} else if (!strcmp(cmd, "help")) {
		usage();
		return 0;
	} else {
		cli_usage_error("unknown command '%s' (list, show, devices)",
				cmd);
	}
	cli_no_operands(argc, argv, optind);
	ret = run(&op, what, id);
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "lchanctl: writing the output: %s\n",
			strerror(errno));
		return CLI_EXIT_FAIL;
	}
	return ret;
}
