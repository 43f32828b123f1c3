// SPDX-License-Identifier: GPL-2.0
/*
 * Scale: pairs of processes, each process holding LCHAN_T_SCALE_CHANS
 * channels (128 here; 1,024 in `make soak`, with LCHAN_T_SCALE_PAIRS=2:
 * 4,096 channel ends in the guest).  While all are connected and idle the
 * kernel's memory per channel is measured (slab and vmalloc, before and
 * after) and lchan's own part read from sysfs (kmem_bytes).  Then every
 * channel passes a message; epoll over all of a process's channels wakes
 * for exactly the one that has a completion; closing them all leaves
 * nothing behind (sysfs, rdma resources, kernel memory back near where
 * it was).  A process holding N channels needs RLIMIT_NOFILE above N.
 */
#include <sys/epoll.h>
#include <sys/mman.h>

#include "kselftest_harness.h"
#include "lchan_test.h"

#define MAX_PAIRS	8
#define RING_ENTRIES	8
#define MSG_SIZE	64
#define SAMPLES		16	/* channels the epoll check wakes one by one */

struct scale_shared {
	unsigned progress;	/* any side did something; atomic */
	unsigned ready;		/* processes with all channels up */
	unsigned go;		/* the parent measured: go on */
	unsigned srv_done;	/* servers whose sends all completed */
	unsigned cmd[MAX_PAIRS];	/* client -> server: port to send on */
	unsigned cmd_seq[MAX_PAIRS];	/* bumped per command */
	unsigned ack_seq[MAX_PAIRS];	/* the server did it */
	double connect_secs[MAX_PAIRS];
	double close_secs[2 * MAX_PAIRS];
	unsigned long long kmem_bytes;	/* one channel's, from sysfs */
	char state[2 * MAX_PAIRS][96];	/* where each process stands */
};

/* The command "send on every channel", and "close". */
#define CMD_ALL		0xffffffffu
#define CMD_CLOSE	0xfffffffeu

FIXTURE(scale) {
	struct lchan_t_dev d;
	struct scale_shared *sh;
	unsigned nchan, npairs;
};

LCHAN_T_VARIANTS(scale);

FIXTURE_SETUP(scale)
{
	LCHAN_T_NEED_DEV(&self->d, variant->kind);
	lchan_t_raise_memlock();
	self->nchan = lchan_t_env_uint("LCHAN_T_SCALE_CHANS", 128);
	self->npairs = lchan_t_env_uint("LCHAN_T_SCALE_PAIRS", 2);
	ASSERT_LE(self->npairs, MAX_PAIRS);
	self->sh = mmap(NULL, sizeof(*self->sh), PROT_READ | PROT_WRITE,
			MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->sh);
	memset(self->sh, 0, sizeof(*self->sh));
}

FIXTURE_TEARDOWN(scale)
{
	if (self->sh && self->sh != MAP_FAILED)
		munmap(self->sh, sizeof(*self->sh));
}

static void bump(unsigned *p)
{
	__atomic_fetch_add(p, 1, __ATOMIC_RELEASE);
}

