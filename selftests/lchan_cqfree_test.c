// SPDX-License-Identifier: GPL-2.0
/*
 * Closing channels whose CQ ib_core polls in softirq, while it polls.
 *
 * ib_core's softirq poll marks itself done before it re-arms the CQ at the
 * driver, and ib_free_cq() waits for that mark only; lchan_cq_free() keeps
 * such a CQ until the last poll has returned.  The window is a channel's
 * teardown (drain, destroy the QP, free the CQ) racing the poll that
 * handled the drain's completion and is about to re-arm the CQ.  It is
 * open where the CQ is softirq-polled (siw on every kernel, rxe where its
 * tasks are tasklets) and widest on PREEMPT_RT, where softirqs run in
 * preemptible threads.
 *
 * This test makes that interleaving as likely as it can: two processes per
 * CPU each loop, for LCHAN_T_CQFREE_SECS seconds (5 by default) per
 * variant, over a channel pair to the device's own address: bursts of
 * SENDs that the receiver checks and reposts, so that both CQs' polls are
 * busy, then both ends closed right after the last burst's completions,
 * the order alternating, while one busy loop per CPU at the same priority
 * gets ksoftirqd and the closing thread preempted at arbitrary points.
 *
 * What it checks itself: every message arrives, in order and intact, every
 * completion before the close is good, and every channel and CQ is gone
 * again within a bounded wait.  Its verdict on the race is the rig's
 * kernel-log gate: a use of a freed CQ shows as an oops (or a KASAN report
 * on the debug kernel) and fails the run.
 */
#include <sys/mman.h>
#include <sys/prctl.h>
#include <signal.h>

#include "kselftest_harness.h"
#include "lchan_test.h"

#define MAX_WORKERS	16
#define NRECV		32
#define NSEND		16	/* one burst */
#define NBURST		2	/* bursts per channel pair */
#define MSG		64
#define SLOT		256
#define PAIR_TRIES	5
/* The harness's limit for the test below, less room to finish. */
#define MAX_SECS	240

struct cqfree_worker {
	unsigned progress;	/* moves at every step */
	unsigned pairs;		/* channel pairs set up and closed */
	unsigned retries;	/* pairs retried after a retryable error */
	unsigned long long msgs;
	char phase[48];
	char why[200];
};

struct cqfree_shared {
	struct cqfree_worker w[MAX_WORKERS];
};

FIXTURE(cqfree) {
	struct lchan_t_dev d;
	struct cqfree_shared *sh;
};

LCHAN_T_VARIANTS(cqfree);

FIXTURE_SETUP(cqfree)
{
	LCHAN_T_NEED_DEV(&self->d, variant->kind);
	lchan_t_raise_memlock();
	self->sh = mmap(NULL, sizeof(*self->sh), PROT_READ | PROT_WRITE,
			MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->sh);
}

FIXTURE_TEARDOWN(cqfree)
{
	if (self->sh && self->sh != MAP_FAILED)
		munmap(self->sh, sizeof(*self->sh));
}

/* One end: its context and memory live across the worker's pairs. */
struct cqfree_end {
	struct lchan_t_ep ep;
	bool registered;
};

/*
 * lchan_t_pair() prepare hook: the buffer is registered once per context
 * (a region outlives the channel that named its device); every new
 * channel gets all its receives posted.
 */
static int cqfree_prepare(struct lchan_ctx *ctx, struct lchan_chan *chan,
			  void *arg)
{
	struct cqfree_end *e = arg;
	unsigned i;
	int ret;

	if (!e->registered) {
		ret = lchan_t_ep_prepare(ctx, chan, &e->ep);
		e->registered = !ret;
		return ret;
	}
	e->ep.flushed[0] = e->ep.flushed[1] = false;
	for (i = 0; i < NRECV; i++) {
		ret = lchan_t_post_recv(&e->ep, i);
		if (ret)
			return ret;
	}
	ret = lchan_submit(chan);
	return ret < 0 ? ret : 0;
}

