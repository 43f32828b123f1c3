// SPDX-License-Identifier: GPL-2.0
/*
 * Memory a channel makes the kernel hold is charged to the memory cgroup
 * of the process that opened it: a channel with large rings raises the
 * cgroup's memory.current by at least its ring mapping, closing it gives
 * the memory back, and at memory.max the opening call fails with ENOMEM
 * while nothing is OOM-killed: the connecting call, or the accepting one
 * (whose peer then sees its connect refused).  An unprivileged user meets
 * the same limit.
 *
 * Each test runs its channels in a child moved into a fresh cgroup v2 of
 * its own; without cgroup2 at /sys/fs/cgroup, its memory controller or
 * root, the tests SKIP.
 */
#include <dirent.h>
#include <poll.h>
#include <sys/mman.h>

#include "kselftest_harness.h"
#include "lchan_test.h"

#define CG_ROOT "/sys/fs/cgroup"

/* Rings as large as the module allows: the mapping is about 640 KiB. */
static const struct lchan_opts big_rings = {
	.sq_entries = 4096,
	.rq_entries = 4096,
	.cq_entries = 8192,
};

FIXTURE(memcg) {
	struct lchan_t_dev d;
	char cg[128];
};

LCHAN_T_VARIANTS(memcg);

static int cg_write(const char *dir, const char *file, const char *val)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	return lchan_t_write_file(path, val);
}

static long long cg_read_num(const char *dir, const char *file)
{
	char path[256], buf[64];

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	if (lchan_t_read_sysfs(path, buf, sizeof(buf)))
		return -1;
	return strtoll(buf, NULL, 10);
}

/* The value of @key in a flat keyed file (memory.events), or -1. */
static long long cg_read_key(const char *dir, const char *file,
			     const char *key)
{
	char path[256], name[64];
	long long val, found = -1;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fscanf(f, "%63s %lld", name, &val) == 2)
		if (!strcmp(name, key))
			found = val;
	fclose(f);
	return found;
}

/*
 * Where @cg's charge is (memory.stat), and lchan's channels that this
 * process still has in sysfs with their own kernel memory: what a failed
 * "released on close" check needs to tell a channel left open from memory
 * that outlived its channel.  Returns the number of such channels.
 */
static int cg_dump(const char *cg)
{
	static const char *const keys[] = {
		"anon", "file", "kernel", "kernel_stack", "pagetables",
		"percpu", "sock", "vmalloc", "slab", "slab_unreclaimable",
	};
	char path[320], val[64], line[1024];
	struct dirent *de;
	size_t i, n = 0;
	int chans = 0;
	DIR *d;

	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		n += snprintf(line + n, sizeof(line) - n, " %s=%lld", keys[i],
			      cg_read_key(cg, "memory.stat", keys[i]));
	fprintf(stderr, "# memory.current %lld, memory.stat:%s\n",
		cg_read_num(cg, "memory.current"), line);
	d = opendir("/sys/kernel/lchan/channels");
	if (!d)
		return 0;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/sys/kernel/lchan/channels/%s/pid",
			 de->d_name);
		if (lchan_t_read_sysfs(path, val, sizeof(val)) ||
		    atoi(val) != getpid())
			continue;
		chans++;
		snprintf(path, sizeof(path),
			 "/sys/kernel/lchan/channels/%s/state", de->d_name);
		if (lchan_t_read_sysfs(path, line, sizeof(line)))
			line[0] = 0;
		snprintf(path, sizeof(path),
			 "/sys/kernel/lchan/channels/%s/kmem_bytes", de->d_name);
		if (lchan_t_read_sysfs(path, val, sizeof(val)))
			val[0] = 0;
		fprintf(stderr, "# still open: channel %s state %s kmem_bytes %s\n",
			de->d_name, line, val);
	}
	closedir(d);
	return chans;
}

static long long vmstat_oom_kills(void)
{
	return cg_read_key("/proc", "vmstat", "oom_kill");
}

