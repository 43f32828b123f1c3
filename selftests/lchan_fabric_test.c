// SPDX-License-Identifier: GPL-2.0
/*
 * lchan as a libfabric provider (liblchan-fi.so, provider "lchan"), run by
 * libfabric's own programs: fi_info lists it with each device's attributes,
 * and fi_pingpong, as a server and a client process, passes over it on
 * FI_EP_MSG endpoints, every message size, with and without its data
 * check.  SKIPs without fi_info/fi_pingpong (libfabric-bin) or the
 * provider (LCHAN_FABRIC: the directory of liblchan-fi.so).
 */
#include "kselftest_harness.h"
#include "lchan_test.h"

#define FI_T_INFO	"/usr/bin/fi_info"
#define FI_T_PINGPONG	"/usr/bin/fi_pingpong"
/* Per fi_pingpong run (server and client together). */
#define FI_T_TIMEOUT_S	240

FIXTURE(fabric) {
	struct lchan_t_dev d;
	unsigned direct_seen;	/* most direct channels seen at once */
};

LCHAN_T_VARIANTS(fabric);

FIXTURE_SETUP(fabric)
{
	char why[320];

	LCHAN_T_NEED_DEV(&self->d, variant->kind);
	if (access(FI_T_INFO, X_OK) || access(FI_T_PINGPONG, X_OK))
		LCHAN_T_SETUP_SKIP("no fi_info/fi_pingpong (libfabric-bin)");
	if (lchan_t_fabric_provider(why, sizeof(why)))
		LCHAN_T_SETUP_SKIP("%s", why);
}

FIXTURE_TEARDOWN(fabric)
{
}

struct fi_t_proc {
	pid_t pid;
	char log[128];
};

/* Start argv with stdout and stderr to a fresh log file. */
static int fi_t_start(struct fi_t_proc *p, const char *tag, char *const argv[])
{
	static int seq;

	snprintf(p->log, sizeof(p->log), "/tmp/lchan_fabric.%d.%d.%s.log",
		 getpid(), seq++, tag);
	p->pid = lchan_t_spawn_logged(argv, p->log);
	return p->pid < 0 ? p->pid : 0;
}

/* Channels in sysfs whose mode is direct polling. */
static unsigned fi_t_direct_channels(void)
{
	const char *top = "/sys/kernel/lchan/channels";
	DIR *d = opendir(top);
	struct dirent *de;
	char path[300], mode[16];
	unsigned n = 0;

	if (!d)
		return 0;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s/mode", top, de->d_name);
		if (!lchan_t_read_sysfs(path, mode, sizeof(mode)) &&
		    !strncmp(mode, "direct", 6))
			n++;
	}
	closedir(d);
	return n;
}

/* Wait for @p's end; the most direct channels seen go to *@direct. */
static int fi_t_wait_watch(struct fi_t_proc *p, double deadline,
			   unsigned *direct)
{
	int st;

	for (;;) {
		pid_t r = waitpid(p->pid, &st, WNOHANG);

		if (direct) {
			unsigned n = fi_t_direct_channels();

			if (n > *direct)
				*direct = n;
		}
		if (r == p->pid)
			return WIFEXITED(st) ? WEXITSTATUS(st) :
			       128 + WTERMSIG(st);
		if (r < 0)
			return -errno;
		if (lchan_t_now() > deadline) {
			kill(-p->pid, SIGKILL);
			kill(p->pid, SIGKILL);
			waitpid(p->pid, &st, 0);
			return -ETIMEDOUT;
		}
		usleep(20000);
	}
}

/* Exit status of @p, or -ETIMEDOUT after killing it at @deadline. */
static int fi_t_wait(struct fi_t_proc *p, double deadline)
{
	return fi_t_wait_watch(p, deadline, NULL);
}

