// SPDX-License-Identifier: GPL-2.0
/*
 * lchan against programs written for rdma_cm and verbs, not for lchan:
 * librdmacm's examples rdma_server and rdma_client (one 16-byte SEND each
 * way) and rping (rdmacm-utils), whose client advertises buffers that its
 * server RDMA READs and WRITEs.  lchan takes either role, on rxe and siw,
 * in each way of submitting: doorbell, a poller context, direct polling
 * (IB/RoCE only).
 *
 * lchan's end is the tool lchan_interop (tools/, lchan_interop(1)): it
 * plays the protocols, checks every byte the peer read, wrote or sent,
 * never asks for lchan's iWARP opening exchange, and bounds each of its
 * waits by the stall limit, printing its channel when one runs out.
 * `make check-2node` runs the same tool against the same programs between
 * two guests.  Each case here starts the program and the tool, and both
 * must exit 0 in bounded time; on failure both outputs are shown, and on
 * siw the TCP sockets.  One case has no tool: a stream channel's connect
 * (liblchan's own) must refuse rdma_server's accept.  SKIPs without the
 * device, the module, the program or the tool.
 */
#include <signal.h>

#include "kselftest_harness.h"
#include "lchan_test.h"

#define IC_RPING	"/usr/bin/rping"
#define IC_RDMA_SERVER	"/usr/bin/rdma_server"
#define IC_RDMA_CLIENT	"/usr/bin/rdma_client"

/*
 * The tool ends within one stall limit of its last progress; a whole run
 * takes seconds.  This many stall limits, and it is stuck.
 */
#define IC_RUN_STALLS	2

/*
 * rping's -S sizes: its smallest buffer's page, a page, and its largest
 * (rping refuses above RPING_BUFSIZE - 1 = 65535, so not 64 KiB).
 */
static const unsigned ic_sizes[] = { 64, 4096, 65535 };

enum ic_mode { IC_DOORBELL, IC_POLLER, IC_DIRECT };

static const char *const ic_mode_name[] = { "doorbell", "poller", "direct" };

/* A program the test runs, its output into a file. */
struct ic_proc {
	pid_t pid;		/* 0 once reaped */
	int status;		/* its exit status once reaped */
	const char *name;
	char cmd[384];		/* its command line, for messages */
	char log[128];		/* its stdout and stderr */
};

FIXTURE(interop) {
	struct lchan_t_dev d;
	char port[16];
	char tool[PATH_MAX];	/* lchan_interop */
	struct ic_proc peer;	/* the program lchan talks to */
	struct ic_proc lchan;	/* lchan_interop */
};

LCHAN_T_VARIANTS(interop);

/* LCHAN_TOOLS's lchan_interop (the guest's), else the one built beside. */
static int ic_find_tool(char *buf, size_t len)
{
	const char *dir = getenv("LCHAN_TOOLS");

	if (dir && *dir) {
		snprintf(buf, len, "%s/lchan_interop", dir);
		return 0;
	}
	lchan_t_beside_me(buf, len, "../tools/lchan_interop");
	return access(buf, X_OK) ? -ENOENT : 0;
}

FIXTURE_SETUP(interop)
{
	LCHAN_T_NEED_DEV(&self->d, variant->kind);
	if (!lchan_t_module_loaded())
		LCHAN_T_SETUP_SKIP("lchan is not loaded");
	if (ic_find_tool(self->tool, sizeof(self->tool)))
		LCHAN_T_SETUP_SKIP("lchan_interop is not built (%.200s): "
				   "make tools", self->tool);
	/* siw applies RLIMIT_MEMLOCK even to root; the tool inherits it. */
	lchan_t_raise_memlock();
}

/* End the program if it still runs (its whole process group). */
static void ic_kill(struct ic_proc *p)
{
	if (p->pid <= 0)
		return;
	kill(-p->pid, SIGKILL);
	kill(p->pid, SIGKILL);
	waitpid(p->pid, NULL, 0);
	p->pid = 0;
}

static void ic_drop(struct __test_metadata *_metadata, struct ic_proc *p)
{
	ic_kill(p);
	if (!p->log[0])
		return;
	if (LCHAN_T_FAILED(_metadata))
		lchan_t_dump_log(_metadata, p->name, p->log);
	unlink(p->log);
	p->log[0] = 0;
}

/*
 * Whatever a case left: on failure first siw's TCP sockets (a message
 * that never arrived is bytes queued on one), then the outputs of both
 * programs once they have ended (the tool's shows its channel when a
 * wait ran out).
 */
FIXTURE_TEARDOWN(interop)
{
	if (LCHAN_T_FAILED(_metadata) && !strcmp(variant->kind, "siw"))
		lchan_t_dump_tcp();
	ic_drop(_metadata, &self->lchan);
	ic_drop(_metadata, &self->peer);
}