/*
 * After a child closed everything: what @cg holds must be back below two
 * rings of @ring bytes above @m0, and no channel of the child may be left.
 */
static int memcg_check_returned(const char *cg, long long m0, long long ring,
				int code)
{
	long long end = cg_read_num(cg, "memory.current");

	fprintf(stderr, "# after close: memory.current %lld (%lld before)\n",
		end, m0);
	if (cg_dump(cg) || end - m0 >= 2 * ring)
		return lchan_t_child_fail(code, "closing left %lld bytes charged",
					  end - m0);
	return 0;
}

/* The limit was reached and held: no OOM, no kill, anywhere. */
static void memcg_expect_limit_not_oom(struct __test_metadata *_metadata,
				       const char *cg, long long kills)
{
	EXPECT_EQ(0, cg_read_key(cg, "memory.events", "oom"));
	EXPECT_EQ(0, cg_read_key(cg, "memory.events", "oom_kill"));
	EXPECT_EQ(kills, vmstat_oom_kills());
	EXPECT_LT(0, cg_read_key(cg, "memory.events", "max"));
}

FIXTURE_SETUP(memcg)
{
	char ctl[256];

	LCHAN_T_NEED_DEV(&self->d, variant->kind);
	lchan_t_raise_memlock();
	if (geteuid())
		LCHAN_T_SETUP_SKIP("needs root to make a cgroup");
	if (lchan_t_read_sysfs(CG_ROOT "/cgroup.controllers", ctl, sizeof(ctl)))
		LCHAN_T_SETUP_SKIP("no cgroup2 at " CG_ROOT);
	if (!strstr(ctl, "memory"))
		LCHAN_T_SETUP_SKIP("no memory controller in cgroup2 (%s)", ctl);
	ASSERT_EQ(0, cg_write(CG_ROOT, "cgroup.subtree_control", "+memory"));
	snprintf(self->cg, sizeof(self->cg), CG_ROOT "/lchan-memcg-%d",
		 getpid());
	ASSERT_EQ(0, mkdir(self->cg, 0755));
}

FIXTURE_TEARDOWN(memcg)
{
	if (self->cg[0])
		rmdir(self->cg);
}

/* A pair of channels with big rings, both ends in this process. */
static int big_pair(struct lchan_ctx *sctx, struct lchan_ctx *cctx,
		    const char *host, struct lchan_chan *srv,
		    struct lchan_chan *cli)
{
	return lchan_t_pair(sctx, cctx, host, &big_rings, srv, cli, NULL,
			    NULL, NULL);
}

/*
 * Child: join @cg, open two contexts and a pair of channels with big rings
 * on them.  0, with what @cg held before the pair in @m0, or the step that
 * failed (1 to 3).
 */
static int memcg_join_pair(const char *cg, const char *host,
			   struct lchan_ctx *sctx, struct lchan_ctx *cctx,
			   struct lchan_chan *srv, struct lchan_chan *cli,
			   long long *m0)
{
	int ret;

	if (cg_write(cg, "cgroup.procs", "0"))
		return lchan_t_child_fail(1, "join %s: %s", cg, strerror(errno));
	if (lchan_ctx_open(sctx) || lchan_ctx_open(cctx))
		return lchan_t_child_fail(2, "ctx open");
	*m0 = cg_read_num(cg, "memory.current");
	ret = big_pair(sctx, cctx, host, srv, cli);
	if (ret)
		return lchan_t_child_fail(3, "pair: %s", strerror(-ret));
	return 0;
}

/*
 * Child: join @cg, measure one pair of channels (opened, then closed).
 * Exit 0, or the step that failed.
 */