static unsigned ld(const unsigned *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static void say(struct scale_shared *sh, unsigned who, const char *what)
{
	snprintf(sh->state[who], sizeof(sh->state[who]), "%s", what);
	bump(&sh->progress);
}

static int raise_nofile(unsigned n)
{
	struct rlimit rl = { n + 64, n + 64 };
	struct rlimit cur;

	if (!getrlimit(RLIMIT_NOFILE, &cur) && cur.rlim_max > rl.rlim_max)
		rl.rlim_max = cur.rlim_max;
	return setrlimit(RLIMIT_NOFILE, &rl) ? -errno : 0;
}

/* One side's channels, a buffer registered once and one slot each. */
struct scale_side {
	struct lchan_ctx ctx;
	struct lchan_chan *chans;
	struct lchan_mr mr;
	uint8_t *buf;
	unsigned n;
};

static int side_open(struct scale_side *s, unsigned n)
{
	int ret;

	s->n = n;
	s->chans = calloc(n, sizeof(*s->chans));
	s->buf = aligned_alloc(4096, (size_t)n * MSG_SIZE + 4096);
	if (!s->chans || !s->buf)
		return -ENOMEM;
	memset(s->buf, 0, (size_t)n * MSG_SIZE);
	ret = raise_nofile(n);
	if (ret)
		return ret;
	return lchan_ctx_open(&s->ctx);
}

static int post_recv(struct scale_side *s, unsigned i)
{
	struct lchan_rqe *rqe = lchan_get_rqe(&s->chans[i]);
	int ret;

	if (!rqe)
		return -ENOSPC;
	lchan_prep_recv(rqe, &s->mr, s->buf + (size_t)i * MSG_SIZE, MSG_SIZE,
			i);
	ret = lchan_submit(&s->chans[i]);
	return ret < 0 ? ret : 0;
}

static int send_msg(struct scale_side *s, unsigned i)
{
	struct lchan_sqe *sqe = lchan_get_sqe(&s->chans[i]);
	uint8_t *p = s->buf + (size_t)i * MSG_SIZE;
	int ret;

	if (!sqe)
		return -ENOSPC;
	/* The message names the port it goes to: the peer checks it. */
	memcpy(p, &s->chans[i].info.remote.port, sizeof(uint16_t));
	lchan_prep_send(sqe, &s->mr, p, MSG_SIZE, i);
	ret = lchan_submit(&s->chans[i]);
	return ret < 0 ? ret : 0;
}

static int reap_one(struct lchan_chan *chan, int timeout_ms)
{
	struct lchan_cqe *cqe;
	int ret = lchan_wait_cqe(chan, &cqe, timeout_ms);

	if (ret)
		return ret;
	ret = cqe->status ? -EIO : 0;
	if (ret)
		fprintf(stderr, "# scale: chan %u: %s\n", chan->info.id,
			lchan_cqe_status_str(cqe->status));
	lchan_cqe_seen(chan);
	return ret;
}

/* The accepting side of pair @p: accept, then do what the client asks. */
static int scale_server(struct scale_shared *sh, unsigned p,
			const char *addr, const char *port, unsigned n,
			int ready_fd)
{
	struct lchan_opts opts = {
		.sq_entries = RING_ENTRIES, .rq_entries = RING_ENTRIES,
	};
	struct scale_side s = { 0 };
	struct lchan_listener lst;
	unsigned i, seq = 0, cmd;
	char msg[96];
	int ret;

	ret = side_open(&s, n);
	if (ret)
		return lchan_t_child_fail(1, "server open: %s", strerror(-ret));
	ret = lchan_listen(&s.ctx, addr, port, 1024, 0, &lst);
	if (ret)
		return lchan_t_child_fail(2, "listen: %s", strerror(-ret));
	if (write(ready_fd, "l", 1) != 1)
		return lchan_t_child_fail(3, "ready pipe");
	close(ready_fd);
	for (i = 0; i < n; i++) {
		ret = lchan_accept(&lst, &opts, &s.chans[i]);
		if (ret)
			return lchan_t_child_fail(4, "accept %u: %s", i,
						  strerror(-ret));
		if (i % 64 == 63) {
			snprintf(msg, sizeof(msg), "server: %u accepted", i + 1);
			say(sh, 2 * p + 1, msg);
		}
	}
	lchan_listener_close(&lst);
	ret = lchan_mr_reg(&s.ctx, &s.chans[0], s.buf,
			   (size_t)n * MSG_SIZE, 0, &s.mr);
	if (ret)
		return lchan_t_child_fail(5, "mr: %s", strerror(-ret));
	say(sh, 2 * p + 1, "server: all accepted");
	bump(&sh->ready);

	for (;;) {
		double end = lchan_t_now() + 120;

		while (ld(&sh->cmd_seq[p]) == seq) {
			if (lchan_t_now() > end)
				return lchan_t_child_fail(7, "no command");
			usleep(1000);
		}
		seq = ld(&sh->cmd_seq[p]);
		cmd = sh->cmd[p];
		if (cmd == CMD_CLOSE)
			break;
		for (i = 0; i < n; i++) {
			if (cmd != CMD_ALL && s.chans[i].info.remote.port != cmd)
				continue;
			ret = send_msg(&s, i);
			if (!ret)
				ret = reap_one(&s.chans[i], 10000);
			if (ret)
				return lchan_t_child_fail(6, "send on %u: %s", i,
							  strerror(-ret));
			bump(&sh->progress);
		}
		__atomic_store_n(&sh->ack_seq[p], seq, __ATOMIC_RELEASE);
	}
	say(sh, 2 * p + 1, "server: closing");
	{
		double t0 = lchan_t_now();

		for (i = 0; i < n; i++)
			lchan_chan_close(&s.chans[i]);
		sh->close_secs[2 * p + 1] = lchan_t_now() - t0;
	}
	lchan_mr_dereg(&s.ctx, &s.mr);
	lchan_ctx_close(&s.ctx);
	say(sh, 2 * p + 1, "server: done");
	return 0;
}

/* Ask the server of pair @p to send, and wait until it has. */
static int ask(struct scale_shared *sh, unsigned p, unsigned cmd)
{
	unsigned seq = ld(&sh->cmd_seq[p]) + 1;
	double end = lchan_t_now() + 60;

	sh->cmd[p] = cmd;
	__atomic_store_n(&sh->cmd_seq[p], seq, __ATOMIC_RELEASE);
	if (cmd == CMD_CLOSE)
		return 0;
	while (ld(&sh->ack_seq[p]) != seq) {
		if (lchan_t_now() > end)
			return -ETIMEDOUT;
		usleep(1000);
	}
	return 0;
}

/* Which channel an epoll event is for: its index is the event's data. */
static int scale_client(struct scale_shared *sh, unsigned p,
			const char *addr, const char *port, unsigned n)
{
	struct lchan_opts opts = {
		.sq_entries = RING_ENTRIES, .rq_entries = RING_ENTRIES,
	};
	struct epoll_event ev, evs[8];
	struct scale_side s = { 0 };
	unsigned i, k, got = 0;
	char msg[96];
	double t0;
	int ep, ret;

	ret = side_open(&s, n);
	if (ret)
		return lchan_t_child_fail(11, "client open: %s", strerror(-ret));
	t0 = lchan_t_now();
	for (i = 0; i < n; i++) {
		ret = lchan_connect(&s.ctx, addr, port, &opts, &s.chans[i]);
		if (ret)
			return lchan_t_child_fail(12, "connect %u: %s", i,
						  strerror(-ret));
		if (i % 64 == 63) {
			snprintf(msg, sizeof(msg), "client: %u connected", i + 1);
			say(sh, 2 * p, msg);
		}
	}
	sh->connect_secs[p] = lchan_t_now() - t0;
	ret = lchan_mr_reg(&s.ctx, &s.chans[0], s.buf,
			   (size_t)n * MSG_SIZE, LCHAN_ACCESS_LOCAL_WRITE,
			   &s.mr);
	if (ret)
		return lchan_t_child_fail(13, "mr: %s", strerror(-ret));
	ep = epoll_create1(EPOLL_CLOEXEC);
	if (ep < 0)
		return lchan_t_child_fail(14, "epoll: %s", strerror(errno));
	for (i = 0; i < n; i++) {
		ev.events = EPOLLIN;
		ev.data.u32 = i;
		if (epoll_ctl(ep, EPOLL_CTL_ADD, lchan_chan_fd(&s.chans[i]), &ev))
			return lchan_t_child_fail(15, "epoll_ctl %u: %s", i,
						  strerror(errno));
		ret = post_recv(&s, i);
		if (ret)
			return lchan_t_child_fail(16, "recv %u: %s", i,
						  strerror(-ret));
	}
	if (!p)
		sh->kmem_bytes = lchan_t_chan_attr(&s.chans[0], "kmem_bytes");
	say(sh, 2 * p, "client: all connected, idle");
	bump(&sh->ready);
	while (!ld(&sh->go))
		usleep(1000);

	/* Idle: nothing wakes. */
	ret = epoll_wait(ep, evs, 8, 0);
	if (ret)
		return lchan_t_child_fail(17, "idle epoll: %d events", ret);
	/* One completion wakes its channel alone. */
	for (k = 0; k < SAMPLES && k < n; k++) {
		unsigned want = (k * 7919u + p * 31u) % n;

		ret = ask(sh, p, s.chans[want].info.local.port);
		if (ret)
			return lchan_t_child_fail(18, "server did not send");
		ret = epoll_wait(ep, evs, 8, 10000);
		if (ret != 1 || evs[0].data.u32 != want)
			return lchan_t_child_fail(19, "sample %u: %d events, "
						  "first for %u, want %u", k,
						  ret, ret > 0 ? evs[0].data.u32 : 0,
						  want);
		ret = reap_one(&s.chans[want], 0);
		if (!ret)
			ret = post_recv(&s, want);
		if (ret)
			return lchan_t_child_fail(20, "reap %u: %s", want,
						  strerror(-ret));
		ret = epoll_wait(ep, evs, 8, 0);
		if (ret)
			return lchan_t_child_fail(21, "after %u: %d events",
						  want, ret);
		bump(&sh->progress);
	}
	/* Every channel passes a message, checked by its port. */
	ret = ask(sh, p, CMD_ALL);
	if (ret)
		return lchan_t_child_fail(22, "server did not send to all");
	while (got < n) {
		int m = epoll_wait(ep, evs, 8, 10000);

		if (m <= 0)
			return lchan_t_child_fail(23, "%u of %u messages, then "
						  "nothing", got, n);
		for (k = 0; k < (unsigned)m; k++) {
			uint16_t port16;

			i = evs[k].data.u32;
			ret = reap_one(&s.chans[i], 0);
			memcpy(&port16, s.buf + (size_t)i * MSG_SIZE,
			       sizeof(port16));
			if (ret || port16 != s.chans[i].info.local.port)
				return lchan_t_child_fail(24, "channel %u: %s, "
							  "port %u", i,
							  strerror(-ret),
							  port16);
			got++;
		}
		bump(&sh->progress);
	}
	ask(sh, p, CMD_CLOSE);
	say(sh, 2 * p, "client: closing");
	close(ep);
	lchan_mr_dereg(&s.ctx, &s.mr);
	t0 = lchan_t_now();
	for (i = 0; i < n; i++)
		lchan_chan_close(&s.chans[i]);
	sh->close_secs[2 * p] = lchan_t_now() - t0;
	lchan_ctx_close(&s.ctx);
	say(sh, 2 * p, "client: done");
	return 0;
}

/* Kernel memory counters of /proc/meminfo, in KiB. */
static long long meminfo_kb(const char *key)
{
	char line[128];
	long long v = -1;
	size_t len = strlen(key);
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, len) && line[len] == ':')
			v = strtoll(line + len + 1, NULL, 10);
	fclose(f);
	return v;
}