static int fi_t_slurp(const char *log, char *buf, size_t len)
{
	FILE *f = fopen(log, "r");
	size_t n;

	if (!f)
		return -errno;
	n = fread(buf, 1, len - 1, f);
	buf[n] = 0;
	fclose(f);
	return 0;
}

/* Is TCP @port in LISTEN state (/proc/net/tcp and tcp6)? */
static bool fi_t_tcp_listening(unsigned port)
{
	static const char *const files[] = { "/proc/net/tcp", "/proc/net/tcp6" };
	char line[512], want[16];
	unsigned i;

	snprintf(want, sizeof(want), ":%04X ", port);
	for (i = 0; i < 2; i++) {
		FILE *f = fopen(files[i], "r");

		if (!f)
			continue;
		while (fgets(line, sizeof(line), f)) {
			char *local = strchr(line, ':');

			/* sl: local_address rem_address st */
			if (local && (local = strchr(local + 1, ':')) &&
			    !strncmp(local, want, strlen(want)) &&
			    strstr(local + strlen(want), " 0A ")) {
				fclose(f);
				return true;
			}
		}
		fclose(f);
	}
	return false;
}

/* fi_info's output for @args (NULL-terminated), exit status returned. */
static int fi_t_info(char *out, size_t len, const char *a1, const char *a2,
		     const char *a3, const char *a4)
{
	char *argv[] = { FI_T_INFO, "-p", "lchan", (char *)a1, (char *)a2,
			 (char *)a3, (char *)a4, NULL };
	struct fi_t_proc p;
	int st;

	if (fi_t_start(&p, "fi_info", argv))
		return -1;
	st = fi_t_wait(&p, lchan_t_now() + 30);
	fi_t_slurp(p.log, out, len);
	unlink(p.log);
	return st;
}

/*
 * One fi_pingpong server and client on the variant's device: the control
 * connection (TCP) on @port, provider @prov, endpoint type @ep_type.  @extra is
 * one more option for both ("-c" checks the data) or NULL; @sizes and
 * @iters are fi_pingpong's -S and -I (NULL: its defaults).  @last is the row the client
 * must print last but one (the largest size).
 */
static void fi_t_pingpong(struct __test_metadata *_metadata,
			  FIXTURE_DATA(fabric) *self, unsigned port,
			  const char *prov, const char *ep_type,
			  const char *extra, const char *sizes,
			  const char *iters, const char *last)
{
	char portstr[8], out[16384], row[32];
	char *srv[16], *cli[16];
	struct fi_t_proc s, c;
	int n = 0, m = 0, ss, cs;
	double t0 = lchan_t_now();

	snprintf(portstr, sizeof(portstr), "%u", port);
	srv[n++] = FI_T_PINGPONG;
	srv[n++] = "-p";
	srv[n++] = (char *)prov;
	srv[n++] = "-e";
	srv[n++] = (char *)ep_type;
	srv[n++] = "-d";
	srv[n++] = self->d.dev;
	if (extra)
		srv[n++] = (char *)extra;
	if (sizes) {
		srv[n++] = "-S";
		srv[n++] = (char *)sizes;
	}
	if (iters) {
		srv[n++] = "-I";
		srv[n++] = (char *)iters;
	}
	memcpy(cli, srv, n * sizeof(*srv));
	m = n;
	srv[n++] = "-B";
	srv[n++] = portstr;
	srv[n] = NULL;
	cli[m++] = "-P";
	cli[m++] = portstr;
	cli[m++] = self->d.addr;
	cli[m] = NULL;

	ASSERT_EQ(0, fi_t_start(&s, "server", srv));
	while (!fi_t_tcp_listening(port) && lchan_t_now() < t0 + 10 &&
	       waitpid(s.pid, NULL, WNOHANG) == 0)
		usleep(20000);
	ASSERT_EQ(0, fi_t_start(&c, "client", cli));
	cs = fi_t_wait_watch(&c, t0 + FI_T_TIMEOUT_S, &self->direct_seen);
	/* A server whose client is gone waits for ever: 30 s at most. */
	ss = fi_t_wait(&s, lchan_t_now() + 30);
	fi_t_slurp(c.log, out, sizeof(out));
	if (cs || ss) {
		lchan_t_dump_log(_metadata, s.log, s.log);
		lchan_t_dump_log(_metadata, c.log, c.log);
	}
	EXPECT_EQ(0, ss);
	EXPECT_EQ(0, cs);
	snprintf(row, sizeof(row), "\n%-8s", last);
	EXPECT_NE(NULL, strstr(out, row)) {
		TH_LOG("client output lacks the %s row:\n%s", last, out);
	}
	TH_LOG("fi_pingpong -p '%s' -e %s %s %s on %s: %.1f s", prov, ep_type,
	       extra ? extra : "", sizes ? sizes : "(default sizes)",
	       self->d.dev, lchan_t_now() - t0);
	unlink(s.log);
	unlink(c.log);
}