static int child_charge(const char *cg, const char *host)
{
	struct lchan_ctx sctx, cctx;
	struct lchan_chan srv, cli;
	long long m0, m1, m2, ring;
	int ret;

	ret = memcg_join_pair(cg, host, &sctx, &cctx, &srv, &cli, &m0);
	if (ret)
		return ret;
	m1 = cg_read_num(cg, "memory.current");
	ring = cli.info.mmap_size;
	lchan_chan_close(&srv);
	lchan_chan_close(&cli);
	m2 = cg_read_num(cg, "memory.current");
	fprintf(stderr, "# memory.current: %lld before, %lld with two channels"
		" (rings of %lld bytes each), %lld after close\n",
		m0, m1, ring, m2);
	if (m0 < 0 || m1 - m0 < 2 * ring)
		return lchan_t_child_fail(4, "two rings of %lld bytes raised"
					  " memory.current by %lld only", ring,
					  m1 - m0);
	if (m2 - m0 >= 2 * ring) {
		cg_dump(cg);
		return lchan_t_child_fail(5, "closing left %lld bytes charged",
					  m2 - m0);
	}
	lchan_ctx_close(&sctx);
	lchan_ctx_close(&cctx);
	return 0;
}

/* @child in a process of its own (it joins the cgroup), which must pass. */
static void memcg_run_child(struct __test_metadata *_metadata,
			    FIXTURE_DATA(memcg) *self,
			    int (*child)(const char *cg, const char *host))
{
	pid_t pid = fork();

	ASSERT_LE(0, pid);
	if (!pid)
		_exit(child(self->cg, self->d.addr));
	EXPECT_EQ(0, lchan_t_wait_child(pid));
}

TEST_F_TIMEOUT(memcg, rings_charged_to_caller, 120)
{
	memcg_run_child(_metadata, self, child_charge);
}

#define MAX_PAIRS 24

/*
 * Child: join @cg, limited to what one pair charges plus @room bytes, and
 * open pairs until a call fails.  It must fail with ENOMEM, and closing
 * everything gives the memory back.
 */
static int child_limit(const char *cg, const char *host)
{
	static struct lchan_chan srv[MAX_PAIRS], cli[MAX_PAIRS];
	struct lchan_ctx sctx, cctx;
	long long m0, m1, pair, limit, ring;
	char val[32];
	int i, n, ret = 0;

	/* One pair first: what a pair charges, and the pages it touches. */
	ret = memcg_join_pair(cg, host, &sctx, &cctx, &srv[0], &cli[0], &m0);
	if (ret)
		return ret;
	m1 = cg_read_num(cg, "memory.current");
	pair = m1 - m0;
	ring = cli[0].info.mmap_size;
	if (pair < 2 * ring)
		return lchan_t_child_fail(4, "a pair charged %lld bytes", pair);
	/* Room for three more pairs, not four. */
	limit = m1 + 3 * pair + pair / 2;
	snprintf(val, sizeof(val), "%lld", limit);
	if (cg_write(cg, "memory.max", val))
		return lchan_t_child_fail(5, "memory.max: %s", strerror(errno));

	for (n = 1; n < MAX_PAIRS; n++) {
		ret = big_pair(&sctx, &cctx, host, &srv[n], &cli[n]);
		if (ret)
			break;
	}
	/*
	 * Whichever end of the pair met the limit, nothing of it may stay
	 * charged.  Lift the limit before this process reads anything: at
	 * the limit its own allocations (a cgroup file's read buffer) would
	 * wake the OOM killer, which is no part of what lchan does.
	 */
	if (cg_write(cg, "memory.max", "max"))
		return lchan_t_child_fail(9, "memory.max: %s", strerror(errno));
	fprintf(stderr, "# a pair charges %lld bytes; limit %lld: pair %d"
		" failed: %s; memory.current %lld\n", pair, limit, n + 1,
		strerror(-ret), cg_read_num(cg, "memory.current"));
	if (ret != -ENOMEM)
		return lchan_t_child_fail(6, "pair %d of %d: %s, not ENOMEM",
					  n + 1, MAX_PAIRS, strerror(-ret));
	if (n < 3)
		return lchan_t_child_fail(7, "only %d pairs fitted", n);

	for (i = 0; i < n; i++) {
		lchan_chan_close(&srv[i]);
		lchan_chan_close(&cli[i]);
	}
	lchan_ctx_close(&sctx);
	lchan_ctx_close(&cctx);
	return memcg_check_returned(cg, m0, ring, 8);
}