static long long kmem_kb(void)
{
	return meminfo_kb("Slab") + meminfo_kb("VmallocUsed") +
	       meminfo_kb("PageTables") + meminfo_kb("KernelStack");
}

static void scale_dump(struct scale_shared *sh, unsigned procs)
{
	unsigned i;

	fprintf(stderr, "# scale: ready %u go %u progress %u\n", ld(&sh->ready),
		ld(&sh->go), ld(&sh->progress));
	for (i = 0; i < procs; i++)
		fprintf(stderr, "# scale: process %u: %s\n", i, sh->state[i]);
	fprintf(stderr, "# scale: %u channel directories in sysfs\n",
		lchan_t_count_dir("/sys/kernel/lchan/channels"));
}

/* Wait for the children; on a stall dump and kill them.  0 or -1. */
static int scale_wait(struct scale_shared *sh, pid_t *pid, unsigned procs,
		      unsigned *until, unsigned want, int *status)
{
	double stall = lchan_t_stall_secs(), last = lchan_t_now();
	unsigned i, prog = ld(&sh->progress), left = procs;
	int st;

	while (until ? ld(until) < want : left > 0) {
		for (i = 0; !until && i < procs; i++) {
			if (pid[i] > 0 && waitpid(pid[i], &st, WNOHANG) == pid[i]) {
				status[i] = WIFEXITED(st) ? WEXITSTATUS(st) :
					    128 + WTERMSIG(st);
				pid[i] = 0;
				left--;
			}
		}
		for (i = 0; until && i < procs; i++)
			if (pid[i] > 0 && waitpid(pid[i], &st, WNOHANG) == pid[i]) {
				status[i] = WIFEXITED(st) ? WEXITSTATUS(st) :
					    128 + WTERMSIG(st);
				pid[i] = 0;
				fprintf(stderr, "# scale: process %u ended early: %d\n",
					i, status[i]);
				return -1;
			}
		if (ld(&sh->progress) != prog) {
			prog = ld(&sh->progress);
			last = lchan_t_now();
		} else if (lchan_t_now() - last > stall) {
			fprintf(stderr, "# scale: no progress in %.0f s\n", stall);
			scale_dump(sh, procs);
			return -1;
		}
		usleep(20000);
	}
	return 0;
}

