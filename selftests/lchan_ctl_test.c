// SPDX-License-Identifier: GPL-2.0
/*
 * lchanctl against live channels: while a connected pair exchanges
 * messages, its text and JSON output must show both channels with their
 * device, state, addresses, pid and counters, `show ID` every attribute
 * with the value sysfs has, and `devices` the device.  The counters must
 * follow more traffic.
 *
 * lchanctl is $LCHAN_TOOLS/lchanctl (the rig), else ../tools/lchanctl
 * beside this program (build/selftests -> build/tools).
 */
#include <dirent.h>
#include <limits.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "lchan_test.h"

#define NMSG	12
#define OUT_MAX	65536

/* ------------------------------------------------------- minimal JSON */

static const char *json_ws(const char *p)
{
	while (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r')
		p++;
	return p;
}

/* Past one JSON value at @p, or NULL when it is not valid JSON. */
static const char *json_skip(const char *p, int depth)
{
	p = json_ws(p);
	if (depth > 16)
		return NULL;
	if (*p == '"') {
		for (p++; *p && *p != '"'; p++) {
			if ((unsigned char)*p < 0x20)
				return NULL;
			if (*p == '\\') {
				p++;
				if (!*p || !strchr("\"\\/bfnrtu", *p))
					return NULL;
			}
		}
		return *p == '"' ? p + 1 : NULL;
	}
	if (*p == '[' || *p == '{') {
		char close = *p == '[' ? ']' : '}';
		int obj = *p == '{';

		p = json_ws(p + 1);
		if (*p == close)
			return p + 1;
		for (;;) {
			if (obj) {
				if (*p != '"')
					return NULL;
				p = json_skip(p, depth + 1);
				if (!p)
					return NULL;
				p = json_ws(p);
				if (*p++ != ':')
					return NULL;
			}
			p = json_skip(p, depth + 1);
			if (!p)
				return NULL;
			p = json_ws(p);
			if (*p == close)
				return p + 1;
			if (*p++ != ',')
				return NULL;
			p = json_ws(p);
		}
	}
	if (*p == '-' || (*p >= '0' && *p <= '9')) {
		if (*p == '-')
			p++;
		if (*p < '0' || *p > '9')
			return NULL;
		if (*p == '0' && p[1] >= '0' && p[1] <= '9')
			return NULL;
		while (*p >= '0' && *p <= '9')
			p++;
		return p;
	}
	if (!strncmp(p, "true", 4) || !strncmp(p, "null", 4))
		return p + 4;
	if (!strncmp(p, "false", 5))
		return p + 5;
	return NULL;
}

/* The whole text is one JSON array (and nothing after it). */
static int json_is_array(const char *text)
{
	const char *end;

	if (*json_ws(text) != '[')
		return 0;
	end = json_skip(text, 0);
	return end && !*json_ws(end);
}

/*
 * The @n-th object of the top-level array, as [*start, *end).  -1 when
 * there are fewer.
 */
static int json_elem(const char *text, unsigned n, const char **start,
		     const char **end)
{
	const char *p = json_ws(text);
	unsigned i;

	if (*p++ != '[')
		return -1;
	for (i = 0;; i++) {
		p = json_ws(p);
		if (*p != '{')
			return -1;
		*start = p;
		*end = json_skip(p, 0);
		if (!*end)
			return -1;
		if (i == n)
			return 0;
		p = json_ws(*end);
		if (*p++ != ',')
			return -1;
	}
}

/*
 * The member @key of the object at @obj: its text (a string without its
 * quotes, with no escapes expected; a number as written) into @val.
 */
static int json_get(const char *obj, const char *key, char *val, size_t len)
{
	const char *p = json_ws(obj), *v, *e;
	size_t klen = strlen(key);

	if (*p++ != '{')
		return -1;
	for (;;) {
		p = json_ws(p);
		if (*p != '"')
			return -1;
		e = json_skip(p, 0);
		if (!e)
			return -1;
		v = json_ws(json_ws(e) + 1);	/* past ':' */
		if ((size_t)(e - p) == klen + 2 && !strncmp(p + 1, key, klen)) {
			e = json_skip(v, 0);
			if (!e)
				return -1;
			if (*v == '"')
				snprintf(val, len, "%.*s", (int)(e - v - 2),
					 v + 1);
			else
				snprintf(val, len, "%.*s", (int)(e - v), v);
			return 0;
		}
		p = json_skip(v, 0);
		if (!p)
			return -1;
		p = json_ws(p);
		if (*p++ != ',')
			return -1;
	}
}

/* The object of the top-level array whose @key is @want. */
static int json_find(const char *text, const char *key, const char *want,
		     const char **obj)
{
	const char *s, *e;
	char val[256];
	unsigned i;

	for (i = 0; !json_elem(text, i, &s, &e); i++) {
		if (!json_get(s, key, val, sizeof(val)) && !strcmp(val, want)) {
			*obj = s;
			return 0;
		}
	}
	return -1;
}

/* ----------------------------------------------------------- helpers */

static int find_tool(char *buf, size_t len)
{
	const char *dir = getenv("LCHAN_TOOLS");

	if (dir && *dir) {
		snprintf(buf, len, "%s/lchanctl", dir);
		return 0;
	}
	lchan_t_beside_me(buf, len, "../tools/lchanctl");
	return access(buf, X_OK) ? -ENOENT : 0;
}

/* Run lchanctl with @args (NULL-terminated); stdout into @out. */
static int ctl(const char *tool, char *out, size_t len, const char *a1,
	       const char *a2, const char *a3)
{
	const char *argv[] = { tool, a1, a2, a3, NULL };
	struct lchan_t_child c;

	if (lchan_t_spawn(&c, (char *const *)argv, NULL))
		return -1;
	return lchan_t_collect(&c, out, len);
}

/* Show @what in the log, each line behind "# ". */
static void show(const char *what, const char *out)
{
	printf("# $ %s\n", what);
	lchan_t_show_lines(out);
}

/* The line of @out that starts with @prefix, copied to @line. */
static int line_with(const char *out, const char *prefix, char *line,
		     size_t len)
{
	const char *p = out;

	while (*p) {
		int n = (int)strcspn(p, "\n");

		if (!strncmp(p, prefix, strlen(prefix))) {
			snprintf(line, len, "%.*s", n, p);
			return 0;
		}
		p += n;
		if (*p)
			p++;
	}
	return -1;
}

/* " key value" in a text line. */
static int has_pair(const char *line, const char *key, const char *value)
{
	char pat[256];
	const char *p;
	size_t n;

	n = snprintf(pat, sizeof(pat), " %s %s", key, value);
	for (p = strstr(line, pat); p; p = strstr(p + 1, pat))
		if (p[n] == ' ' || !p[n])
			return 1;
	return 0;
}

FIXTURE(ctl) {
	struct lchan_t_dev d;
	struct lchan_t_ep srv, cli;
	char tool[PATH_MAX];
	char *out;
	unsigned sent;		/* client -> server messages so far */
	unsigned back;		/* server -> client */
};

LCHAN_T_VARIANTS(ctl);

FIXTURE_SETUP(ctl)
{
	int ret;

	LCHAN_T_NEED_DEV(&self->d, variant->kind);
	if (find_tool(self->tool, sizeof(self->tool)))
		LCHAN_T_SETUP_SKIP("lchanctl is not built (%.200s): make tools",
		     self->tool);
	self->out = malloc(OUT_MAX);
	ASSERT_NE(NULL, self->out);
	lchan_t_raise_memlock();
	self->srv.slot = self->cli.slot = 256;
	self->srv.nrecv = self->cli.nrecv = 2 * NMSG;
	self->srv.nsend = self->cli.nsend = NMSG;
	ret = lchan_t_ep_pair(&self->srv, &self->cli, self->d.addr, NULL);
	ASSERT_EQ(0, ret) TH_LOG("pair: %s", strerror(-ret));
}

FIXTURE_TEARDOWN(ctl)
{
	lchan_t_ep_close(&self->cli);
	lchan_t_ep_close(&self->srv);
	free(self->out);
}

/* @n messages from @tx to @rx, every completion reaped, receives re-posted. */
static int exchange(struct lchan_t_ep *tx, struct lchan_t_ep *rx, unsigned n)
{
	struct lchan_cqe cqe;
	unsigned i, got = 0, done = 0;
	int ret;

	for (i = 0; i < n; i++) {
		struct lchan_sqe *sqe = lchan_get_sqe(&tx->chan);

		if (!sqe)
			return -ENOSPC;
		lchan_t_fill(lchan_t_send_slot(tx, i), i, 100);
		lchan_prep_send(sqe, &tx->mr, lchan_t_send_slot(tx, i), 100, i);
	}
	ret = lchan_submit(&tx->chan);
	if (ret < 0)
		return ret;
	while (done < n) {
		ret = lchan_t_reap(tx, &cqe, 10000);
		if (ret)
			return ret;
		if (cqe.status)
			return -EIO;
		done++;
	}
	while (got < n) {
		ret = lchan_t_reap(rx, &cqe, 10000);
		if (ret)
			return ret;
		if (cqe.status || cqe.opcode != LCHAN_CQE_RECV ||
		    cqe.byte_len != 100)
			return -EIO;
		ret = lchan_t_post_recv(rx, rx->recv_posted);
		if (ret)
			return ret;
		got++;
	}
	ret = lchan_submit(&rx->chan);
	return ret < 0 ? ret : 0;
}

/* Check the one-line listing of @ep (text) and its JSON object. */
static void check_listed(struct __test_metadata *_metadata,
			 const struct lchan_t_dev *d, struct lchan_t_ep *ep,
			 const char *text, const char *json, unsigned send_ops,
			 unsigned recv_ops)
{
	char prefix[32], line[512], want[256], local[96], remote[96];
	char val[256];
	const char *obj;

	snprintf(prefix, sizeof(prefix), "chan %u ", ep->chan.info.id);
	ASSERT_EQ(0, line_with(text, prefix, line, sizeof(line)))
		TH_LOG("no line '%s...'", prefix);
	snprintf(want, sizeof(want), "%s/%u", d->dev,
		 1U);	/* rxe and siw have one port */
	EXPECT_TRUE(has_pair(line, "dev", want)) TH_LOG("%s", line);
	EXPECT_TRUE(has_pair(line, "state", "connected")) TH_LOG("%s", line);
	ASSERT_EQ(0, lchan_addr_format(&ep->chan.info.local, local,
				       sizeof(local)));
	ASSERT_EQ(0, lchan_addr_format(&ep->chan.info.remote, remote,
				       sizeof(remote)));
	snprintf(want, sizeof(want), " %s -> %s ", local, remote);
	EXPECT_NE(NULL, strstr(line, want)) TH_LOG("want '%s' in %s", want,
						   line);
	snprintf(want, sizeof(want), "%d", getpid());
	EXPECT_TRUE(has_pair(line, "pid", want)) TH_LOG("%s", line);
	/* The program's name, as the kernel keeps it (15 bytes at most). */
	snprintf(want, sizeof(want), "%.15s", program_invocation_short_name);
	EXPECT_TRUE(has_pair(line, "prog", want)) TH_LOG("%s", line);
	EXPECT_EQ(NULL, strstr(line, " kind ")) TH_LOG("%s", line);
	EXPECT_TRUE(has_pair(line, "mode", "doorbell")) TH_LOG("%s", line);
	snprintf(want, sizeof(want), "%u", send_ops);
	EXPECT_TRUE(has_pair(line, "send", want)) TH_LOG("%s", line);
	snprintf(want, sizeof(want), "%u", recv_ops);
	EXPECT_TRUE(has_pair(line, "recv", want)) TH_LOG("%s", line);
	EXPECT_TRUE(has_pair(line, "errors", "0")) TH_LOG("%s", line);
	/* No keepalive asked for: it says so. */
	EXPECT_TRUE(has_pair(line, "keepalive", "off")) TH_LOG("%s", line);

	ASSERT_TRUE(json_is_array(json)) TH_LOG("not a JSON array");
	snprintf(want, sizeof(want), "%u", ep->chan.info.id);
	ASSERT_EQ(0, json_find(json, "id", want, &obj))
		TH_LOG("no object with id %s", want);
#define JSON_EQ(key, fmt, value) do {					\
	snprintf(want, sizeof(want), fmt, value);			\
	EXPECT_EQ(0, json_get(obj, key, val, sizeof(val))) TH_LOG("%s", key); \
	EXPECT_STREQ(want, val) TH_LOG("%s", key);			\
} while (0)
	JSON_EQ("state", "%s", "connected");
	JSON_EQ("device", "%s", d->dev);
	JSON_EQ("port", "%u", 1U);
	JSON_EQ("pid", "%d", getpid());
	JSON_EQ("comm", "%.15s", program_invocation_short_name);
	JSON_EQ("kind", "%s", "channel");
	JSON_EQ("mode", "%s", "doorbell");
	JSON_EQ("send_ops", "%u", send_ops);
	JSON_EQ("recv_ops", "%u", recv_ops);
	JSON_EQ("errors", "%u", 0U);
	JSON_EQ("keepalive_ms", "%u", 0U);
	JSON_EQ("local_port", "%u", (unsigned)ep->chan.info.local.port);
	JSON_EQ("remote_port", "%u", (unsigned)ep->chan.info.remote.port);
#undef JSON_EQ
}