static unsigned fi_t_port(const char *kind, unsigned n)
{
	return 47600 + (strcmp(kind, "rxe") ? 50 : 0) + n;
}

/*
 * The fi_info -v block of the provider "lchan" itself (fi_info also lists
 * utility providers layered over it, "lchan;ofi_rxm"), or NULL.
 */
static char *fi_t_core_block(char *out)
{
	char *b = out, *next;

	while ((b = strstr(b, "fi_info:"))) {
		next = strstr(b + 1, "fi_info:");
		if (next)
			next[-1] = 0;
		if (strstr(b, "prov_name: lchan\n"))
			return b;
		if (!next)
			return NULL;
		b = next;
	}
	return NULL;
}

/* fi_info -p lchan lists the device with what it can do. */
TEST_F(fabric, info_lists_device)
{
	char out[65536], want[128], *b;

	ASSERT_EQ(0, fi_t_info(out, sizeof(out), "-d", self->d.dev, "-v", NULL)) {
		TH_LOG("%s", out);
	}
	b = fi_t_core_block(out);
	ASSERT_NE(NULL, b) TH_LOG("no lchan entry:\n%s", out);
	snprintf(want, sizeof(want), "name: %s\n", self->d.dev);
	EXPECT_NE(NULL, strstr(b, want)) TH_LOG("%s", b);
	EXPECT_NE(NULL, strstr(b, "type: FI_EP_MSG"));
	EXPECT_NE(NULL, strstr(b, "FI_MR_LOCAL"));
	EXPECT_NE(NULL, strstr(b, "FI_RMA"));
	if (!strcmp(variant->kind, "siw")) {
		/* iWARP: no immediate data, so no remote CQ data. */
		EXPECT_NE(NULL, strstr(b, "protocol: FI_PROTO_IWARP"));
		EXPECT_NE(NULL, strstr(b, "cq_data_size: 0\n")) TH_LOG("%s", b);
		EXPECT_EQ(NULL, strstr(b, "FI_RX_CQ_DATA")) TH_LOG("%s", b);
	} else {
		EXPECT_NE(NULL, strstr(b, "protocol: FI_PROTO_RDMA_CM_IB_RC"));
		EXPECT_NE(NULL, strstr(b, "cq_data_size: 4\n")) TH_LOG("%s", b);
		/* fi_info supports every mode: the data consumes a receive. */
		EXPECT_NE(NULL, strstr(b, "FI_RX_CQ_DATA")) TH_LOG("%s", b);
	}
	/* Neither device gets atomics or tags from lchan itself. */
	EXPECT_EQ(NULL, strstr(b, "FI_ATOMIC"));
	EXPECT_EQ(NULL, strstr(b, "FI_TAGGED"));
}