TEST_F_TIMEOUT(scale, hold_idle_traffic_close, 1800)
{
	unsigned n = self->nchan, np = self->npairs, procs = 2 * np, i;
	long long kb_before, kb_idle, kb_after;
	int qps_before, qps_after, status[2 * MAX_PAIRS] = { 0 };
	unsigned base_dirs, dirs;
	pid_t pid[2 * MAX_PAIRS];
	struct scale_shared *sh = self->sh;
	char port[MAX_PAIRS][16];
	double t0;

	qps_before = lchan_t_rdma_res_count("qp");
	base_dirs = lchan_t_count_dir("/sys/kernel/lchan/channels");
	kb_before = kmem_kb();
	t0 = lchan_t_now();
	for (i = 0; i < np; i++) {
		int fds[2];
		char c;

		snprintf(port[i], sizeof(port[i]), "%u", lchan_t_port());
		ASSERT_EQ(0, pipe(fds));
		pid[2 * i + 1] = fork();
		if (!pid[2 * i + 1]) {
			close(fds[0]);
			_exit(scale_server(sh, i, self->d.addr, port[i], n,
					   fds[1]));
		}
		close(fds[1]);
		/* The listener first, then its client. */
		ASSERT_EQ(1, read(fds[0], &c, 1));
		close(fds[0]);
		pid[2 * i] = fork();
		if (!pid[2 * i])
			_exit(scale_client(sh, i, self->d.addr, port[i], n));
	}
	if (scale_wait(sh, pid, procs, &sh->ready, procs, status)) {
		lchan_t_kill_children(pid, procs);
		ASSERT_TRUE(false) TH_LOG("set-up did not finish");
	}
	/* All connected and idle: what they cost. */
	usleep(500000);
	kb_idle = kmem_kb();
	dirs = lchan_t_count_dir("/sys/kernel/lchan/channels") - base_dirs;
	EXPECT_EQ(2 * n * np, dirs);
	TH_LOG("%u channels (%u processes of %u), set up in %.1f s "
	       "(client connect loops: %.1f s for %u)", dirs, procs, n,
	       lchan_t_now() - t0, sh->connect_secs[0], n);
	TH_LOG("kernel memory (slab, vmalloc, page tables, stacks): %lld KiB "
	       "before, %lld KiB idle: %.1f KiB per channel end; lchan's own "
	       "(kmem_bytes): %llu bytes", kb_before, kb_idle,
	       (double)(kb_idle - kb_before) / dirs, sh->kmem_bytes);
	__atomic_store_n(&sh->go, 1, __ATOMIC_RELEASE);

	if (scale_wait(sh, pid, procs, NULL, 0, status)) {
		lchan_t_kill_children(pid, procs);
		ASSERT_TRUE(false) TH_LOG("traffic or close did not finish");
	}
	for (i = 0; i < procs; i++)
		EXPECT_EQ(0, status[i]) TH_LOG("process %u: step %d", i, status[i]);
	for (i = 0; i < np; i++)
		TH_LOG("pair %u: closing %u channels took %.2f s (client), "
		       "%.2f s (server)", i, n, sh->close_secs[2 * i],
		       sh->close_secs[2 * i + 1]);
	/* Nothing left behind. */
	EXPECT_EQ(base_dirs, lchan_t_count_dir("/sys/kernel/lchan/channels"));
	for (i = 0; i < 100; i++) {
		if (lchan_t_rdma_res_count("qp") == qps_before)
			break;
		usleep(100000);
	}
	qps_after = lchan_t_rdma_res_count("qp");
	EXPECT_EQ(qps_before, qps_after);
	kb_after = kmem_kb();
	TH_LOG("kernel memory after close: %lld KiB (%+lld KiB against before)",
	       kb_after, kb_after - kb_before);
}

TEST_HARNESS_MAIN