TEST_F_TIMEOUT(memcg, limit_gives_enomem_not_oom, 180)
{
	long long kills = vmstat_oom_kills();

	memcg_run_child(_metadata, self, child_limit);
	memcg_expect_limit_not_oom(_metadata, self->cg, kills);
}

struct memcg_establish {
	struct lchan_chan *chan;
	int ret;
};

static void *memcg_establish_thread(void *p)
{
	struct memcg_establish *e = p;

	e->ret = lchan_establish(e->chan, 10000);
	return NULL;
}

/*
 * Child: join @cg and connect (deferred) to its own listener, then limit
 * the cgroup to far less than a channel and accept.  The accept fails with
 * ENOMEM part-way through building its channel, the peer sees its connect
 * refused, and once everything is closed nothing stays charged: the
 * accepting side's failure path, made certain instead of left to which end
 * of a pair meets the limit first.
 */
static int child_accept_limit(const char *cg, const char *host)
{
	struct memcg_establish est = { 0 };
	struct lchan_opts copts = big_rings;
	struct lchan_ctx sctx, cctx;
	struct lchan_listener lst;
	struct lchan_chan srv, cli;
	struct pollfd pfd;
	long long m0, ring;
	char port[16], val[32];
	pthread_t thr;
	int ret, left;

	if (cg_write(cg, "cgroup.procs", "0"))
		return lchan_t_child_fail(1, "join %s: %s", cg, strerror(errno));
	if (lchan_ctx_open(&sctx) || lchan_ctx_open(&cctx))
		return lchan_t_child_fail(2, "ctx open");
	m0 = cg_read_num(cg, "memory.current");
	snprintf(port, sizeof(port), "%u", lchan_t_port());
	ret = lchan_listen(&sctx, host, port, 4, LCHAN_FD_NONBLOCK, &lst);
	if (ret)
		return lchan_t_child_fail(3, "listen: %s", strerror(-ret));
	copts.flags |= LCHAN_DEFER_ESTABLISH;
	ret = lchan_connect(&cctx, host, port, &copts, &cli);
	if (ret)
		return lchan_t_child_fail(4, "connect: %s", strerror(-ret));
	ring = cli.info.mmap_size;
	est.chan = &cli;
	if (pthread_create(&thr, NULL, memcg_establish_thread, &est))
		return lchan_t_child_fail(5, "pthread_create");
	/* Room for the accepting channel's object, not for its rings. */
	snprintf(val, sizeof(val), "%lld",
		 cg_read_num(cg, "memory.current") + ring / 2);
	if (cg_write(cg, "memory.max", val))
		return lchan_t_child_fail(6, "memory.max: %s", strerror(errno));

	pfd.fd = lst.fd;
	pfd.events = POLLIN;
	left = poll(&pfd, 1, 20000);
	ret = left == 1 ? lchan_accept(&lst, &big_rings, &srv) : -ETIMEDOUT;
	if (cg_write(cg, "memory.max", "max"))
		return lchan_t_child_fail(7, "memory.max: %s", strerror(errno));
	pthread_join(thr, NULL);
	fprintf(stderr, "# limit %s: accept: %s; the peer's establish: %s\n",
		val, strerror(-ret), strerror(-est.ret));
	if (ret != -ENOMEM)
		return lchan_t_child_fail(8, "accept at the limit: %s, not ENOMEM",
					  strerror(-ret));
	if (est.ret != -ECONNREFUSED && est.ret != -ECONNRESET)
		return lchan_t_child_fail(9, "peer of a failed accept: %s",
					  strerror(-est.ret));

	lchan_chan_close(&cli);
	lchan_listener_close(&lst);
	lchan_ctx_close(&sctx);
	lchan_ctx_close(&cctx);
	return memcg_check_returned(cg, m0, ring, 10);
}