#define IC_NEED(prog) do {						\
	if (access(prog, X_OK))						\
		SKIP(return, "no " prog " (rdmacm-utils)");		\
} while (0)

#define IC_NEED_MODE(kind, mode) do {					\
	if ((mode) == IC_DIRECT && !strcmp(kind, "siw"))		\
		SKIP(return, "iWARP has no direct polling "		\
		     "(LCHAN_DIRECT_POLL is EOPNOTSUPP there)");	\
} while (0)

/* Start @argv (NULL-terminated) as @p, its output into a fresh log. */
static void ic_spawn(struct __test_metadata *_metadata, struct ic_proc *p,
		     char *const argv[])
{
	static unsigned seq;
	size_t n = 0;
	unsigned i;

	p->name = strrchr(argv[0], '/') + 1;
	p->cmd[0] = 0;
	for (i = 0; argv[i] && n < sizeof(p->cmd); i++)
		n += snprintf(p->cmd + n, sizeof(p->cmd) - n, "%s%s",
			      i ? " " : "", i ? argv[i] : p->name);
	snprintf(p->log, sizeof(p->log), "/tmp/lchan_interop.%d.%u.log",
		 getpid(), seq++);
	p->status = -1;
	p->pid = lchan_t_spawn_logged(argv, p->log);
	ASSERT_LT(0, p->pid) TH_LOG("starting %s: %s", p->cmd,
				    strerror(-p->pid));
}

/* Whether the program still runs; once it has ended, reaped. */
static bool ic_running(struct ic_proc *p)
{
	int st;

	if (p->pid <= 0)
		return false;
	if (waitpid(p->pid, &st, WNOHANG) != p->pid)
		return true;
	p->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	p->pid = 0;
	return false;
}

static bool ic_log_has(const struct ic_proc *p, const char *what)
{
	char line[512];
	bool found = false;
	FILE *f = fopen(p->log, "r");

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		found = strstr(line, what);
	fclose(f);
	return found;
}

/*
 * The program must end, and with status 0, within @secs (after @since).
 * Its log goes once it has; on failure the teardown shows it.
 */
static void ic_expect_exit0(struct __test_metadata *_metadata,
			    struct ic_proc *p, double secs, const char *since)
{
	double end = lchan_t_now() + secs;

	while (ic_running(p) && lchan_t_now() < end)
		usleep(10000);
	ASSERT_FALSE(ic_running(p)) {
		TH_LOG("%s still runs %.0f s after %s", p->cmd, secs, since);
	}
	ASSERT_EQ(0, p->status) {
		TH_LOG("%s: exit status %d", p->cmd, p->status);
		/*
		 * rping before rdma-core 61 (commit f3ae6534a) may fail its
		 * last rdma_get_cm_event when main has already destroyed
		 * the event channel: exit(-1) after a good run.
		 */
		if (ic_log_has(p, "rdma_get_cm_event"))
			TH_LOG("rdma_get_cm_event failed: rping's exit race?");
	}
	unlink(p->log);
	p->log[0] = 0;
}

/*
 * lchan_interop PROTO as the server (@server) or the client of the
 * fixture's address and port, in @mode, every wait bounded by the stall
 * limit; rping's @count pings of @size bytes when @size is not 0.
 */
static void ic_start_lchan(struct __test_metadata *_metadata,
			   FIXTURE_DATA(interop) *self, char *proto,
			   bool server, enum ic_mode mode, unsigned size,
			   unsigned count)
{
	char secs[32], sz[16], cnt[16];
	char *argv[20];
	unsigned n = 0;

	snprintf(secs, sizeof(secs), "%g", lchan_t_stall_secs());
	snprintf(sz, sizeof(sz), "%u", size);
	snprintf(cnt, sizeof(cnt), "%u", count);
	argv[n++] = self->tool;
	argv[n++] = proto;
	argv[n++] = server ? "-s" : "-c";
	argv[n++] = "-a";
	argv[n++] = self->d.addr;
	argv[n++] = "-p";
	argv[n++] = self->port;
	argv[n++] = "-m";
	argv[n++] = (char *)ic_mode_name[mode];
	argv[n++] = "-t";
	argv[n++] = secs;
	if (size) {
		argv[n++] = "-S";
		argv[n++] = sz;
		argv[n++] = "-C";
		argv[n++] = cnt;
	}
	argv[n] = NULL;
	ic_spawn(_metadata, &self->lchan, argv);
}

/* A fresh port for the next pair of programs. */
static void ic_new_port(FIXTURE_DATA(interop) *self)
{
	snprintf(self->port, sizeof(self->port), "%u", lchan_t_port());
}