TEST_F(ctl, list_follows_a_live_exchange)
{
	char *json = malloc(OUT_MAX);
	int round;

	ASSERT_NE(NULL, json);
	for (round = 1; round <= 2; round++) {
		ASSERT_EQ(0, exchange(&self->cli, &self->srv, NMSG));
		ASSERT_EQ(0, exchange(&self->srv, &self->cli, NMSG / 2));
		self->sent += NMSG;
		self->back += NMSG / 2;

		ASSERT_EQ(0, ctl(self->tool, self->out, OUT_MAX, NULL, NULL,
				 NULL));
		show("lchanctl", self->out);
		ASSERT_EQ(0, ctl(self->tool, json, OUT_MAX, "--json", NULL,
				 NULL));
		show("lchanctl --json", json);
		check_listed(_metadata, &self->d, &self->cli, self->out, json,
			     self->sent, self->back);
		check_listed(_metadata, &self->d, &self->srv, self->out, json,
			     self->back, self->sent);
	}
	free(json);
}

struct traffic {
	struct lchan_t_ep *cli, *srv;
	volatile int stop;
	int ret;
	unsigned rounds;
};

static void *traffic_thread(void *arg)
{
	struct traffic *t = arg;

	while (!t->stop && !t->ret) {
		t->ret = exchange(t->cli, t->srv, 4);
		if (!t->ret)
			t->ret = exchange(t->srv, t->cli, 2);
		if (!t->ret)
			__atomic_add_fetch(&t->rounds, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

/* The send_ops of channel @id in `lchanctl --json`, or -1. */
static long json_send_ops(const char *tool, char *out, unsigned id)
{
	char want[16], val[32];
	const char *obj;

	if (ctl(tool, out, OUT_MAX, "--json", NULL, NULL) ||
	    !json_is_array(out))
		return -1;
	snprintf(want, sizeof(want), "%u", id);
	if (json_find(out, "id", want, &obj) ||
	    json_get(obj, "send_ops", val, sizeof(val)))
		return -1;
	return atol(val);
}

/* While messages flow: the channels stay listed, the counters only grow. */
TEST_F(ctl, counters_grow_while_messages_flow)
{
	struct traffic t = { .cli = &self->cli, .srv = &self->srv };
	long first, last, v;
	double end;
	pthread_t thr;
	int n = 0;

	ASSERT_EQ(0, pthread_create(&thr, NULL, traffic_thread, &t));
	first = last = json_send_ops(self->tool, self->out,
				     self->cli.chan.info.id);
	end = lchan_t_now() + 10;
	while (first >= 0 && lchan_t_now() < end && !t.ret) {
		usleep(100000);
		v = json_send_ops(self->tool, self->out,
				  self->cli.chan.info.id);
		EXPECT_GE(v, last) TH_LOG("send_ops went from %ld to %ld",
					  last, v);
		last = v;
		if (++n >= 3 && last > first)
			break;
	}
	ASSERT_EQ(0, ctl(self->tool, self->out, OUT_MAX, NULL, NULL, NULL));
	show("lchanctl (messages flowing)", self->out);
	t.stop = 1;
	pthread_join(thr, NULL);
	EXPECT_EQ(0, t.ret) TH_LOG("traffic: %s", strerror(-t.ret));
	EXPECT_GE(first, 0);
	EXPECT_GT(last, first) TH_LOG("no progress seen in %d snapshots", n);
	EXPECT_GT(t.rounds, 0);
}

/* Every attribute file of the channel, with its value, in `show ID`. */
TEST_F(ctl, show_has_every_attribute)
{
	char dir[PATH_MAX], path[PATH_MAX + 300], id[16], val[256], line[512];
	char prefix[320], got[256];
	char *json = malloc(OUT_MAX);
	const char *obj;
	struct dirent *de;
	unsigned n = 0;
	int ret;
	DIR *d;

	ASSERT_NE(NULL, json);
	ASSERT_EQ(0, exchange(&self->cli, &self->srv, NMSG));
	snprintf(id, sizeof(id), "%u", self->cli.chan.info.id);
	ASSERT_EQ(0, ctl(self->tool, self->out, OUT_MAX, "show", id, NULL));
	show("lchanctl show ID", self->out);
	ASSERT_EQ(0, ctl(self->tool, json, OUT_MAX, "-j", "show", id));
	show("lchanctl -j show ID", json);
	ASSERT_TRUE(json_is_array(json));
	ASSERT_EQ(0, json_find(json, "id", id, &obj));
	snprintf(prefix, sizeof(prefix), "chan %s", id);
	ASSERT_EQ(0, line_with(self->out, prefix, line, sizeof(line)));

	snprintf(dir, sizeof(dir), "/sys/kernel/lchan/channels/%s", id);
	d = opendir(dir);
	ASSERT_NE(NULL, d);
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		ASSERT_EQ(0, lchan_t_read_sysfs(path, val, sizeof(val)));
		n++;
		/* Text: "    name  value" (the counters are at rest). */
		snprintf(prefix, sizeof(prefix), "    %s ", de->d_name);
		ret = line_with(self->out, prefix, line, sizeof(line));
		EXPECT_EQ(0, ret) TH_LOG("show lacks %s", de->d_name);
		if (ret)
			continue;
		snprintf(got, sizeof(got), "%s", line + strlen(prefix) +
			 strspn(line + strlen(prefix), " "));
		EXPECT_STREQ(val, got) TH_LOG("%s", de->d_name);
		EXPECT_EQ(0, json_get(obj, de->d_name, got, sizeof(got)))
			TH_LOG("JSON lacks %s", de->d_name);
		EXPECT_STREQ(val, got) TH_LOG("JSON %s", de->d_name);
	}
	closedir(d);
	EXPECT_GE(n, 10);
	free(json);
}

TEST_F(ctl, devices_lists_the_device)
{
	char prefix[80], line[512], val[64];
	char *json = malloc(OUT_MAX);
	const char *obj;

	ASSERT_NE(NULL, json);
	ASSERT_EQ(0, ctl(self->tool, self->out, OUT_MAX, "devices", NULL,
			 NULL));
	show("lchanctl devices", self->out);
	snprintf(prefix, sizeof(prefix), "%s: ", self->d.dev);
	ASSERT_EQ(0, line_with(self->out, prefix, line, sizeof(line)));
	EXPECT_TRUE(has_pair(line, "transport",
			     strcmp(self->d.kind, "siw") ? "RoCE" : "iWARP"))
		TH_LOG("%s", line);
	ASSERT_EQ(0, ctl(self->tool, json, OUT_MAX, "--json", "devices",
			 NULL));
	show("lchanctl --json devices", json);
	ASSERT_TRUE(json_is_array(json));
	ASSERT_EQ(0, json_find(json, "name", self->d.dev, &obj));
	ASSERT_EQ(0, json_get(obj, "channels", val, sizeof(val)));
	EXPECT_GE(atoi(val), 2);	/* at least our pair */
	ASSERT_EQ(0, json_get(obj, "ports", val, sizeof(val)));
	EXPECT_STREQ("1", val);
	free(json);
}

TEST_F(ctl, errors_exit_non_zero)
{
	EXPECT_EQ(1, ctl(self->tool, self->out, OUT_MAX, "show", "999999",
			 NULL));
	EXPECT_EQ(2, ctl(self->tool, self->out, OUT_MAX, "no-such-command",
			 NULL, NULL));
	EXPECT_EQ(2, ctl(self->tool, self->out, OUT_MAX, "show", "x", NULL));
	/* No sysfs tree there: what the tools say when lchan is not loaded. */
	EXPECT_EQ(3, ctl(self->tool, self->out, OUT_MAX, "-d", "/nonexistent",
			 NULL));
}

TEST_HARNESS_MAIN