static void step(struct cqfree_worker *w, const char *phase)
{
	snprintf(w->phase, sizeof(w->phase), "%s", phase);
	__atomic_fetch_add(&w->progress, 1, __ATOMIC_RELEASE);
}

static int __attribute__((format(printf, 3, 4)))
fail(struct cqfree_worker *w, int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(w->why, sizeof(w->why), fmt, ap);
	va_end(ap);
	return lchan_t_child_fail(code, "%s: %s", w->phase, w->why);
}

/* What lchan_connect(3) documents as worth retrying. */
static bool cqfree_retryable(int err)
{
	return err == -ECONNREFUSED || err == -ETIMEDOUT ||
	       err == -ECONNRESET || err == -EADDRNOTAVAIL;
}

/* A connected pair, retried a few times on a retryable error. */
static int cqfree_pair(struct cqfree_worker *w, struct cqfree_end *srv,
		       struct cqfree_end *cli, const char *host)
{
	unsigned try;
	int ret = 0;

	for (try = 0; try < PAIR_TRIES; try++) {
		if (try) {
			w->retries++;
			usleep(50000 * try);
		}
		ret = lchan_t_pair(&srv->ep.ctx, &cli->ep.ctx, host, NULL,
				   &srv->ep.chan, &cli->ep.chan,
				   cqfree_prepare, srv, cli);
		if (!ret || !cqfree_retryable(ret))
			break;
	}
	return ret;
}

/*
 * One burst: the client sends NSEND messages (sequence numbers from
 * @*seq on), the server checks each in order and reposts its receive at
 * once.  With @reap_sends the client then reaps its send completions;
 * without, they are still coming in when the caller closes.
 */
static int cqfree_burst(struct cqfree_worker *w, struct cqfree_end *srv,
			struct cqfree_end *cli, unsigned *seq, bool reap_sends)
{
	struct lchan_t_ep *s = &srv->ep, *c = &cli->ep;
	struct lchan_cqe cqe;
	unsigned i, n;
	long bad;
	int ret;

	for (i = 0; i < NSEND; i++) {
		struct lchan_sqe *sqe = lchan_get_sqe(&c->chan);
		unsigned k = *seq + i;

		if (!sqe)
			return fail(w, 10, "send %u: no free SQE", k);
		lchan_t_fill(lchan_t_send_slot(c, k), k, MSG);
		lchan_prep_send(sqe, &c->mr, lchan_t_send_slot(c, k), MSG, k);
	}
	ret = lchan_submit(&c->chan);
	if (ret < 0)
		return fail(w, 11, "submit: %s", strerror(-ret));
	for (i = 0; i < NSEND; i++) {
		unsigned k = *seq + i;

		ret = lchan_t_reap(s, &cqe, 10000);
		if (ret)
			return fail(w, 12, "receive %u: %s", k, strerror(-ret));
		if (cqe.status != LCHAN_CQE_OK || cqe.opcode != LCHAN_CQE_RECV ||
		    cqe.user_data != k || cqe.byte_len != MSG)
			return fail(w, 13, "receive %u: status %s opcode %u "
				    "user_data %llu length %u", k,
				    lchan_cqe_status_str(cqe.status),
				    cqe.opcode,
				    (unsigned long long)cqe.user_data,
				    cqe.byte_len);
		bad = lchan_t_check(lchan_t_recv_slot(s, k), k, MSG);
		if (bad != -1)
			return fail(w, 14, "message %u: wrong byte at %ld", k,
				    bad);
		ret = lchan_t_post_recv(s, k + NRECV);
		if (!ret)
			ret = lchan_submit(&s->chan);
		if (ret < 0)
			return fail(w, 15, "repost %u: %s", k, strerror(-ret));
		w->msgs++;
	}
	for (n = 0; reap_sends && n < NSEND; n++) {
		ret = lchan_t_reap(c, &cqe, 10000);
		if (ret)
			return fail(w, 16, "send completion %u: %s", *seq + n,
				    strerror(-ret));
		if (cqe.status != LCHAN_CQE_OK || cqe.opcode != LCHAN_CQE_SEND ||
		    cqe.user_data != *seq + n)
			return fail(w, 17, "send %u: status %s opcode %u "
				    "user_data %llu", *seq + n,
				    lchan_cqe_status_str(cqe.status),
				    cqe.opcode,
				    (unsigned long long)cqe.user_data);
	}
	*seq += NSEND;
	return 0;
}