/*
 * lchan the client of a program that serves (@peer_argv): both started
 * at once (the tool tries a refused connect again until the program
 * listens), both must end well.
 */
static void ic_client_of(struct __test_metadata *_metadata,
			 FIXTURE_DATA(interop) *self, char *const peer_argv[],
			 char *proto, enum ic_mode mode, unsigned size,
			 unsigned count)
{
	double stall = lchan_t_stall_secs();

	ic_spawn(_metadata, &self->peer, peer_argv);
	ic_start_lchan(_metadata, self, proto, false, mode, size, count);
	ic_expect_exit0(_metadata, &self->lchan, IC_RUN_STALLS * stall,
			"it started");
	ic_expect_exit0(_metadata, &self->peer, stall, "lchan_interop ended");
}

/*
 * lchan the server of a program that connects (@peer_argv): the tool
 * first, the program once the tool says it listens; both must end well.
 */
static void ic_server_of(struct __test_metadata *_metadata,
			 FIXTURE_DATA(interop) *self, char *const peer_argv[],
			 char *proto, enum ic_mode mode, unsigned size,
			 unsigned count)
{
	double stall = lchan_t_stall_secs(), end = lchan_t_now() + stall;
	bool listening;

	ic_start_lchan(_metadata, self, proto, true, mode, size, count);
	while (!(listening = ic_log_has(&self->lchan, "listening on")) &&
	       ic_running(&self->lchan) && lchan_t_now() < end)
		usleep(20000);
	ASSERT_TRUE(listening) {
		TH_LOG("%s: %s", self->lchan.cmd,
		       ic_running(&self->lchan) ?
		       "does not say it listens" : "ended before it listened");
	}
	ic_spawn(_metadata, &self->peer, peer_argv);
	ic_expect_exit0(_metadata, &self->lchan, IC_RUN_STALLS * stall,
			"it listened");
	ic_expect_exit0(_metadata, &self->peer, stall, "lchan_interop ended");
}

/*
 * rdma_server: posts a 16-byte receive, accepts, waits for the client's
 * message, answers with 16 zeros and disconnects.  lchan connects, sends
 * first, checks the answer and sees it go.
 */
static void vs_rdma_server(struct __test_metadata *_metadata,
			   FIXTURE_DATA(interop) *self, const char *kind,
			   enum ic_mode mode)
{
	char *argv[] = { IC_RDMA_SERVER, "-s", self->d.addr, "-p", self->port,
			 NULL };

	IC_NEED(IC_RDMA_SERVER);
	IC_NEED_MODE(kind, mode);
	ic_new_port(self);
	ic_client_of(_metadata, self, argv, "rdma-cm", mode, 0, 0);
}

/*
 * rdma_client: connects, sends 16 zeros, waits for the answer and
 * disconnects.  lchan listens first, checks the 16 bytes and answers.
 */
static void vs_rdma_client(struct __test_metadata *_metadata,
			   FIXTURE_DATA(interop) *self, const char *kind,
			   enum ic_mode mode)
{
	char *argv[] = { IC_RDMA_CLIENT, "-s", self->d.addr, "-p", self->port,
			 NULL };

	IC_NEED(IC_RDMA_CLIENT);
	IC_NEED_MODE(kind, mode);
	ic_new_port(self);
	ic_server_of(_metadata, self, argv, "rdma-cm", mode, 0, 0);
}

/*
 * rping against lchan, per size, in either role.  lchan as the client of
 * `rping -s` (@lchan_serves false): per ping the server READs lchan's
 * start buffer and WRITEs it back into lchan's rdma buffer, which must
 * then hold the start buffer and nothing past it; the server (which
 * ignores -C and -V: it loops until the disconnect) exits 0 once lchan
 * has closed.  lchan as the server of `rping -c ... -V`: per ping lchan
 * READs the client's start buffer (rping's pattern for that ping,
 * checked, nothing past it), WRITEs it back to the client's rdma buffer,
 * and the client compares its buffers (-V); after -C pings it
 * disconnects and exits 0.
 */
static void vs_rping(struct __test_metadata *_metadata,
		     FIXTURE_DATA(interop) *self, const char *kind,
		     enum ic_mode mode, bool lchan_serves)
{
	unsigned i, count = lchan_t_count(10);
	char sz[16], cnt[16];
	char *argv[] = { IC_RPING, lchan_serves ? "-c" : "-s", "-a",
			 self->d.addr, "-p", self->port, "-C", cnt, "-S", sz,
			 "-V", "-d", NULL };
	double t0;