TEST_F_TIMEOUT(memcg, accept_at_limit_refuses_peer, 120)
{
	long long kills = vmstat_oom_kills();

	memcg_run_child(_metadata, self, child_accept_limit);
	memcg_expect_limit_not_oom(_metadata, self->cg, kills);
}

/*
 * Grandchild, as nobody in the limited cgroup: open pairs until a call
 * fails.  Exit the number of pairs opened if that call failed with
 * ENOMEM, else 100 + the step.  Exiting closes everything.
 */
static int nobody_fill(const char *host)
{
	static struct lchan_chan srv[MAX_PAIRS], cli[MAX_PAIRS];
	struct lchan_ctx sctx, cctx;
	int n, ret = 0;

	if (lchan_t_become_nobody())
		return 101;
	if (!geteuid())
		return 102;
	if (lchan_ctx_open(&sctx) || lchan_ctx_open(&cctx))
		return 103;
	for (n = 0; n < MAX_PAIRS; n++) {
		ret = big_pair(&sctx, &cctx, host, &srv[n], &cli[n]);
		if (ret)
			break;
	}
	return ret == -ENOMEM ? n : 104;
}

/*
 * Child (root): join @cg, measure a pair, limit the cgroup to about three
 * and a half pairs more, and let an unprivileged grandchild fill it: its
 * pairs fail with ENOMEM at the limit like root's, and its exit gives
 * everything back.
 */
static int child_limit_nobody(const char *cg, const char *host)
{
	struct lchan_ctx sctx, cctx;
	struct lchan_chan srv, cli;
	long long m0, pair, ring;
	char val[32];
	int ret, code;
	pid_t pid;

	ret = memcg_join_pair(cg, host, &sctx, &cctx, &srv, &cli, &m0);
	if (ret)
		return ret;
	pair = cg_read_num(cg, "memory.current") - m0;
	ring = cli.info.mmap_size;
	lchan_chan_close(&srv);
	lchan_chan_close(&cli);
	lchan_ctx_close(&sctx);
	lchan_ctx_close(&cctx);
	if (pair < 2 * ring)
		return lchan_t_child_fail(4, "a pair charged %lld bytes", pair);
	m0 = cg_read_num(cg, "memory.current");
	snprintf(val, sizeof(val), "%lld", m0 + 3 * pair + pair / 2);
	if (cg_write(cg, "memory.max", val))
		return lchan_t_child_fail(5, "memory.max: %s", strerror(errno));

	pid = fork();
	if (pid < 0)
		return lchan_t_child_fail(6, "fork: %s", strerror(errno));
	if (!pid)
		_exit(nobody_fill(host));
	code = lchan_t_wait_child(pid);
	if (cg_write(cg, "memory.max", "max"))
		return lchan_t_child_fail(7, "memory.max: %s", strerror(errno));
	fprintf(stderr, "# a pair charges %lld bytes; limit %s: nobody opened"
		" %d pairs (exit %d)\n", pair, val, code < 100 ? code : -1,
		code);
	if (code >= 100)
		return lchan_t_child_fail(8, "nobody's pairs: exit %d (101"
					  " drop, 102 still root, 103 ctx, 104"
					  " not ENOMEM)", code);
	/* Four would be more than the limit holds. */
	if (code < 2 || code > 3)
		return lchan_t_child_fail(9, "%d pairs fitted in three and a"
					  " half", code);
	return memcg_check_returned(cg, m0, ring, 10);
}

/* An unprivileged user is held to its cgroup's limit as root is. */
TEST_F_TIMEOUT(memcg, unprivileged_limit_gives_enomem_not_oom, 180)
{
	long long kills = vmstat_oom_kills();

	memcg_run_child(_metadata, self, child_limit_nobody);
	memcg_expect_limit_not_oom(_metadata, self->cg, kills);
}

TEST_HARNESS_MAIN