/* One process: pairs set up, driven and closed until @end. */
static int cqfree_worker(struct cqfree_worker *w, const char *host,
			 double end)
{
	struct cqfree_end srv = { 0 }, cli = { 0 };
	struct cqfree_end *first, *second;
	unsigned b, seq;
	int ret;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	srv.ep.slot = cli.ep.slot = SLOT;
	srv.ep.nrecv = cli.ep.nrecv = NRECV;
	srv.ep.nsend = cli.ep.nsend = NSEND;
	step(w, "open");
	ret = lchan_ctx_open(&srv.ep.ctx);
	if (!ret)
		ret = lchan_ctx_open(&cli.ep.ctx);
	if (ret)
		return fail(w, 1, "open: %s", strerror(-ret));
	while (lchan_t_now() < end) {
		step(w, "pair");
		ret = cqfree_pair(w, &srv, &cli, host);
		if (ret)
			return fail(w, 2, "pair %u: %s", w->pairs,
				    strerror(-ret));
		for (b = 0, seq = 0; b < NBURST; b++) {
			step(w, "burst");
			ret = cqfree_burst(w, &srv, &cli, &seq,
					   b + 1 < NBURST);
			if (ret)
				return ret;
		}
		/* At once, the last sends' completions still on their way. */
		step(w, "close");
		first = w->pairs % 2 ? &srv : &cli;
		second = first == &srv ? &cli : &srv;
		ret = lchan_chan_close(&first->ep.chan);
		if (!ret)
			ret = lchan_chan_close(&second->ep.chan);
		if (ret)
			return fail(w, 3, "close: %s", strerror(-ret));
		w->pairs++;
	}
	step(w, "done");
	lchan_t_ep_close(&cli.ep);
	lchan_t_ep_close(&srv.ep);
	return 0;
}

/* A busy loop on @cpu (any CPU if it may not choose), until @end. */
static void cqfree_hog(int cpu, double end)
{
	volatile unsigned long spin = 0;
	cpu_set_t cpus;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	CPU_ZERO(&cpus);
	CPU_SET(cpu, &cpus);
	sched_setaffinity(0, sizeof(cpus), &cpus);
	while (lchan_t_now() < end)
		for (spin = 0; spin < 1000000; spin++)
			;
	_exit(0);
}

static void cqfree_dump(const struct cqfree_shared *sh, unsigned n)
{
	unsigned i;

	for (i = 0; i < n; i++)
		fprintf(stderr, "# cqfree: process %u: %s, %u pairs, %llu "
			"messages\n", i, sh->w[i].phase, sh->w[i].pairs,
			sh->w[i].msgs);
	fprintf(stderr, "# cqfree: %u channel directories in sysfs\n",
		lchan_t_count_dir("/sys/kernel/lchan/channels"));
	if (system("rdma resource show cq 2>&1 | head -n 40 >&2") < 0)
		fprintf(stderr, "# cqfree: no rdma tool\n");
}

/*
 * Wait for the workers, watching their progress; on a stall dump where
 * each stands, kill them and return -1.
 */
static int cqfree_wait(struct cqfree_shared *sh, pid_t *pid, unsigned n,
		       int *status)
{
	double stall = lchan_t_stall_secs(), last = lchan_t_now();
	unsigned long long sum = ~0ULL;
	unsigned i, left = n;
	int st;

	while (left) {
		unsigned long long now_sum = 0;

		for (i = 0; i < n; i++) {
			if (pid[i] > 0 && waitpid(pid[i], &st, WNOHANG) == pid[i]) {
				status[i] = WIFEXITED(st) ? WEXITSTATUS(st) :
					    128 + WTERMSIG(st);
				pid[i] = 0;
				left--;
			}
			now_sum += __atomic_load_n(&sh->w[i].progress,
						   __ATOMIC_ACQUIRE);
		}
		if (now_sum != sum) {
			sum = now_sum;
			last = lchan_t_now();
		} else if (lchan_t_now() - last > stall) {
			fprintf(stderr, "# cqfree: no progress in %.0f s\n",
				stall);
			cqfree_dump(sh, n);
			lchan_t_kill_children(pid, n);
			return -1;
		}
		if (left)
			usleep(50000);
	}
	return 0;
}