/* What lchan does not offer is not listed for the provider itself. */
TEST_F(fabric, info_rejects)
{
	static const char *const asks[][2] = {
		{ "-t", "FI_EP_RDM" },
		{ "-t", "FI_EP_DGRAM" },
		{ "-c", "FI_ATOMIC" },
		{ "-c", "FI_TAGGED" },
	};
	char out[65536];
	unsigned i;

	for (i = 0; i < sizeof(asks) / sizeof(asks[0]); i++) {
		fi_t_info(out, sizeof(out), "-d", self->d.dev, asks[i][0],
			  asks[i][1]);
		EXPECT_EQ(NULL, strstr(out, "provider: lchan\n")) {
			TH_LOG("%s %s listed lchan:\n%s", asks[i][0],
			       asks[i][1], out);
		}
	}
	EXPECT_NE(0, fi_t_info(out, sizeof(out), "-d", "nosuchdev0", NULL,
			       NULL)) TH_LOG("%s", out);
}

/* fi_pingpong's default sizes (64 B to 1 MiB, ten round trips each). */
TEST_F_TIMEOUT(fabric, pingpong_msg, FI_T_TIMEOUT_S + 60)
{
	fi_t_pingpong(_metadata, self, fi_t_port(variant->kind, 0), "lchan",
		      "msg", NULL, NULL, NULL, "1m");
}

/*
 * Every size fi_pingpong knows (0 B to 6 MiB, the halves between powers
 * of two too), its data check on, two round trips each.
 */
TEST_F_TIMEOUT(fabric, pingpong_msg_all_sizes_checked, FI_T_TIMEOUT_S + 60)
{
	fi_t_pingpong(_metadata, self, fi_t_port(variant->kind, 1), "lchan",
		      "msg", "-c", "all", "2", "6m");
}

/*
 * The same in poller mode: fi_pingpong's peers agree over their socket
 * and send at once, so each receive the provider re-posts must be at the
 * queue pair when its submit returns (on iWARP a SEND that finds none
 * ends the connection).
 */
TEST_F_TIMEOUT(fabric, pingpong_msg_poller_all_sizes_checked,
	       FI_T_TIMEOUT_S + 60)
{
	setenv("FI_LCHAN_POLLER", "1", 1);
	fi_t_pingpong(_metadata, self, fi_t_port(variant->kind, 3), "lchan",
		      "msg", "-c", "all", "2", "6m");
}

/*
 * FI_LCHAN_DIRECT: on InfiniBand and RoCE both ends' channels are direct
 * (the provider's CQ reads poll the device), every size checked; iWARP
 * has no direct polling and keeps its channels as they were.
 */
TEST_F_TIMEOUT(fabric, pingpong_msg_direct_all_sizes_checked,
	       FI_T_TIMEOUT_S + 60)
{
	bool iwarp = !strcmp(variant->kind, "siw");

	setenv("FI_LCHAN_DIRECT", "1", 1);
	self->direct_seen = 0;
	fi_t_pingpong(_metadata, self, fi_t_port(variant->kind, 4), "lchan",
		      "msg", "-c", "all", "2", "6m");
	/* Both ends' channels, at once, while the client ran. */
	EXPECT_EQ(iwarp ? 0u : 2u, self->direct_seen);
}

/*
 * libfabric's ofi_rxm over lchan: reliable datagram endpoints made of
 * lchan connections (their connection data goes in the channels' first
 * messages), fi_pingpong's default sizes, data checked.  Sizes above
 * rxm's eager limit move by RDMA READ of the sender's registered buffer.
 */
TEST_F_TIMEOUT(fabric, pingpong_rdm_rxm, FI_T_TIMEOUT_S + 60)
{
	/* ofi_rxm's warnings go to the logs printed on failure. */
	setenv("FI_LOG_LEVEL", "warn", 1);
	fi_t_pingpong(_metadata, self, fi_t_port(variant->kind, 2),
		      "lchan;ofi_rxm", "rdm", "-c", NULL, NULL, "1m");
}

TEST_HARNESS_MAIN
