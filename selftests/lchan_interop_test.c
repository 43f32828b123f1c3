// SPDX-License-Identifier: GPL-2.0
/*
 * lchan against programs written for rdma_cm and verbs, not for lchan:
 * librdmacm's examples rdma_server and rdma_client (one 16-byte SEND each
 * way) and rping (rdmacm-utils), whose client advertises buffers that its
 * server RDMA READs and WRITEs.  lchan takes either role, on rxe and siw,
 * in each way of submitting: doorbell, a poller context, direct polling
 * (IB/RoCE only).  The protocols are those of rdma-core's
 * librdmacm/examples/{rdma_server,rdma_client,rping}.c (v44.0, Debian 12).
 *
 * The peers are plain rdma_cm programs: lchan's own iWARP opening exchange
 * (LCHAN_OPEN_EXCHANGE) is never asked for, and every protocol here lets
 * the connecting side send first, as MPA wants.  Receives are posted
 * before the establish (LCHAN_DEFER_ESTABLISH): iWARP has no
 * receiver-not-ready retry.  SKIPs without the device, the module or the
 * program.
 */
#include <endian.h>
#include <signal.h>

#include "kselftest_harness.h"
#include "lchan_test.h"

#define IC_RPING	"/usr/bin/rping"
#define IC_RDMA_SERVER	"/usr/bin/rdma_server"
#define IC_RDMA_CLIENT	"/usr/bin/rdma_client"

/* rdma_server's and rdma_client's messages; rping's rping_rdma_info too. */
#define IC_MSG		16
/* Receives lchan keeps posted: each peer has one message in flight. */
#define IC_NRECV	2
/* Fills lchan's buffers: a check of the peer's bytes never sees stale ones. */
#define IC_POISON	0xa5

/*
 * rping's -S sizes: its smallest buffer's page, a page, and its largest
 * (rping refuses above RPING_BUFSIZE - 1 = 65535, so not 64 KiB).
 */
static const unsigned ic_sizes[] = { 64, 4096, 65535 };

/* rping's struct rping_rdma_info as it goes on the wire: big-endian. */
struct ic_rping_info {
	uint64_t buf;
	uint32_t rkey;
	uint32_t size;
};

_Static_assert(sizeof(struct ic_rping_info) == IC_MSG, "rping_rdma_info");

enum ic_mode { IC_DOORBELL, IC_POLLER, IC_DIRECT };

static const char *const ic_mode_name[] = { "doorbell", "poller", "direct" };

FIXTURE(interop) {
	struct lchan_t_dev d;
	struct lchan_t_ep ep;		/* lchan's end */
	struct lchan_listener lst;	/* lchan as the server */
	char port[16];
	unsigned posted, done;		/* lchan's SQEs, and their completions */
	uint8_t want;			/* LCHAN_CQE_* of the SQE in flight */
	bool have_recv;			/* a RECV reaped, not yet taken */
	struct lchan_cqe recv;
	pid_t pid;			/* the program, 0 once reaped */
	int status;			/* its exit status once reaped */
	const char *prog;		/* its name */
	char cmd[256];			/* its command line, for messages */
	char log[128];			/* its stdout and stderr */
};

LCHAN_T_VARIANTS(interop);

FIXTURE_SETUP(interop)
{
	LCHAN_T_NEED_DEV(&self->d, variant->kind);
	if (!lchan_t_module_loaded())
		LCHAN_T_SETUP_SKIP("lchan is not loaded");
	lchan_t_raise_memlock();
	self->lst.fd = -1;
}

/* End the program if it still runs (its whole process group). */
static void ic_kill(FIXTURE_DATA(interop) *self)
{
	if (self->pid <= 0)
		return;
	kill(-self->pid, SIGKILL);
	kill(self->pid, SIGKILL);
	waitpid(self->pid, NULL, 0);
	self->pid = 0;
}

/*
 * Whatever a case left: on failure first what lchan's channel and siw's
 * TCP sockets show (a message that never arrived is bytes queued on one),
 * then the program's output once it has ended.
 */