TEST_F_TIMEOUT(cqfree, close_while_polling, 300)
{
	unsigned secs = lchan_t_env_uint("LCHAN_T_CQFREE_SECS", 5);
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned nw, nhog, i, pairs = 0, retries = 0, dirs = 0;
	int status[MAX_WORKERS] = { 0 }, cqs_before, cqs = 0, ret;
	pid_t pid[MAX_WORKERS] = { 0 }, hog[MAX_WORKERS] = { 0 };
	unsigned long long msgs = 0;
	unsigned base_dirs;
	double t0, end, wait_end;

	if (ncpu < 1)
		ncpu = 1;
	if (secs > MAX_SECS) {
		TH_LOG("LCHAN_T_CQFREE_SECS=%u is above %u: running %u s",
		       secs, MAX_SECS, MAX_SECS);
		secs = MAX_SECS;
	}
	nw = 2 * ncpu < MAX_WORKERS ? 2 * ncpu : MAX_WORKERS;
	nhog = ncpu < MAX_WORKERS ? ncpu : MAX_WORKERS;
	memset(self->sh, 0, sizeof(*self->sh));
	base_dirs = lchan_t_count_dir("/sys/kernel/lchan/channels");
	cqs_before = lchan_t_rdma_res_count("cq");

	t0 = lchan_t_now();
	end = t0 + secs;
	for (i = 0; i < nhog; i++) {
		hog[i] = fork();
		ASSERT_LE(0, hog[i]);
		if (!hog[i])
			cqfree_hog(i, end);
	}
	for (i = 0; i < nw; i++) {
		pid[i] = fork();
		if (pid[i] < 0) {
			lchan_t_kill_children(pid, i);
			lchan_t_kill_children(hog, nhog);
			ASSERT_LE(0, pid[i]);
		}
		if (!pid[i])
			_exit(cqfree_worker(&self->sh->w[i], self->d.addr,
					    end));
	}
	ret = cqfree_wait(self->sh, pid, nw, status);
	lchan_t_kill_children(hog, nhog);
	ASSERT_EQ(0, ret) TH_LOG("the workers stalled");
	for (i = 0; i < nw; i++) {
		struct cqfree_worker *w = &self->sh->w[i];

		EXPECT_EQ(0, status[i])
			TH_LOG("process %u: exit %d in %s: %s", i, status[i],
			       w->phase, w->why);
		pairs += w->pairs;
		retries += w->retries;
		msgs += w->msgs;
	}
	TH_LOG("%u channel closes (%u pairs) in %.1f s by %u processes beside "
	       "%u CPU hogs: %llu messages checked, %u pairs retried", 2 * pairs,
	       pairs, lchan_t_now() - t0, nw, nhog, msgs, retries);
	EXPECT_LT(0, pairs);

	/*
	 * Nothing left behind: every channel, and every CQ, which goes a
	 * grace period after its channel.  The count before may still hold
	 * CQs of an earlier program on their way out, so it is a ceiling.
	 */
	wait_end = lchan_t_now() + 10;
	do {
		dirs = lchan_t_count_dir("/sys/kernel/lchan/channels");
		cqs = lchan_t_rdma_res_count("cq");
		if (dirs == base_dirs && cqs <= cqs_before)
			break;
		usleep(100000);
	} while (lchan_t_now() < wait_end);
	EXPECT_EQ(base_dirs, dirs) TH_LOG("channel directories left in sysfs");
	EXPECT_LE(cqs, cqs_before) TH_LOG("lines of rdma resource show cq");
}

TEST_HARNESS_MAIN
