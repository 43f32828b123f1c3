// SPDX-License-Identifier: GPL-2.0
/*
 * Connect storms: 256 connects at once from eight processes to one
 * listener, repeated.  A connect either succeeds or fails with an error
 * lchan_connect(3) documents as retryable: ECONNREFUSED (the backlog was
 * full), ETIMEDOUT (not accepted in time), ECONNRESET (the handshake
 * failed) or, on iWARP, EADDRNOTAVAIL (the local port given to the
 * connection still names an earlier one in TIME_WAIT).  A client that fails tries again after a growing pause, as a
 * real client would, so in the end every one is connected and the server
 * holds exactly 256 live channels (an accepted channel whose connecting
 * side failed goes to disconnected and is closed).  Nothing else (EINVAL
 * above all) may come back, and neither side may hang: a round that makes
 * no progress for lchan_t_stall_secs() fails then and says where every
 * connect stands.
 *
 * The backlog: a listener holds at most its backlog of requests that no
 * accept has taken; the requests beyond it are refused at once
 * (ECONNREFUSED at the connecting side), as a socket's listener does with
 * tcp_abort_on_overflow set.
 */
#include <sys/mman.h>

#include "kselftest_harness.h"
#include "lchan_test.h"

#define NPROC		8
#define NTHR		32
#define NCONN		(NPROC * NTHR)		/* 256 */
#define BACKLOG		64
#define CONN_TIMEOUT_MS	20000
/* An accept this long (seconds) is reported: it held up the others. */
#define ACCEPT_SLOW_S	2.0
/* Accepts stalled this long (seconds): where both sides wait is dumped. */
#define ACCEPT_STALL_S	10.0
/* Accepted channels a round may see: retries after a failed handshake. */
#define MAX_ACCEPT	(4 * NCONN)

/* Where one connect stands; in memory shared by the processes. */
enum {
	ST_IDLE,
	ST_CONNECTING,
	ST_CONNECTED,
	ST_FAILED,
};

struct storm_slot {
	int state;
	int last_err;		/* last error (positive errno), 0 for none */
	unsigned attempts;
	unsigned refused;
	unsigned timedout;
	unsigned reset;
	unsigned port_busy;	/* EADDRNOTAVAIL */
};

/* What made a round's connects retry. */
struct storm_retries {
	unsigned all, refused, timedout, reset, port_busy;
};

struct storm {
	struct storm_slot slot[NCONN];
	unsigned progress;	/* any connect finished an attempt */
	unsigned accepted;
	unsigned accept_errs;
	int accept_err;		/* last unexpected accept error */
	int go;			/* the children may start */
	int release;		/* the children may close */
};

FIXTURE(storm) {
	struct lchan_t_dev d;
	struct storm *sh;
};

LCHAN_T_VARIANTS(storm);

FIXTURE_SETUP(storm)
{
	LCHAN_T_NEED_DEV(&self->d, variant->kind);
	self->sh = mmap(NULL, sizeof(*self->sh), PROT_READ | PROT_WRITE,
			MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->sh);
}

FIXTURE_TEARDOWN(storm)
{
	if (self->sh && self->sh != MAP_FAILED)
		munmap(self->sh, sizeof(*self->sh));
}