	IC_NEED(IC_RPING);
	IC_NEED_MODE(kind, mode);
	snprintf(cnt, sizeof(cnt), "%u", count);
	for (i = 0; i < ARRAY_SIZE(ic_sizes); i++) {
		snprintf(sz, sizeof(sz), "%u", ic_sizes[i]);
		ic_new_port(self);
		t0 = lchan_t_now();
		if (lchan_serves)
			ic_server_of(_metadata, self, argv, "rping", mode,
				     ic_sizes[i], count);
		else
			ic_client_of(_metadata, self, argv, "rping", mode,
				     ic_sizes[i], count);
		TH_LOG("%s: %u pings of %u bytes, %.2f s", ic_mode_name[mode],
		       count, ic_sizes[i], lchan_t_now() - t0);
	}
}

/* 1. lchan as the client of rdma_server. */
TEST_F_TIMEOUT(interop, client_to_rdma_server_doorbell, 120)
{
	vs_rdma_server(_metadata, self, variant->kind, IC_DOORBELL);
}

TEST_F_TIMEOUT(interop, client_to_rdma_server_poller, 120)
{
	vs_rdma_server(_metadata, self, variant->kind, IC_POLLER);
}

TEST_F_TIMEOUT(interop, client_to_rdma_server_direct, 120)
{
	vs_rdma_server(_metadata, self, variant->kind, IC_DIRECT);
}

/* 2. lchan as the server of rdma_client. */
TEST_F_TIMEOUT(interop, server_of_rdma_client_doorbell, 120)
{
	vs_rdma_client(_metadata, self, variant->kind, IC_DOORBELL);
}

TEST_F_TIMEOUT(interop, server_of_rdma_client_poller, 120)
{
	vs_rdma_client(_metadata, self, variant->kind, IC_POLLER);
}

TEST_F_TIMEOUT(interop, server_of_rdma_client_direct, 120)
{
	vs_rdma_client(_metadata, self, variant->kind, IC_DIRECT);
}

/*
 * 2b. A stream's connect to rdma_server, which accepts whatever comes:
 * its reply says nothing of a stream, so the connect fails rather than
 * hand the program a peer that would read the stream's messages as its
 * own protocol's.
 */
TEST_F_TIMEOUT(interop, stream_connect_to_rdma_server_refused, 120)
{
	char *argv[] = { IC_RDMA_SERVER, "-s", self->d.addr, "-p", self->port,
			 NULL };
	struct lchan_opts opts = { .timeout_ms = 5000 };
	struct lchan_ctx ctx;
	struct lchan_addr dst;
	double end;
	int fd;

	IC_NEED(IC_RDMA_SERVER);
	ic_new_port(self);
	ASSERT_EQ(0, lchan_addr_parse(self->d.addr, self->port, &dst));
	ASSERT_EQ(0, lchan_ctx_open(&ctx));
	ic_spawn(_metadata, &self->peer, argv);
	/* Refused until the program listens. */
	end = lchan_t_now() + lchan_t_stall_secs();
	do {
		fd = lchan_stream_connect(&ctx, &dst, &opts);
		if (fd != -ECONNREFUSED)
			break;
		usleep(50000);
	} while (ic_running(&self->peer) && lchan_t_now() < end);
	EXPECT_EQ(-EPROTONOSUPPORT, fd) TH_LOG("stream connect: %s",
					       fd < 0 ? strerror(-fd) :
					       "connected");
	if (fd >= 0)
		close(fd);
	lchan_ctx_close(&ctx);
}

/* 3. lchan as rping's client, against rping -s. */
TEST_F_TIMEOUT(interop, rping_client_to_rping_server_doorbell, 300)
{
	vs_rping(_metadata, self, variant->kind, IC_DOORBELL, false);
}

TEST_F_TIMEOUT(interop, rping_client_to_rping_server_poller, 300)
{
	vs_rping(_metadata, self, variant->kind, IC_POLLER, false);
}

TEST_F_TIMEOUT(interop, rping_client_to_rping_server_direct, 300)
{
	vs_rping(_metadata, self, variant->kind, IC_DIRECT, false);
}

/* 4. lchan as rping's server, against rping -c. */
TEST_F_TIMEOUT(interop, rping_server_of_rping_client_doorbell, 300)
{
	vs_rping(_metadata, self, variant->kind, IC_DOORBELL, true);
}

TEST_F_TIMEOUT(interop, rping_server_of_rping_client_poller, 300)
{
	vs_rping(_metadata, self, variant->kind, IC_POLLER, true);
}

TEST_F_TIMEOUT(interop, rping_server_of_rping_client_direct, 300)
{
	vs_rping(_metadata, self, variant->kind, IC_DIRECT, true);
}

TEST_HARNESS_MAIN