FIXTURE_TEARDOWN(interop)
{
	if (!_metadata->passed) {
		if (self->ep.chan.map)
			lchan_t_dump_chan("lchan", &self->ep.chan);
		if (!strcmp(variant->kind, "siw"))
			lchan_t_dump_tcp();
	}
	ic_kill(self);
	if (self->log[0]) {
		if (!_metadata->passed)
			lchan_t_dump_log(_metadata, self->prog, self->log);
		unlink(self->log);
		self->log[0] = 0;
	}
	if (self->lst.fd > 0)
		lchan_listener_close(&self->lst);
	lchan_t_ep_close(&self->ep);
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

static int ic_wait_ms(void)
{
	return (int)(lchan_t_stall_secs() * 1000);
}

/*
 * lchan's end for one connection: a context (a poller one in IC_POLLER)
 * and a poisoned buffer of IC_NRECV receive slots and @nsend send slots
 * of @slot bytes, registered with @access at the first prepare.  The
 * port for the program comes with it.
 */
static int ic_open(FIXTURE_DATA(interop) *self, enum ic_mode mode,
		   size_t slot, unsigned nsend, unsigned access)
{
	struct lchan_t_ep *ep = &self->ep;
	size_t len = slot * (IC_NRECV + nsend);
	int ret;

	*ep = (struct lchan_t_ep){ .slot = slot, .nrecv = IC_NRECV,
				   .nsend = nsend, .access = access };
	self->posted = self->done = 0;
	self->have_recv = false;
	snprintf(self->port, sizeof(self->port), "%u", lchan_t_port());
	ep->buf = aligned_alloc(4096, (len + 4095) & ~(size_t)4095);
	if (!ep->buf)
		return -ENOMEM;
	memset(ep->buf, IC_POISON, len);
	ret = lchan_ctx_open(&ep->ctx);
	/* 10 ms idle: the pool's thread also sleeps and is woken mid-run. */
	if (!ret && mode == IC_POLLER)
		ret = lchan_ctx_setup_poller(&ep->ctx, 10, -1, NULL);
	return ret;
}

/* Connect and accept options; never LCHAN_OPEN_EXCHANGE (plain peers). */
static struct lchan_opts ic_opts(enum ic_mode mode)
{
	return (struct lchan_opts){
		.timeout_ms = 10000,
		.flags = LCHAN_DEFER_ESTABLISH |
			 (mode == IC_DIRECT ? LCHAN_DIRECT_POLL : 0),
	};
}

/* Start @argv (NULL-terminated) with its output into a fresh log. */
static void ic_spawn(struct __test_metadata *_metadata,
		     FIXTURE_DATA(interop) *self, char *const argv[])
{
	static unsigned seq;
	size_t n = 0;
	unsigned i;

	self->prog = strrchr(argv[0], '/') + 1;
	self->cmd[0] = 0;
	for (i = 0; argv[i] && n < sizeof(self->cmd); i++)
		n += snprintf(self->cmd + n, sizeof(self->cmd) - n, "%s%s",
			      i ? " " : "", i ? argv[i] : self->prog);
	snprintf(self->log, sizeof(self->log), "/tmp/lchan_interop.%d.%u.log",
		 getpid(), seq++);
	self->status = -1;
	self->pid = lchan_t_spawn_logged(argv, self->log);
	ASSERT_LT(0, self->pid) TH_LOG("starting %s: %s", self->cmd,
				       strerror(-self->pid));
}

/* Whether the program still runs; once it has ended, reaped. */
static bool ic_running(FIXTURE_DATA(interop) *self)
{
	int st;

	if (self->pid <= 0)
		return false;
	if (waitpid(self->pid, &st, WNOHANG) != self->pid)
		return true;
	self->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	self->pid = 0;
	return false;
}

static bool ic_log_has(FIXTURE_DATA(interop) *self, const char *what)
{
	char line[512];
	bool found = false;
	FILE *f = fopen(self->log, "r");

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		found = strstr(line, what);
	fclose(f);
	return found;
}

/*
 * The program must end, and with status 0, within the stall limit.  Its
 * log is shown at once when not (a case may go on to start another).
 */
static void ic_expect_exit0(struct __test_metadata *_metadata,
			    FIXTURE_DATA(interop) *self)
{
	double end = lchan_t_now() + lchan_t_stall_secs();

	while (ic_running(self) && lchan_t_now() < end)
		usleep(10000);
	ASSERT_FALSE(ic_running(self)) {
		TH_LOG("%s still runs %.0f s after its peer was done",
		       self->cmd, lchan_t_stall_secs());
	}
	EXPECT_EQ(0, self->status) {
		TH_LOG("%s: exit status %d", self->cmd, self->status);
		/*
		 * rping before rdma-core 61 (commit f3ae6534a) may fail its
		 * last rdma_get_cm_event when main has already destroyed
		 * the event channel: exit(-1) after a good run.
		 */
		if (ic_log_has(self, "rdma_get_cm_event"))
			TH_LOG("rdma_get_cm_event failed: rping's exit race?");
		lchan_t_dump_log(_metadata, self->prog, self->log);
	}
	unlink(self->log);
	self->log[0] = 0;
}

/*
 * The next CQE: a RECV is kept for ic_recv(), anything else must be the
 * completion of the one SQE in flight.  Every one must have succeeded.
 */
static void ic_reap(struct __test_metadata *_metadata,
		    FIXTURE_DATA(interop) *self, const char *what)
{
	struct lchan_cqe cqe;
	int ret;

	ret = lchan_t_reap(&self->ep, &cqe, ic_wait_ms());
	ASSERT_EQ(0, ret) TH_LOG("%s: no completion in %.0f s: %s", what,
				 lchan_t_stall_secs(), strerror(-ret));
	ASSERT_EQ(LCHAN_CQE_OK, cqe.status) {
		TH_LOG("%s: CQE opcode %u user_data %llu: %s", what,
		       cqe.opcode, (unsigned long long)cqe.user_data,
		       lchan_cqe_status_str(cqe.status));
	}
	if (cqe.opcode == LCHAN_CQE_RECV) {
		ASSERT_FALSE(self->have_recv)
			TH_LOG("%s: a second message before the first was taken",
			       what);
		self->recv = cqe;
		self->have_recv = true;
		return;
	}
	ASSERT_LT(self->done, self->posted)
		TH_LOG("%s: completion opcode %u of nothing posted", what,
		       cqe.opcode);
	ASSERT_EQ(self->want, cqe.opcode) TH_LOG("%s", what);
	self->done++;
}

/*
 * Submit the SQE just filled and wait for its completion (@want).  One at
 * a time, as rping waits for each of its READs and WRITEs: a buffer is
 * never reused while the device may still read it.
 */
static void ic_run(struct __test_metadata *_metadata,
		   FIXTURE_DATA(interop) *self, uint8_t want, const char *what)
{
	int ret;

	self->want = want;
	self->posted++;
	ret = lchan_submit(&self->ep.chan);
	ASSERT_LE(0, ret) TH_LOG("%s: submit: %s", what, strerror(-ret));
	while (self->done < self->posted)
		ic_reap(_metadata, self, what);
}

static struct lchan_sqe *ic_sqe(struct __test_metadata *_metadata,
				FIXTURE_DATA(interop) *self)
{
	struct lchan_sqe *sqe = lchan_get_sqe(&self->ep.chan);

	ASSERT_NE(NULL, sqe);
	return sqe;
}

/* SEND @len bytes of @msg from send slot 0; wait for its completion. */
static void ic_send(struct __test_metadata *_metadata,
		    FIXTURE_DATA(interop) *self, const void *msg, uint32_t len,
		    const char *what)
{
	uint8_t *p = lchan_t_send_slot(&self->ep, 0);
	struct lchan_sqe *sqe = ic_sqe(_metadata, self);

	memcpy(p, msg, len);
	lchan_prep_send(sqe, &self->ep.mr, p, len, self->posted + 1);
	ic_run(_metadata, self, LCHAN_CQE_SEND, what);
}

/*
 * The peer's next message: its first @len bytes into @msg, its length
 * returned.  The slot is poisoned and posted again at once (the peer
 * sends its next only after lchan's answer).
 */
static uint32_t ic_recv(struct __test_metadata *_metadata,
			FIXTURE_DATA(interop) *self, void *msg, size_t len,
			const char *what)
{
	unsigned i;
	uint8_t *p;
	uint32_t n;
	int ret;

	while (!self->have_recv)
		ic_reap(_metadata, self, what);
	self->have_recv = false;
	i = (unsigned)self->recv.user_data;
	n = self->recv.byte_len;
	p = lchan_t_recv_slot(&self->ep, i);
	memcpy(msg, p, n < len ? n : len);
	memset(p, IC_POISON, n < self->ep.slot ? n : self->ep.slot);
	ret = lchan_t_post_recv(&self->ep, i);
	ASSERT_EQ(0, ret) TH_LOG("%s: receive again: %s", what, strerror(-ret));
	ret = lchan_submit(&self->ep.chan);
	ASSERT_LE(0, ret) TH_LOG("%s: submit: %s", what, strerror(-ret));
	return n;
}

/*
 * The program ends the connection as its protocol's last step: lchan's
 * receives still posted are flushed, no message comes, and the channel
 * settles (-ENOTCONN once the ring is empty).
 */
static void ic_wait_peer_close(struct __test_metadata *_metadata,
			       FIXTURE_DATA(interop) *self)
{
	double end = lchan_t_now() + lchan_t_stall_secs();
	struct lchan_cqe cqe;
	int ret;

	ASSERT_FALSE(self->have_recv);
	for (;;) {
		int left = (int)((end - lchan_t_now()) * 1000);

		ret = lchan_t_reap(&self->ep, &cqe, left > 0 ? left : 0);
		if (ret == -ENOTCONN)
			return;
		ASSERT_EQ(0, ret) TH_LOG("waiting for %s to disconnect: %s",
					 self->cmd, strerror(-ret));
		ASSERT_EQ(LCHAN_CQE_WR_FLUSH_ERR, cqe.status) {
			TH_LOG("after the last message: CQE opcode %u byte_len %u: %s",
			       cqe.opcode, cqe.byte_len,
			       lchan_cqe_status_str(cqe.status));
		}
	}
}

/* Undo a connect attempt that failed, for the next one. */
static void ic_drop_chan(struct lchan_t_ep *ep)
{
	lchan_chan_close(&ep->chan);
	if (ep->mr.handle)
		lchan_mr_dereg(&ep->ctx, &ep->mr);
	ep->recv_posted = 0;
}

/*
 * lchan as the client: connect, post the receives, establish.  The
 * program may not listen yet: a refused attempt is retried until it does
 * (or ends, or the stall limit passes).
 */
static int ic_connect(FIXTURE_DATA(interop) *self, enum ic_mode mode)
{
	struct lchan_opts opts = ic_opts(mode);
	double end = lchan_t_now() + lchan_t_stall_secs();
	struct lchan_t_ep *ep = &self->ep;
	int ret;

	for (;;) {
		ret = lchan_connect(&ep->ctx, self->d.addr, self->port, &opts,
				    &ep->chan);
		if (!ret) {
			ret = lchan_t_ep_prepare(&ep->ctx, &ep->chan, ep);
			if (!ret)
				ret = lchan_establish(&ep->chan, opts.timeout_ms);
			if (!ret)
				return 0;
			ic_drop_chan(ep);
		}
		if (ret != -ECONNREFUSED || !ic_running(self) ||
		    lchan_t_now() > end)
			return ret;
		usleep(50000);
	}
}

/* lchan as the server: listen on the fixture's port, before the program. */
static void ic_listen(struct __test_metadata *_metadata,
		      FIXTURE_DATA(interop) *self)
{
	int ret = lchan_listen(&self->ep.ctx, self->d.addr, self->port, 1,
			       LCHAN_FD_NONBLOCK, &self->lst);

	ASSERT_EQ(0, ret) TH_LOG("listen on %s:%s: %s", self->d.addr,
				 self->port, strerror(-ret));
}

/*
 * Take the program's connection (it connects once started), post the
 * receives, establish; the listener has done its work then.  -ECHILD when
 * the program ended before.
 */
static int ic_accept(FIXTURE_DATA(interop) *self, enum ic_mode mode)
{
	struct pollfd pfd = { .fd = self->lst.fd, .events = POLLIN };
	struct lchan_opts opts = ic_opts(mode);
	double end = lchan_t_now() + lchan_t_stall_secs();
	struct lchan_t_ep *ep = &self->ep;
	int ret;

	do {
		if (!ic_running(self))
			return -ECHILD;
		ret = poll(&pfd, 1, 100) < 0 ? -errno : 0;
		if (!ret)
			ret = lchan_accept(&self->lst, &opts, &ep->chan);
	} while ((ret == -EAGAIN || ret == -EINTR) && lchan_t_now() < end);
	if (ret == -EAGAIN)
		return -ETIMEDOUT;
	if (!ret)
		ret = lchan_t_ep_prepare(&ep->ctx, &ep->chan, ep);
	if (!ret)
		ret = lchan_establish(&ep->chan, opts.timeout_ms);
	if (!ret)
		lchan_listener_close(&self->lst);
	return ret;
}

static const uint8_t ic_zeros[IC_MSG];

/*
 * rdma_server: posts a 16-byte receive, accepts, waits for the client's
 * message, answers with its send_msg (16 bytes it never writes: zeros,
 * sent inline) and, once that SEND completed, disconnects.  lchan
 * connects, sends 16 bytes first, checks the answer and sees it go.
 */
static void vs_rdma_server(struct __test_metadata *_metadata,
			   FIXTURE_DATA(interop) *self, const char *kind,
			   enum ic_mode mode)
{
	char *argv[] = { IC_RDMA_SERVER, "-s", self->d.addr, "-p", self->port,
			 NULL };
	uint8_t msg[IC_MSG], got[IC_MSG];
	uint32_t n;
	int ret;

	IC_NEED(IC_RDMA_SERVER);
	IC_NEED_MODE(kind, mode);
	ret = ic_open(self, mode, 4096, 1, LCHAN_ACCESS_LOCAL_WRITE);
	ASSERT_EQ(0, ret) TH_LOG("%s", strerror(-ret));
	ic_spawn(_metadata, self, argv);
	ret = ic_connect(self, mode);
	ASSERT_EQ(0, ret) TH_LOG("connect to %s: %s", self->cmd, strerror(-ret));

	lchan_t_fill(msg, 1, sizeof(msg));
	ic_send(_metadata, self, msg, sizeof(msg), "lchan's message");
	n = ic_recv(_metadata, self, got, sizeof(got), "rdma_server's answer");
	ASSERT_EQ(IC_MSG, n);
	EXPECT_EQ(0, memcmp(got, ic_zeros, IC_MSG));
	ic_wait_peer_close(_metadata, self);
	lchan_chan_close(&self->ep.chan);
	ic_expect_exit0(_metadata, self);
}

/*
 * rdma_client: posts a 16-byte receive, connects, sends its send_msg
 * (zeros, inline), waits for that SEND's and then the answer's completion
 * and disconnects.  lchan listens first, takes the 16 bytes and answers.
 */
static void vs_rdma_client(struct __test_metadata *_metadata,
			   FIXTURE_DATA(interop) *self, const char *kind,
			   enum ic_mode mode)
{
	char *argv[] = { IC_RDMA_CLIENT, "-s", self->d.addr, "-p", self->port,
			 NULL };
	uint8_t msg[IC_MSG], got[IC_MSG];
	uint32_t n;
	int ret;

	IC_NEED(IC_RDMA_CLIENT);
	IC_NEED_MODE(kind, mode);
	ret = ic_open(self, mode, 4096, 1, LCHAN_ACCESS_LOCAL_WRITE);
	ASSERT_EQ(0, ret) TH_LOG("%s", strerror(-ret));
	ic_listen(_metadata, self);
	ic_spawn(_metadata, self, argv);
	ret = ic_accept(self, mode);
	ASSERT_EQ(0, ret) TH_LOG("accept from %s: %s", self->cmd,
				 ret == -ECHILD ? "it ended first" :
				 strerror(-ret));

	n = ic_recv(_metadata, self, got, sizeof(got), "rdma_client's message");
	ASSERT_EQ(IC_MSG, n);
	EXPECT_EQ(0, memcmp(got, ic_zeros, IC_MSG));
	lchan_t_fill(msg, 2, sizeof(msg));
	ic_send(_metadata, self, msg, sizeof(msg), "lchan's answer");
	ic_wait_peer_close(_metadata, self);
	lchan_chan_close(&self->ep.chan);
	ic_expect_exit0(_metadata, self);
}

/*
 * What rping's client (rping_test_client) puts in its start buffer for
 * ping @ping: "rdma-ping-<ping>: ", then the letters 'A' to 'z' (65 to
 * 122) round and round, from 'A' + ping % 58, and a NUL as the last byte.
 * The server writes back strlen() + 1 bytes of what it read: all @size.
 */
static void ic_rping_fill(uint8_t *buf, unsigned size, unsigned ping)
{
	unsigned char c = 65 + ping % 58;
	unsigned i;
	int cc;

	cc = snprintf((char *)buf, size, "rdma-ping-%u: ", ping);
	for (i = cc; i < size; i++) {
		buf[i] = c;
		if (++c > 122)
			c = 65;
	}
	buf[size - 1] = 0;
}

/* Offset of the first byte of [@from, @to) that is not poison, or -1. */
static long ic_unpoisoned(const uint8_t *p, size_t from, size_t to)
{
	size_t i;

	for (i = from; i < to; i++)
		if (p[i] != IC_POISON)
			return (long)i;
	return -1;
}

static long ic_first_diff(const uint8_t *a, const uint8_t *b, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (a[i] != b[i])
			return (long)i;
	return -1;
}

static struct ic_rping_info ic_rping_info(const void *buf, uint32_t rkey,
					  uint32_t size)
{
	return (struct ic_rping_info){
		.buf = htobe64((uint64_t)(uintptr_t)buf),
		.rkey = htobe32(rkey),
		.size = htobe32(size),
	};
}

/*
 * One rping client run played by lchan against `rping -s`: per ping, as
 * rping_test_client does,
 *   SEND  start buffer's info (buf, rkey, size)  -> server READs it
 *   RECV  go-ahead (16 bytes)
 *   SEND  rdma buffer's info                      -> server WRITEs it
 *   RECV  go-ahead
 *   the rdma buffer must now hold the start buffer (rping -V's memcmp).
 * Then lchan disconnects, on which the server (which ignores -C and -V:
 * it loops until the disconnect) exits 0.
 */
static void rping_as_client(struct __test_metadata *_metadata,
			    FIXTURE_DATA(interop) *self, enum ic_mode mode,
			    unsigned size, unsigned count)
{
	char sz[16], cnt[16];
	char *argv[] = { IC_RPING, "-s", "-a", self->d.addr, "-p", self->port,
			 "-C", cnt, "-S", sz, "-V", "-d", NULL };
	size_t slot = (size + 4095) & ~4095u;
	struct ic_rping_info info;
	uint8_t *start, *rdma, got[IC_MSG];
	double t0 = lchan_t_now();
	unsigned ping;
	long bad;
	int ret;

	snprintf(sz, sizeof(sz), "%u", size);
	snprintf(cnt, sizeof(cnt), "%u", count);
	/* As rping's client registers start_buf and rdma_buf. */
	ret = ic_open(self, mode, slot, 3, LCHAN_ACCESS_LOCAL_WRITE |
		      LCHAN_ACCESS_REMOTE_READ | LCHAN_ACCESS_REMOTE_WRITE);
	ASSERT_EQ(0, ret) TH_LOG("%s", strerror(-ret));
	start = lchan_t_send_slot(&self->ep, 1);
	rdma = lchan_t_send_slot(&self->ep, 2);
	ic_spawn(_metadata, self, argv);
	ret = ic_connect(self, mode);
	ASSERT_EQ(0, ret) TH_LOG("connect to %s: %s", self->cmd, strerror(-ret));

	for (ping = 0; ping < count; ping++) {
		ic_rping_fill(start, size, ping);
		memset(rdma, IC_POISON, slot);
		info = ic_rping_info(start, self->ep.mr.rkey, size);
		ic_send(_metadata, self, &info, sizeof(info), "start buffer's info");
		ASSERT_EQ(IC_MSG, ic_recv(_metadata, self, got, sizeof(got),
					  "go-ahead after the server's READ"))
			TH_LOG("ping %u", ping);
		info = ic_rping_info(rdma, self->ep.mr.rkey, size);
		ic_send(_metadata, self, &info, sizeof(info), "rdma buffer's info");
		ASSERT_EQ(IC_MSG, ic_recv(_metadata, self, got, sizeof(got),
					  "go-ahead after the server's WRITE"))
			TH_LOG("ping %u", ping);
		bad = ic_first_diff(rdma, start, size);
		ASSERT_EQ(-1, bad) {
			TH_LOG("ping %u of %u bytes: byte %ld is 0x%02x, wrote 0x%02x",
			       ping, size, bad, rdma[bad], start[bad]);
		}
		/* Not one byte more. */
		bad = ic_unpoisoned(rdma, size, slot);
		ASSERT_EQ(-1, bad) TH_LOG("ping %u: byte %ld past %u written",
					  ping, bad, size);
	}
	lchan_chan_close(&self->ep.chan);
	ic_expect_exit0(_metadata, self);
	TH_LOG("%s: %u pings of %u bytes, %.2f s", ic_mode_name[mode], count,
	       size, lchan_t_now() - t0);
	lchan_t_ep_close(&self->ep);
}

/*
 * One rping server run played by lchan against `rping -c ... -V`: per
 * ping, as rping_test_server does,
 *   RECV  the client's start buffer info (big-endian buf, rkey, size)
 *   READ  that buffer (size bytes), waited for; lchan checks it holds
 *         rping's pattern for this ping
 *   SEND  go-ahead: 16 bytes (rping's server sends its send_buf, which
 *         it never fills: zeros; the client checks only the length)
 *   RECV  the client's rdma buffer info
 *   WRITE what was read to it (strlen() + 1 = size bytes), waited for
 *   SEND  go-ahead; the client compares its buffers (-V)
 * After -C pings the client disconnects and exits 0.
 */
static void rping_as_server(struct __test_metadata *_metadata,
			    FIXTURE_DATA(interop) *self, enum ic_mode mode,
			    unsigned size, unsigned count)
{
	char sz[16], cnt[16];
	char *argv[] = { IC_RPING, "-c", "-a", self->d.addr, "-p", self->port,
			 "-C", cnt, "-S", sz, "-V", "-d", NULL };
	size_t slot = (size + 4095) & ~4095u;
	struct ic_rping_info info;
	double t0 = lchan_t_now();
	uint8_t *buf, *want;
	unsigned ping;
	uint64_t addr;
	uint32_t rkey, len;
	long bad;
	int ret;

	snprintf(sz, sizeof(sz), "%u", size);
	snprintf(cnt, sizeof(cnt), "%u", count);
	/*
	 * As rping's server registers its rdma_buf (send slot 1); slot 2
	 * holds the pattern expected, and is never advertised.
	 */
	ret = ic_open(self, mode, slot, 3, LCHAN_ACCESS_LOCAL_WRITE |
		      LCHAN_ACCESS_REMOTE_READ | LCHAN_ACCESS_REMOTE_WRITE);
	ASSERT_EQ(0, ret) TH_LOG("%s", strerror(-ret));
	buf = lchan_t_send_slot(&self->ep, 1);
	want = lchan_t_send_slot(&self->ep, 2);
	ic_listen(_metadata, self);
	ic_spawn(_metadata, self, argv);
	ret = ic_accept(self, mode);
	ASSERT_EQ(0, ret) TH_LOG("accept from %s: %s", self->cmd,
				 ret == -ECHILD ? "it ended first" :
				 strerror(-ret));

	for (ping = 0; ping < count; ping++) {
		struct lchan_sqe *sqe;

		ASSERT_EQ(IC_MSG, ic_recv(_metadata, self, &info, sizeof(info),
					  "the client's start buffer info"))
			TH_LOG("ping %u", ping);
		addr = be64toh(info.buf);
		rkey = be32toh(info.rkey);
		len = be32toh(info.size);
		ASSERT_EQ(size, len) TH_LOG("ping %u", ping);

		memset(buf, IC_POISON, slot);
		sqe = ic_sqe(_metadata, self);
		lchan_prep_read(sqe, &self->ep.mr, buf, len, addr, rkey,
				self->posted + 1);
		ic_run(_metadata, self, LCHAN_CQE_READ, "READ of the start buffer");
		ic_rping_fill(want, size, ping);
		bad = ic_first_diff(buf, want, size);
		ASSERT_EQ(-1, bad) {
			TH_LOG("ping %u of %u bytes: byte %ld is 0x%02x, not 0x%02x",
			       ping, size, bad, buf[bad], want[bad]);
		}
		bad = ic_unpoisoned(buf, size, slot);
		ASSERT_EQ(-1, bad) TH_LOG("ping %u: byte %ld past %u read",
					  ping, bad, size);
		ic_send(_metadata, self, ic_zeros, IC_MSG, "go-ahead after READ");

		ASSERT_EQ(IC_MSG, ic_recv(_metadata, self, &info, sizeof(info),
					  "the client's rdma buffer info"))
			TH_LOG("ping %u", ping);
		addr = be64toh(info.buf);
		rkey = be32toh(info.rkey);
		len = be32toh(info.size);
		ASSERT_EQ(size, len) TH_LOG("ping %u", ping);
		/* rping's server writes strlen() + 1: here all of len. */
		sqe = ic_sqe(_metadata, self);
		lchan_prep_write(sqe, &self->ep.mr, buf, len, addr, rkey,
				 self->posted + 1);
		ic_run(_metadata, self, LCHAN_CQE_WRITE, "WRITE to the rdma buffer");
		ic_send(_metadata, self, ic_zeros, IC_MSG, "go-ahead after WRITE");
	}
	ic_wait_peer_close(_metadata, self);
	lchan_chan_close(&self->ep.chan);
	ic_expect_exit0(_metadata, self);
	TH_LOG("%s: %u pings of %u bytes, %.2f s", ic_mode_name[mode], count,
	       size, lchan_t_now() - t0);
	lchan_t_ep_close(&self->ep);
}

static void vs_rping_server(struct __test_metadata *_metadata,
			    FIXTURE_DATA(interop) *self, const char *kind,
			    enum ic_mode mode)
{
	unsigned i, count = lchan_t_count(10);

	IC_NEED(IC_RPING);
	IC_NEED_MODE(kind, mode);
	for (i = 0; i < ARRAY_SIZE(ic_sizes); i++)
		rping_as_client(_metadata, self, mode, ic_sizes[i], count);
}

static void vs_rping_client(struct __test_metadata *_metadata,
			    FIXTURE_DATA(interop) *self, const char *kind,
			    enum ic_mode mode)
{
	unsigned i, count = lchan_t_count(10);

	IC_NEED(IC_RPING);
	IC_NEED_MODE(kind, mode);
	for (i = 0; i < ARRAY_SIZE(ic_sizes); i++)
		rping_as_server(_metadata, self, mode, ic_sizes[i], count);
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

/* 3. lchan as rping's client, against rping -s. */
TEST_F_TIMEOUT(interop, rping_client_to_rping_server_doorbell, 300)
{
	vs_rping_server(_metadata, self, variant->kind, IC_DOORBELL);
}

TEST_F_TIMEOUT(interop, rping_client_to_rping_server_poller, 300)
{
	vs_rping_server(_metadata, self, variant->kind, IC_POLLER);
}

TEST_F_TIMEOUT(interop, rping_client_to_rping_server_direct, 300)
{
	vs_rping_server(_metadata, self, variant->kind, IC_DIRECT);
}

/* 4. lchan as rping's server, against rping -c. */
TEST_F_TIMEOUT(interop, rping_server_of_rping_client_doorbell, 300)
{
	vs_rping_client(_metadata, self, variant->kind, IC_DOORBELL);
}

TEST_F_TIMEOUT(interop, rping_server_of_rping_client_poller, 300)
{
	vs_rping_client(_metadata, self, variant->kind, IC_POLLER);
}

TEST_F_TIMEOUT(interop, rping_server_of_rping_client_direct, 300)
{
	vs_rping_client(_metadata, self, variant->kind, IC_DIRECT);
}

TEST_HARNESS_MAIN