static unsigned ld(const unsigned *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static void inc(unsigned *p)
{
	__atomic_fetch_add(p, 1, __ATOMIC_RELEASE);
}

/* A connect may fail only with what a client can retry. */
static bool storm_retryable(int err)
{
	return err == ECONNREFUSED || err == ETIMEDOUT || err == ECONNRESET ||
	       err == EADDRNOTAVAIL;
}

struct storm_client {
	struct storm *sh;
	const char *addr;
	const char *port;
	struct lchan_ctx *ctx;
	struct lchan_chan chan;
	unsigned idx;
};

static void *storm_connect_thread(void *arg)
{
	struct storm_client *c = arg;
	struct storm_slot *s = &c->sh->slot[c->idx];
	struct lchan_opts opts = { .timeout_ms = CONN_TIMEOUT_MS };
	double end = lchan_t_now() + 120;
	int ret;

	__atomic_store_n(&s->state, ST_CONNECTING, __ATOMIC_RELEASE);
	for (;;) {
		s->attempts++;
		ret = lchan_connect(c->ctx, c->addr, c->port, &opts, &c->chan);
		inc(&c->sh->progress);
		if (!ret)
			break;
		__atomic_store_n(&s->last_err, -ret, __ATOMIC_RELEASE);
		if (ret == -ECONNREFUSED)
			s->refused++;
		if (ret == -ETIMEDOUT)
			s->timedout++;
		if (ret == -ECONNRESET)
			s->reset++;
		if (ret == -EADDRNOTAVAIL)
			s->port_busy++;
		if (!storm_retryable(-ret) || lchan_t_now() > end) {
			__atomic_store_n(&s->state, ST_FAILED, __ATOMIC_RELEASE);
			return NULL;
		}
		/*
		 * Back off: 10 ms doubling to 640 ms, spread per client.  A
		 * refused connect costs both sides a QP and a handshake, so
		 * retrying at once would starve the accepting side.
		 */
		usleep((10000u << (s->attempts < 7 ? s->attempts - 1 : 6)) +
		       (c->idx * 7919u) % 10000);
	}
	__atomic_store_n(&s->state, ST_CONNECTED, __ATOMIC_RELEASE);
	return NULL;
}

/* One process of the storm: NTHR connects at once, kept until released. */
static int storm_child(struct storm *sh, unsigned proc, const char *addr,
		       const char *port)
{
	struct storm_client c[NTHR];
	pthread_t thr[NTHR];
	struct lchan_ctx ctx;
	unsigned i;
	int ret;

	ret = lchan_ctx_open(&ctx);
	if (ret)
		return lchan_t_child_fail(1, "open: %s", strerror(-ret));
	while (!__atomic_load_n(&sh->go, __ATOMIC_ACQUIRE))
		usleep(1000);
	for (i = 0; i < NTHR; i++) {
		c[i] = (struct storm_client){
			.sh = sh, .addr = addr, .port = port, .ctx = &ctx,
			.idx = proc * NTHR + i,
		};
		c[i].chan.fd = -1;
		if (pthread_create(&thr[i], NULL, storm_connect_thread, &c[i]))
			return lchan_t_child_fail(2, "pthread_create");
	}
	for (i = 0; i < NTHR; i++)
		pthread_join(thr[i], NULL);
	while (!__atomic_load_n(&sh->release, __ATOMIC_ACQUIRE))
		usleep(1000);
	for (i = 0; i < NTHR; i++)
		if (c[i].chan.fd >= 0)
			lchan_chan_close(&c[i].chan);
	lchan_ctx_close(&ctx);
	return 0;
}

struct storm_server {
	struct storm *sh;
	struct lchan_listener *lst;
	struct lchan_chan *chans;	/* MAX_ACCEPT */
	unsigned n;
	int stop;
};

/* Accept until told to stop; keep every channel. */
static void *storm_accept_thread(void *arg)
{
	struct storm_server *s = arg;
	struct pollfd pfd = { .fd = s->lst->fd, .events = POLLIN };
	double took;
	int ret;

	while (!__atomic_load_n(&s->stop, __ATOMIC_ACQUIRE)) {
		if (poll(&pfd, 1, 100) <= 0)
			continue;
		if (s->n == MAX_ACCEPT) {
			/* Far more than were asked for: a bug. */
			struct lchan_chan extra;

			if (!lchan_accept(s->lst, NULL, &extra))
				lchan_chan_close(&extra);
			s->sh->accept_err = EEXIST;
			continue;
		}
		took = lchan_t_now();
		ret = lchan_accept(s->lst, NULL, &s->chans[s->n]);
		took = lchan_t_now() - took;
		/* An accept waits for its peer: a long one tells of a stall. */
		if (took > ACCEPT_SLOW_S)
			fprintf(stderr, "# storm: an accept took %.1f s: %s\n",
				took, ret ? strerror(-ret) : "accepted");
		if (!ret) {
			s->n++;
			inc(&s->sh->accepted);
			inc(&s->sh->progress);
			continue;
		}
		/* A request whose peer gave up is skipped or fails. */
		if (ret == -EAGAIN || ret == -EINTR)
			continue;
		inc(&s->sh->accept_errs);
		if (ret != -ECONNRESET && ret != -ETIMEDOUT &&
		    ret != -ECONNREFUSED)
			s->sh->accept_err = -ret;
	}
	return NULL;
}

/* Where every connect stands, and the kernel's view of the channels. */
static void storm_dump(struct storm *sh, const char *why)
{
	unsigned i, by_state[4] = { 0 };
	char cmd[] = "rdma resource show cm_id 2>&1 | head -n 40 >&2";

	for (i = 0; i < NCONN; i++)
		by_state[sh->slot[i].state & 3]++;
	fprintf(stderr, "# storm: %s: accepted %u, accept errors %u (last %s), "
		"connects idle %u connecting %u connected %u failed %u\n", why,
		ld(&sh->accepted), ld(&sh->accept_errs),
		strerror(sh->accept_err), by_state[ST_IDLE],
		by_state[ST_CONNECTING], by_state[ST_CONNECTED],
		by_state[ST_FAILED]);
	for (i = 0; i < NCONN; i++) {
		struct storm_slot *s = &sh->slot[i];

		if (s->state == ST_CONNECTED)
			continue;
		fprintf(stderr, "# storm: connect %u (process %u): state %d, "
			"%u attempts, %u refused, %u timed out, %u reset, "
			"%u port busy, last error %s\n", i, i / NTHR,
			s->state, s->attempts, s->refused, s->timedout,
			s->reset, s->port_busy, strerror(s->last_err));
	}
	if (system(cmd) < 0)
		fprintf(stderr, "# storm: no rdma tool\n");
	lchan_t_dump_tcp();
}

/* How many channel directories sysfs holds. */
static unsigned storm_sysfs_chans(void)
{
	DIR *d = opendir("/sys/kernel/lchan/channels");
	struct dirent *de;
	unsigned n = 0;

	if (!d)
		return 0;
	while ((de = readdir(d)))
		if (de->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

/*
 * The accepted channels that are connected, once those whose connecting
 * side failed have seen it (up to 10 s); the others are closed.
 */
static unsigned storm_live(struct storm_server *srv, unsigned want)
{
	double end = lchan_t_now() + 10;
	unsigned i, live;

	do {
		live = 0;
		for (i = 0; i < srv->n; i++)
			live += lchan_chan_state(&srv->chans[i]) ==
				LCHAN_STATE_CONNECTED;
		if (live <= want)
			break;
		usleep(50000);
	} while (lchan_t_now() < end);
	return live;
}

/*
 * One storm: NPROC processes of NTHR connects each against a listener of
 * @backlog.  Returns 0, or fills @why.
 */
static int storm_round(struct storm *sh, const char *addr, unsigned backlog,
		       struct storm_retries *retried, char *why,
		       size_t whylen)
{
	struct storm_server srv = { .sh = sh };
	double stall = lchan_t_stall_secs(), last, last_accept;
	unsigned i, prog, base_chans, connected = 0, live, accepted;
	bool stacks_shown = false;
	struct lchan_listener lst;
	struct lchan_ctx ctx;
	pid_t pid[NPROC];
	char port[16];
	pthread_t thr;
	int ret = 0, status, bad = 0;

	memset(sh, 0, sizeof(*sh));
	base_chans = storm_sysfs_chans();
	snprintf(port, sizeof(port), "%u", lchan_t_port());
	srv.chans = calloc(MAX_ACCEPT, sizeof(*srv.chans));
	if (!srv.chans || lchan_ctx_open(&ctx)) {
		snprintf(why, whylen, "context");
		return -1;
	}
	ret = lchan_listen(&ctx, addr, port, backlog, LCHAN_FD_NONBLOCK, &lst);
	if (ret) {
		snprintf(why, whylen, "listen: %s", strerror(-ret));
		return -1;
	}
	srv.lst = &lst;
	/* The processes first, while this one has a single thread. */
	for (i = 0; i < NPROC; i++) {
		pid[i] = fork();
		if (pid[i] == 0)
			_exit(storm_child(sh, i, addr, port));
	}
	pthread_create(&thr, NULL, storm_accept_thread, &srv);
	__atomic_store_n(&sh->go, 1, __ATOMIC_RELEASE);

	/* Until every connect is settled, or nothing moves any more. */
	prog = ld(&sh->progress);
	last = last_accept = lchan_t_now();
	accepted = 0;
	for (;;) {
		unsigned settled = 0;

		for (i = 0; i < NCONN; i++) {
			int st = __atomic_load_n(&sh->slot[i].state,
						 __ATOMIC_ACQUIRE);

			settled += st == ST_CONNECTED || st == ST_FAILED;
		}
		if (settled == NCONN && ld(&sh->accepted) >= NCONN)
			break;
		if (settled == NCONN && lchan_t_now() - last > 5)
			break;	/* accepted falls short: judged below */
		if (ld(&sh->accepted) != accepted) {
			accepted = ld(&sh->accepted);
			last_accept = lchan_t_now();
		} else if (settled < NCONN && !stacks_shown &&
			   lchan_t_now() - last_accept > ACCEPT_STALL_S) {
			fprintf(stderr, "# storm: no accept for %.0f s, %u "
				"accepted, %u connects settled\n",
				ACCEPT_STALL_S, accepted, settled);
			lchan_t_dump_stacks("storm: server", getpid());
			lchan_t_dump_stacks("storm: process 0", pid[0]);
			stacks_shown = true;
		}
		if (ld(&sh->progress) != prog) {
			prog = ld(&sh->progress);
			last = lchan_t_now();
		} else if (lchan_t_now() - last > stall) {
			storm_dump(sh, "no progress");
			snprintf(why, whylen, "stalled for %.0f s", stall);
			ret = -1;
			break;
		}
		usleep(20000);
	}

	*retried = (struct storm_retries){ 0 };
	for (i = 0; i < NCONN; i++) {
		struct storm_slot *s = &sh->slot[i];

		retried->all += s->attempts - 1;
		retried->refused += s->refused;
		retried->timedout += s->timedout;
		retried->reset += s->reset;
		retried->port_busy += s->port_busy;
		connected += s->state == ST_CONNECTED;
		if (s->state == ST_FAILED && !bad++)
			snprintf(why, whylen, "connect %u failed with %s after "
				 "%u attempts", i, strerror(s->last_err),
				 s->attempts);
	}
	__atomic_store_n(&srv.stop, 1, __ATOMIC_RELEASE);
	pthread_join(thr, NULL);
	/* The server's live channels: one per connected client. */
	live = storm_live(&srv, connected);
	if (!ret && !bad && (connected != NCONN || live != NCONN ||
			     sh->accept_err)) {
		snprintf(why, whylen, "connected %u, accepted %u, live %u, "
			 "accept error %s", connected, ld(&sh->accepted), live,
			 strerror(sh->accept_err));
		bad = 1;
	}
	if (bad && !ret)
		storm_dump(sh, "wrong outcome");
	__atomic_store_n(&sh->release, 1, __ATOMIC_RELEASE);
	for (i = 0; i < NPROC; i++) {
		if (ret)
			kill(pid[i], SIGKILL);
		status = lchan_t_wait_child(pid[i]);
		if (status && !ret && !bad) {
			snprintf(why, whylen, "process %u: exit status %d", i,
				 status);
			bad = 1;
		}
	}
	for (i = 0; i < srv.n; i++)
		lchan_chan_close(&srv.chans[i]);
	lchan_listener_close(&lst);
	lchan_ctx_close(&ctx);
	free(srv.chans);
	/* Nothing left behind. */
	if (!ret && !bad && storm_sysfs_chans() != base_chans) {
		snprintf(why, whylen, "%u channel directories left in sysfs",
			 storm_sysfs_chans() - base_chans);
		bad = 1;
	}
	return ret || bad ? -1 : 0;
}

TEST_F_TIMEOUT(storm, connect_256_at_once, 600)
{
	unsigned r, rounds = lchan_t_env_uint("LCHAN_T_STORM_ROUNDS", 1);
	struct storm_retries retried;
	char why[256] = "";
	double t0;

	for (r = 0; r < rounds; r++) {
		t0 = lchan_t_now();
		ASSERT_EQ(0, storm_round(self->sh, self->d.addr, BACKLOG,
					 &retried, why, sizeof(why)))
			TH_LOG("round %u: %s", r, why);
		TH_LOG("round %u: %u connects in %.1f s, %u retries (refused "
		       "%u, timed out %u, reset %u, port busy %u)", r, NCONN,
		       lchan_t_now() - t0, retried.all, retried.refused,
		       retried.timedout, retried.reset, retried.port_busy);
	}
}

/*
 * Above the backlog: with nobody accepting, a listener of backlog 4 keeps
 * four requests and refuses the rest at once; the four are accepted later.
 */
struct backlog_conn {
	struct lchan_ctx *ctx;
	const char *addr, *port;
	struct lchan_chan chan;
	int ret;
	double secs;
};

static void *backlog_connect(void *arg)
{
	struct backlog_conn *b = arg;
	struct lchan_opts opts = { .timeout_ms = CONN_TIMEOUT_MS };
	double t0 = lchan_t_now();

	b->ret = lchan_connect(b->ctx, b->addr, b->port, &opts, &b->chan);
	b->secs = lchan_t_now() - t0;
	return NULL;
}

TEST_F_TIMEOUT(storm, above_backlog_refused, 120)
{
	enum { BL = 4, N = 12 };
	struct backlog_conn b[N];
	struct lchan_chan acc[N];
	struct lchan_listener lst;
	struct lchan_ctx sctx, cctx;
	unsigned i, ok = 0, refused = 0, nacc = 0;
	pthread_t thr[N];
	char port[16];
	double t0;

	snprintf(port, sizeof(port), "%u", lchan_t_port());
	ASSERT_EQ(0, lchan_ctx_open(&sctx));
	ASSERT_EQ(0, lchan_ctx_open(&cctx));
	ASSERT_EQ(0, lchan_listen(&sctx, self->d.addr, port, BL,
				  LCHAN_FD_NONBLOCK, &lst));
	for (i = 0; i < N; i++) {
		b[i] = (struct backlog_conn){ .ctx = &cctx,
			.addr = self->d.addr, .port = port };
		ASSERT_EQ(0, pthread_create(&thr[i], NULL, backlog_connect,
					    &b[i]));
	}
	/* Those above the backlog are refused without an accept. */
	t0 = lchan_t_now();
	while (lchan_t_now() - t0 < 15) {
		refused = 0;
		for (i = 0; i < N; i++)
			refused += __atomic_load_n(&b[i].ret, __ATOMIC_ACQUIRE) ==
				   -ECONNREFUSED;
		if (refused >= N - BL)
			break;
		usleep(20000);
	}
	EXPECT_EQ(N - BL, refused) {
		for (i = 0; i < N; i++)
			TH_LOG("connect %u: %s after %.2f s", i,
			       strerror(-b[i].ret), b[i].secs);
	}
	/* Then the backlog is accepted, and its connects complete. */
	t0 = lchan_t_now();
	while (nacc < BL && lchan_t_now() - t0 < 15) {
		struct pollfd pfd = { .fd = lst.fd, .events = POLLIN };
		int ret;

		if (poll(&pfd, 1, 200) <= 0)
			continue;
		ret = lchan_accept(&lst, NULL, &acc[nacc]);
		if (!ret)
			nacc++;
		else
			ASSERT_EQ(-EAGAIN, ret);
	}
	for (i = 0; i < N; i++)
		pthread_join(thr[i], NULL);
	for (i = 0; i < N; i++) {
		if (!b[i].ret) {
			ok++;
			lchan_chan_close(&b[i].chan);
		} else {
			EXPECT_EQ(-ECONNREFUSED, b[i].ret)
				TH_LOG("connect %u: %s", i, strerror(-b[i].ret));
		}
	}
	EXPECT_EQ(BL, nacc);
	EXPECT_EQ(BL, ok);
	for (i = 0; i < nacc; i++)
		lchan_chan_close(&acc[i]);
	lchan_listener_close(&lst);
	lchan_ctx_close(&cctx);
	lchan_ctx_close(&sctx);
}

TEST_HARNESS_MAIN
