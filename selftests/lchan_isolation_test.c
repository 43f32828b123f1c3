// SPDX-License-Identifier: GPL-2.0
/*
 * Isolation: handles are per context, no kernel address reaches user
 * space, an unprivileged user works within its memlock limit only, every
 * file of a context serves the process that opened it and no other, and
 * the ring mapping is shared, never executable, never a memory region.
 * The checks of the last two use raw ioctls and mmap, from uapi/lchan.h.
 */
#include <arpa/inet.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "lchan_test.h"

FIXTURE(iso) {
	struct lchan_t_dev d;
	struct lchan_t_ep srv, cli;
};

LCHAN_T_VARIANTS(iso);

FIXTURE_SETUP(iso)
{
	LCHAN_T_NEED_DEV(&self->d, variant->kind);
	lchan_t_raise_memlock();
	self->srv = (struct lchan_t_ep){ .slot = 4096, .nrecv = 4, .nsend = 4,
					 .access = LCHAN_ACCESS_ALL };
	self->cli = (struct lchan_t_ep){ .slot = 4096, .nrecv = 4, .nsend = 4,
					 .access = LCHAN_ACCESS_ALL };
	ASSERT_EQ(0, lchan_t_ep_pair(&self->srv, &self->cli, self->d.addr,
				     NULL));
}

FIXTURE_TEARDOWN(iso)
{
	lchan_t_ep_close(&self->cli);
	lchan_t_ep_close(&self->srv);
}

/* A value that looks like an x86-64 kernel address. */
static int kernelish(uint64_t v)
{
	return (v >> 47) == 0x1ffff && v != ~0ULL;
}

TEST_F_TIMEOUT(iso, handles_are_per_context, 60)
{
	struct lchan_mr extra[4];
	struct lchan_sqe *sqe;
	struct lchan_cqe cqe;
	int i;

	/* The server context owns more handles than the client's one. */
	for (i = 0; i < 4; i++)
		ASSERT_EQ(0, lchan_mr_reg(&self->srv.ctx, &self->srv.chan,
					  self->srv.buf, 4096,
					  LCHAN_ACCESS_LOCAL_WRITE, &extra[i]));
	for (i = 0; i < 4; i++) {
		/* Naming them from the client context finds nothing. */
		sqe = lchan_get_sqe(&self->cli.chan);
		lchan_prep_send(sqe, &self->cli.mr, self->srv.buf, 16, i);
		sqe->mr = extra[i].handle;
		ASSERT_LE(0, lchan_submit(&self->cli.chan));
		ASSERT_EQ(0, lchan_t_reap(&self->cli, &cqe, 5000));
		if (extra[i].handle == self->cli.mr.handle) {
			/* Its own handle of that number: the range is wrong. */
			EXPECT_EQ(LCHAN_CQE_BAD_RANGE, cqe.status);
		} else {
			EXPECT_EQ(LCHAN_CQE_BAD_MR, cqe.status);
		}
	}
	/* Nothing reached the server. */
	EXPECT_EQ(0, lchan_cq_ready(&self->srv.chan));
}

TEST_F_TIMEOUT(iso, no_kernel_address_in_rings_replies_or_sysfs, 60)
{
	struct lchan_chan_info info = { .size = sizeof(info) };
	struct lchan_cqe cqe;
	struct lchan_sqe *sqe;
	const uint64_t *w;
	char path[200], buf[256];
	size_t i;
	FILE *f;

	/* Some traffic and an error CQE so every ring part was written. */
	sqe = lchan_get_sqe(&self->cli.chan);
	lchan_prep_send(sqe, &self->cli.mr, self->cli.buf, 100, 1);
	sqe = lchan_get_sqe(&self->cli.chan);
	lchan_prep_send(sqe, &self->cli.mr, self->cli.buf, 100, 2);
	sqe->opcode = 200;
	ASSERT_LE(0, lchan_submit(&self->cli.chan));
	ASSERT_EQ(0, lchan_t_reap(&self->srv, &cqe, 5000));
	usleep(100000);

	w = self->cli.chan.map;
	for (i = 0; i < self->cli.chan.map_size / 8; i++) {
		EXPECT_FALSE(kernelish(w[i])) {
			TH_LOG("ring byte %zu: %#llx", i * 8,
			       (unsigned long long)w[i]);
		}
	}
	ASSERT_EQ(0, ioctl(self->cli.chan.fd, LCHAN_IOC_CHAN_INFO, &info));
	/* Its 64-bit fields (u32 pairs such as a 4 GiB - 1 limit are not). */
	EXPECT_FALSE(kernelish(info.mmap_size));
	EXPECT_FALSE(kernelish(info.features));
	w = (const uint64_t *)info.local.addr;
	EXPECT_FALSE(kernelish(w[0]) || kernelish(w[1]));
	w = (const uint64_t *)info.remote.addr;
	EXPECT_FALSE(kernelish(w[0]) || kernelish(w[1]));
	/* The MR reply carries a handle and an rkey, nothing else. */
	EXPECT_FALSE(kernelish(((uint64_t)self->cli.mr.rkey << 32) |
			       self->cli.mr.handle));

	snprintf(path, sizeof(path),
		 "grep -rh . /sys/kernel/lchan/channels/%u /sys/kernel/lchan/devices 2>/dev/null",
		 self->cli.chan.info.id);
	f = popen(path, "r");
	ASSERT_NE(NULL, f);
	while (fgets(buf, sizeof(buf), f)) {
		unsigned long long v = strtoull(buf, NULL, 0);

		EXPECT_FALSE(kernelish(v)) TH_LOG("sysfs value %s", buf);
		EXPECT_EQ(NULL, strstr(buf, "ffff8")) TH_LOG("%s", buf);
	}
	pclose(f);
}

/* Child as nobody with a 1 MiB memlock limit. */
static int unprivileged(const char *host)
{
	struct lchan_t_ep srv = { .slot = 4096, .nrecv = 4, .nsend = 4 };
	struct lchan_t_ep cli = { .slot = 4096, .nrecv = 4, .nsend = 4 };
	struct lchan_mr mr;
	struct lchan_cqe cqe;
	struct lchan_sqe *sqe;
	void *big = aligned_alloc(4096, 4 << 20);

	if (!big || lchan_t_become_nobody())
		return 1;
	if (!geteuid())
		return 2;
	/* /dev/lchan is open to everyone; the limit is what bounds them. */
	if (lchan_t_ep_pair(&srv, &cli, host, NULL))
		return 3;
	if (lchan_mr_reg(&cli.ctx, &cli.chan, big, 512 << 10,
			 LCHAN_ACCESS_LOCAL_WRITE, &mr))
		return 4;
	if (lchan_mr_reg(&cli.ctx, &cli.chan, (char *)big + (1 << 20), 2 << 20,
			 LCHAN_ACCESS_LOCAL_WRITE, &mr) != -ENOMEM)
		return 5;
	sqe = lchan_get_sqe(&cli.chan);
	lchan_t_fill(lchan_t_send_slot(&cli, 0), 3, 500);
	lchan_prep_send(sqe, &cli.mr, lchan_t_send_slot(&cli, 0), 500, 1);
	if (lchan_submit(&cli.chan) < 0 || lchan_t_reap(&srv, &cqe, 5000) ||
	    cqe.status ||
	    lchan_t_check(lchan_t_recv_slot(&srv, cqe.user_data), 3, 500) != -1)
		return 6;
	lchan_t_ep_close(&cli);
	lchan_t_ep_close(&srv);
	return 0;
}

TEST_F_TIMEOUT(iso, unprivileged_user_within_memlock, 60)
{
	int status;
	pid_t pid;

	if (geteuid())
		SKIP(return, "needs root to become nobody");
	pid = fork();
	ASSERT_GE(pid, 0);
	if (!pid)
		_exit(unprivileged(self->d.addr));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status)) TH_LOG("failed at step %d",
						 WEXITSTATUS(status));
}

/* ioctl() as its result, or -errno. */
static int iso_ioctl(int fd, unsigned long cmd, void *arg)
{
	int ret = ioctl(fd, cmd, arg);

	return ret < 0 ? -errno : ret;
}

/* mmap() of a channel's rings: 0, or -errno. */
static int iso_map(int fd, size_t size, int prot, int flags, void **out)
{
	void *p = mmap(NULL, size, prot, flags, fd, LCHAN_OFF_RINGS);

	if (p == MAP_FAILED)
		return -errno;
	if (out)
		*out = p;
	else
		munmap(p, size);
	return 0;
}

/* MR_REG of [addr, addr + len) on @chan_fd: 0 (handle in @handle), -errno. */
static int iso_mr_reg(int ctx_fd, int chan_fd, const void *addr, size_t len,
		      __u32 *handle)
{
	struct lchan_mr_reg_args r = {
		.size = sizeof(r),
		.addr = (uintptr_t)addr,
		.length = len,
		.access = LCHAN_ACCESS_LOCAL_WRITE,
		.chan_fd = chan_fd,
	};
	int ret = iso_ioctl(ctx_fd, LCHAN_IOC_MR_REG, &r);

	if (!ret && handle)
		*handle = r.handle;
	return ret;
}

static int iso_mr_dereg(int ctx_fd, __u32 handle)
{
	struct lchan_mr_dereg_args r = { .size = sizeof(r), .handle = handle };

	return iso_ioctl(ctx_fd, LCHAN_IOC_MR_DEREG, &r);
}

/*
 * A listener of @ctx_fd on @host (IPv4), any port: its fd (its port in
 * @port if not NULL), or -errno.
 */
static int iso_listen(int ctx_fd, const char *host, __u16 *port)
{
	struct lchan_listen_args req = { .size = sizeof(req) };
	int ret;

	req.addr.family = AF_INET;
	if (inet_pton(AF_INET, host, req.addr.addr) != 1)
		return -EINVAL;
	ret = iso_ioctl(ctx_fd, LCHAN_IOC_LISTEN, &req);
	if (ret >= 0 && port)
		*port = req.addr.port;
	return ret;
}

/* CONNECT of @ctx_fd to @host:@port (IPv4): a channel fd, or -errno. */
static int iso_connect(int ctx_fd, const char *host, __u16 port)
{
	struct lchan_connect_args req = {
		.size = sizeof(req), .timeout_ms = 5000,
	};

	req.dst.family = AF_INET;
	req.dst.port = port;
	if (inet_pton(AF_INET, host, req.dst.addr) != 1)
		return -EINVAL;
	return iso_ioctl(ctx_fd, LCHAN_IOC_CONNECT, &req);
}

#define ISO_WANT(step, got, want, what) do {				\
	int _g = (got);							\
									\
	if (_g != (want))						\
		return lchan_t_child_fail(step, "%s: %d, want %d",	\
					  what, _g, want);		\
} while (0)

/* The fds (and what they hold) of the owner that a forked child inherits. */
struct iso_fds {
	int ctx, chan, lst;
	size_t map_size;
	__u32 mr;		/* a handle of the owner's context */
	const char *host;	/* the listener's address */
	__u16 port;		/* and port */
};

/*
 * In a child of the owner: every call on the owner's channel, listener
 * and context fds that acts on them fails with EPERM, poll says EPOLLERR
 * alone; INFO, which tells about the module, still answers.
 */
static int iso_child(const struct iso_fds *f)
{
	struct lchan_chan_info info = { .size = sizeof(info) };
	struct lchan_enter_args enter = { .size = sizeof(enter) };
	struct lchan_establish_args est = { .size = sizeof(est) };
	struct lchan_ctx_setup_args setup = {
		.size = sizeof(setup), .cpu = -1, .attach_fd = -1,
	};
	struct lchan_info minfo = { .size = sizeof(minfo) };
	struct pollfd pfd[2] = {
		{ .fd = f->chan, .events = POLLIN | POLLOUT },
		{ .fd = f->lst, .events = POLLIN },
	};
	struct lchan_accept_args acc = { .size = sizeof(acc) };
	static char own[4096] __attribute__((aligned(4096)));

	ISO_WANT(1, iso_map(f->chan, f->map_size, PROT_READ | PROT_WRITE,
			    MAP_SHARED, NULL), -EPERM, "mmap");
	ISO_WANT(2, iso_map(f->chan, f->map_size, PROT_READ, MAP_SHARED, NULL),
		 -EPERM, "mmap read-only");
	ISO_WANT(3, iso_ioctl(f->chan, LCHAN_IOC_ENTER, &enter), -EPERM,
		 "ENTER");
	ISO_WANT(4, iso_ioctl(f->chan, LCHAN_IOC_ESTABLISH, &est), -EPERM,
		 "ESTABLISH");
	ISO_WANT(5, iso_ioctl(f->chan, LCHAN_IOC_CHAN_INFO, &info), -EPERM,
		 "CHAN_INFO");
	if (info.mmap_size || info.id || info.local_qpn)
		return lchan_t_child_fail(6, "CHAN_INFO wrote an answer");
	ISO_WANT(7, iso_ioctl(f->ctx, LCHAN_IOC_CTX_SETUP, &setup), -EPERM,
		 "CTX_SETUP");
	/* A bad argument is still EINVAL first, as for the owner. */
	enter.resv = 1;
	ISO_WANT(8, iso_ioctl(f->chan, LCHAN_IOC_ENTER, &enter), -EINVAL,
		 "ENTER with resv");
	setup.resv = 1;
	ISO_WANT(9, iso_ioctl(f->ctx, LCHAN_IOC_CTX_SETUP, &setup), -EINVAL,
		 "CTX_SETUP with resv");

	ISO_WANT(10, poll(pfd, 2, 1000), 2, "poll");
	ISO_WANT(11, pfd[0].revents, POLLERR, "channel revents");
	ISO_WANT(12, pfd[1].revents, POLLERR, "listener revents");

	ISO_WANT(13, iso_ioctl(f->ctx, LCHAN_IOC_INFO, &minfo), 0, "INFO");
	ISO_WANT(14, minfo.abi_version, LCHAN_ABI_VERSION, "abi_version");

	/* The context's other calls; one that got through would wait. */
	alarm(20);
	ISO_WANT(15, iso_mr_reg(f->ctx, f->chan, own, sizeof(own), NULL),
		 -EPERM, "MR_REG of the child's memory");
	ISO_WANT(16, iso_mr_dereg(f->ctx, f->mr), -EPERM,
		 "MR_DEREG of the owner's MR");
	ISO_WANT(17, iso_listen(f->ctx, f->host, NULL), -EPERM, "LISTEN");
	ISO_WANT(18, iso_connect(f->ctx, f->host, f->port), -EPERM,
		 "CONNECT to the owner's listener");
	ISO_WANT(19, iso_ioctl(f->lst, LCHAN_IOC_ACCEPT, &acc), -EPERM,
		 "ACCEPT on the owner's listener");
	alarm(0);
	return 0;
}

/* One SEND from cli to srv, checked at the receiver. */
static void iso_send_one(struct __test_metadata *_metadata,
			 FIXTURE_DATA(iso) *self, unsigned n)
{
	struct lchan_sqe *sqe;
	struct lchan_cqe cqe;

	sqe = lchan_get_sqe(&self->cli.chan);
	ASSERT_TRUE(sqe != NULL);
	lchan_t_fill(lchan_t_send_slot(&self->cli, 0), n, 300);
	lchan_prep_send(sqe, &self->cli.mr, lchan_t_send_slot(&self->cli, 0),
			300, n);
	ASSERT_LE(0, lchan_submit(&self->cli.chan));
	ASSERT_EQ(0, lchan_t_reap(&self->srv, &cqe, 10000));
	ASSERT_EQ(LCHAN_CQE_OK, cqe.status);
	EXPECT_EQ(-1, lchan_t_check(lchan_t_recv_slot(&self->srv,
						      cqe.user_data), n, 300));
	ASSERT_EQ(0, lchan_t_reap(&self->cli, &cqe, 10000));
	EXPECT_EQ(LCHAN_CQE_OK, cqe.status);
}

TEST_F_TIMEOUT(iso, forked_child_gets_eperm_everywhere, 60)
{
	struct lchan_enter_args enter = { .size = sizeof(enter) };
	struct lchan_establish_args est = { .size = sizeof(est) };
	struct lchan_chan_info info = { .size = sizeof(info) };
	struct iso_fds f = {
		.ctx = self->cli.ctx.fd,
		.chan = self->cli.chan.fd,
		.map_size = self->cli.chan.map_size,
		.mr = self->cli.mr.handle,
		.host = self->d.addr,
	};
	struct pollfd pfd;
	void *map = NULL;
	pid_t pid;

	f.lst = iso_listen(self->srv.ctx.fd, self->d.addr, &f.port);
	ASSERT_LE(0, f.lst) TH_LOG("LISTEN: %s", strerror(-f.lst));
	pid = fork();
	ASSERT_GE(pid, 0);
	if (!pid)
		_exit(iso_child(&f));
	EXPECT_EQ(0, lchan_t_wait_child(pid));

	/* The owner goes on as before, through the same fds. */
	pfd = (struct pollfd){ .fd = f.chan, .events = POLLIN | POLLOUT };
	ASSERT_EQ(1, poll(&pfd, 1, 1000));
	EXPECT_EQ(POLLOUT, pfd.revents);
	pfd = (struct pollfd){ .fd = f.lst, .events = POLLIN };
	EXPECT_EQ(0, poll(&pfd, 1, 0));
	EXPECT_EQ(0, iso_ioctl(f.chan, LCHAN_IOC_ENTER, &enter));
	EXPECT_EQ(-EISCONN, iso_ioctl(f.chan, LCHAN_IOC_ESTABLISH, &est));
	ASSERT_EQ(0, iso_ioctl(f.chan, LCHAN_IOC_CHAN_INFO, &info));
	EXPECT_EQ(self->cli.chan.info.id, info.id);
	ASSERT_EQ(0, iso_map(f.chan, f.map_size, PROT_READ | PROT_WRITE,
			     MAP_SHARED, &map));
	EXPECT_EQ(0, memcmp(map, self->cli.chan.map, 64));
	munmap(map, f.map_size);
	iso_send_one(_metadata, self, 7);
	close(f.lst);
}

/* In a child: its own context may not share the owner's poller thread. */
static int iso_child_attach(const struct lchan_ctx_setup_args *setup)
{
	int cctx = open(LCHAN_DEVICE_PATH, O_RDWR | O_CLOEXEC);

	if (cctx < 0)
		return lchan_t_child_fail(1, "open: %s", strerror(errno));
	ISO_WANT(2, iso_ioctl(cctx, LCHAN_IOC_CTX_SETUP, (void *)setup),
		 -EPERM, "CTX_SETUP attach to the owner's poller");
	close(cctx);
	return 0;
}

/* A context lends its poller settings to its owner's contexts only. */
TEST_F_TIMEOUT(iso, child_cannot_share_owner_poller, 60)
{
	struct lchan_ctx_setup_args setup = {
		.size = sizeof(setup), .flags = LCHAN_CTX_POLLER, .cpu = -1,
		.attach_fd = -1,
	};
	int pctx, mine;
	pid_t pid;

	pctx = open(LCHAN_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, pctx);
	ASSERT_EQ(0, iso_ioctl(pctx, LCHAN_IOC_CTX_SETUP, &setup));
	setup.attach_fd = pctx;
	pid = fork();
	ASSERT_GE(pid, 0);
	if (!pid)
		_exit(iso_child_attach(&setup));
	EXPECT_EQ(0, lchan_t_wait_child(pid));
	/* The same call from the owner shares the thread. */
	mine = open(LCHAN_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, mine);
	EXPECT_EQ(0, iso_ioctl(mine, LCHAN_IOC_CTX_SETUP, &setup));
	close(mine);
	close(pctx);
}

/*
 * Child as nobody: poller contexts naming every CPU, sharing, and a pair
 * whose channels the pool serves.  No thread is made or moved, and the
 * pool's parameters cannot be written.  Exit 0 or the step that failed.
 */
static int iso_unprivileged_poller(const char *host, int threads,
				   const char *cpus)
{
	struct lchan_t_ep srv = { .slot = 4096, .nrecv = 4, .nsend = 4 };
	struct lchan_t_ep cli = { .slot = 4096, .nrecv = 4, .nsend = 4 };
	long cpu, ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	struct lchan_ctx ctx[4];
	pid_t pids[32];
	char buf[256];
	int i, n;

	if (lchan_t_become_nobody())
		return lchan_t_child_fail(1, "become nobody");
	for (cpu = -1; cpu < ncpu && cpu < 3; cpu++) {
		i = (int)cpu + 1;
		if (lchan_ctx_open(&ctx[i]) ||
		    lchan_ctx_setup_poller(&ctx[i], 600000, (int)cpu,
					   i ? &ctx[0] : NULL))
			return lchan_t_child_fail(2, "poller ctx, cpu %ld", cpu);
	}
	if (lchan_ctx_open(&srv.ctx) || lchan_ctx_open(&cli.ctx) ||
	    lchan_ctx_setup_poller(&cli.ctx, 0, ncpu - 1, NULL) ||
	    lchan_t_pair(&srv.ctx, &cli.ctx, host, NULL, &srv.chan, &cli.chan,
			 lchan_t_ep_prepare, &srv, &cli))
		return lchan_t_child_fail(3, "poller pair");
	if (!(cli.chan.info.chan_flags & LCHAN_CHAN_POLLER))
		return lchan_t_child_fail(4, "not in poller mode");
	n = lchan_t_poller_pids(pids, 32);
	if (n != threads)
		return lchan_t_child_fail(5, "%d poller threads, %d before",
					  n, threads);
	for (i = 0; i < n && i < 32; i++)
		if (lchan_t_task_cpus(pids[i], buf, sizeof(buf)) ||
		    strcmp(buf, cpus))
			return lchan_t_child_fail(6, "thread %d on %s, not %s",
						  pids[i], buf, cpus);
	if (lchan_t_set_param("pollers", "4") != -EACCES ||
	    lchan_t_set_param("poller_cpus", "0") != -EACCES ||
	    lchan_t_set_param("poller_assign", "device") != -EACCES)
		return lchan_t_child_fail(7, "module parameter written");
	lchan_t_ep_close(&cli);
	lchan_t_ep_close(&srv);
	return 0;
}

/* Poller mode uses the administrator's threads; a user makes or pins none. */
TEST_F_TIMEOUT(iso, unprivileged_cannot_make_or_pin_pollers, 60)
{
	pid_t pids[32];
	char cpus[256];
	int n;
	pid_t pid;

	if (geteuid())
		SKIP(return, "needs root to become nobody");
	n = lchan_t_poller_pids(pids, 32);
	ASSERT_LE(1, n);
	ASSERT_EQ(0, lchan_t_task_cpus(pids[0], cpus, sizeof(cpus)));
	pid = fork();
	ASSERT_GE(pid, 0);
	if (!pid)
		_exit(iso_unprivileged_poller(self->d.addr, n, cpus));
	EXPECT_EQ(0, lchan_t_wait_child(pid));
}

TEST_F_TIMEOUT(iso, ring_map_private_refused, 60)
{
	EXPECT_EQ(-EINVAL, iso_map(self->cli.chan.fd, self->cli.chan.map_size,
				   PROT_READ | PROT_WRITE, MAP_PRIVATE, NULL));
	EXPECT_EQ(-EINVAL, iso_map(self->cli.chan.fd, self->cli.chan.map_size,
				   PROT_READ, MAP_PRIVATE, NULL));
	/* The same mapping shared is fine. */
	EXPECT_EQ(0, iso_map(self->cli.chan.fd, self->cli.chan.map_size,
			     PROT_READ | PROT_WRITE, MAP_SHARED, NULL));
}

TEST_F_TIMEOUT(iso, ring_prot_exec_refused, 60)
{
	size_t size = self->cli.chan.map_size;
	int fd = self->cli.chan.fd;
	void *map = NULL;

	EXPECT_EQ(-EACCES, iso_map(fd, size, PROT_READ | PROT_EXEC,
				   MAP_SHARED, NULL));
	EXPECT_EQ(-EACCES, iso_map(fd, size, PROT_READ | PROT_WRITE |
				   PROT_EXEC, MAP_SHARED, NULL));
	EXPECT_EQ(-EACCES, iso_map(fd, size, PROT_EXEC, MAP_SHARED, NULL));

	/* Nor later: mprotect cannot add what the mapping may never have. */
	ASSERT_EQ(0, iso_map(fd, size, PROT_READ | PROT_WRITE, MAP_SHARED,
			     &map));
	errno = 0;
	EXPECT_EQ(-1, mprotect(map, size, PROT_READ | PROT_EXEC));
	EXPECT_EQ(EACCES, errno);
	errno = 0;
	EXPECT_EQ(-1, mprotect(map, getpagesize(), PROT_EXEC));
	EXPECT_EQ(EACCES, errno);
	/* Taking rights away still works, and so does giving them back. */
	EXPECT_EQ(0, mprotect(map, size, PROT_READ));
	EXPECT_EQ(0, mprotect(map, size, PROT_READ | PROT_WRITE));
	munmap(map, size);
	/* The library's own mapping was never touched. */
	iso_send_one(_metadata, self, 8);
}

TEST_F_TIMEOUT(iso, mr_over_ring_refused, 60)
{
	size_t size = self->cli.chan.map_size;
	long page = getpagesize();
	int ctx = self->cli.ctx.fd, chan = self->cli.chan.fd;
	char *area, *ring;
	__u32 h;

	/* The library's mapping, whole and in part. */
	EXPECT_EQ(-EINVAL, iso_mr_reg(ctx, chan, self->cli.chan.map, size,
				      NULL));
	EXPECT_EQ(-EINVAL, iso_mr_reg(ctx, chan,
				      (char *)self->cli.chan.map + size - 64,
				      64, NULL));

	/* Anonymous memory right before a second ring mapping. */
	area = mmap(NULL, 2 * page + size, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_TRUE(area != MAP_FAILED);
	memset(area, 1, 2 * page);
	ring = mmap(area + 2 * page, size, PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_FIXED, chan, LCHAN_OFF_RINGS);
	ASSERT_TRUE(ring == area + 2 * page) TH_LOG("mmap: %s",
						    strerror(errno));
	/* A range that only reaches into the ring is refused... */
	EXPECT_EQ(-EINVAL, iso_mr_reg(ctx, chan, area + page, 2 * page, NULL));
	EXPECT_EQ(-EINVAL, iso_mr_reg(ctx, chan, area + 2 * page - 1, 2,
				      NULL));
	/* ...the anonymous part alone is not. */
	ASSERT_EQ(0, iso_mr_reg(ctx, chan, area, 2 * page, &h));
	EXPECT_EQ(0, iso_mr_dereg(ctx, h));
	munmap(area, 2 * page + size);
	/* The memory is ordinary again once the ring is unmapped. */
	area = mmap(NULL, page, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_TRUE(area != MAP_FAILED);
	memset(area, 1, page);
	ASSERT_EQ(0, iso_mr_reg(ctx, chan, area, page, &h));
	EXPECT_EQ(0, iso_mr_dereg(ctx, h));
	munmap(area, page);
}

/*
 * The page at @at: anonymous memory, then a second mapping of the ring,
 * and again, each mapping replacing the last (MAP_FIXED) until @stop.
 */
struct iso_flip {
	char *at;
	size_t size;
	int chan_fd;
	int stop;
	int err;
	unsigned long flips;
};

static void *iso_flip_thread(void *arg)
{
	struct iso_flip *f = arg;

	while (!__atomic_load_n(&f->stop, __ATOMIC_ACQUIRE)) {
		if (mmap(f->at, f->size, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1,
			 0) == MAP_FAILED ||
		    mmap(f->at, f->size, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_FIXED, f->chan_fd,
			 LCHAN_OFF_RINGS) == MAP_FAILED) {
			f->err = errno;
			break;
		}
		f->flips++;
	}
	return NULL;
}

/*
 * The check against registering over a ring and the device's pin are two
 * steps: the ring may be mapped at the address in between.  Every
 * registration that succeeds must have pinned anonymous memory: its page
 * goes to the peer, where the ring's sq ring_entries word, which is never
 * zero, would show up; anonymous memory reads as zeroes.
 */
TEST_F_TIMEOUT(iso, mr_never_pins_a_ring_mapped_meanwhile, 120)
{
	size_t size = self->cli.chan.map_size, page = getpagesize();
	unsigned off = self->cli.chan.info.sq_off.ring_entries;
	unsigned i, n = lchan_t_count(3000), over = 0, pinned = 0;
	unsigned refused_check = 0, refused_pin = 0;
	struct iso_flip f = { .size = size, .chan_fd = self->cli.chan.fd };
	int ctx = self->cli.ctx.fd;
	pthread_t thr;

	ASSERT_LT(off + 4, page);
	f.at = mmap(NULL, size, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_TRUE(f.at != MAP_FAILED);
	ASSERT_EQ(0, pthread_create(&thr, NULL, iso_flip_thread, &f));
	for (i = 0; i < n; i++) {
		struct lchan_mr mr = { .addr = f.at, .length = page };
		struct lchan_sqe *sqe;
		struct lchan_cqe cqe;
		uint32_t word;
		int ret;

		ret = iso_mr_reg(ctx, self->cli.chan.fd, f.at, page,
				 &mr.handle);
		if (ret == -EINVAL) {
			refused_check++;
			continue;
		}
		if (ret == -EFAULT) {
			refused_pin++;
			continue;
		}
		ASSERT_EQ(0, ret);
		sqe = lchan_get_sqe(&self->cli.chan);
		ASSERT_TRUE(sqe != NULL);
		lchan_prep_send(sqe, &mr, f.at, page, i);
		ASSERT_LE(0, lchan_submit(&self->cli.chan));
		ASSERT_EQ(0, lchan_t_reap(&self->srv, &cqe, 10000));
		ASSERT_EQ(LCHAN_CQE_OK, cqe.status);
		memcpy(&word, lchan_t_recv_slot(&self->srv, cqe.user_data) + off,
		       sizeof(word));
		if (word)
			pinned++;
		else
			over++;
		ASSERT_EQ(0, lchan_t_post_recv(&self->srv, cqe.user_data));
		ASSERT_LE(0, lchan_submit(&self->srv.chan));
		ASSERT_EQ(0, lchan_t_reap(&self->cli, &cqe, 10000));
		ASSERT_EQ(LCHAN_CQE_OK, cqe.status);
		ASSERT_EQ(0, iso_mr_dereg(ctx, mr.handle));
	}
	__atomic_store_n(&f.stop, 1, __ATOMIC_RELEASE);
	pthread_join(thr, NULL);
	munmap(f.at, size);
	EXPECT_EQ(0, f.err) TH_LOG("remapping: %s", strerror(f.err));
	EXPECT_EQ(0, pinned) TH_LOG("%u registrations pinned ring pages",
				    pinned);
	TH_LOG("%u registrations: %u over anonymous memory, %u refused at the "
	       "check, %u by the pin; %lu remappings", n, over, refused_check,
	       refused_pin, f.flips);
}

/*
 * A debugger reads and writes the ring mapping (ptrace, /proc/PID/mem):
 * the pages are no ordinary user pages, so the kernel goes through the
 * mapping's own access method.  It must find the right ring page also in
 * a mapping whose first page was unmapped.
 */
TEST_F_TIMEOUT(iso, ring_open_to_a_debugger, 60)
{
	const struct lchan_chan *c = &self->cli.chan;
	size_t page = getpagesize(), size = c->map_size;
	char *map = c->map, *again = NULL;
	unsigned off = c->info.sq_off.ring_entries, word = 0;
	/* A slot beyond the tail, past the first page: never published. */
	struct lchan_sqe *slot = &c->sq.sqes[(c->sq.tail + 1 +
					      page / sizeof(*slot)) &
					     c->sq.mask];
	size_t at = (char *)&slot->user_data - map;
	uint64_t mark = 0x6c6368616e2d6462ULL, back = 0;
	int fd = open("/proc/self/mem", O_RDWR | O_CLOEXEC);

	ASSERT_LE(0, fd) TH_LOG("/proc/self/mem: %s", strerror(errno));
	ASSERT_LE(page, at);
	ASSERT_LT(at + sizeof(mark), size);
	EXPECT_EQ((ssize_t)sizeof(word),
		  pread(fd, &word, sizeof(word), (off_t)(uintptr_t)(map + off)))
		TH_LOG("read: %s", strerror(errno));
	EXPECT_EQ(c->sq.entries, word);
	EXPECT_EQ((ssize_t)sizeof(mark),
		  pwrite(fd, &mark, sizeof(mark), (off_t)(uintptr_t)(map + at)))
		TH_LOG("write: %s", strerror(errno));
	memcpy(&back, &slot->user_data, sizeof(back));
	EXPECT_EQ(mark, back);

	/* A second mapping without its first page: the rest is where it was. */
	ASSERT_EQ(0, iso_map(c->fd, size, PROT_READ | PROT_WRITE, MAP_SHARED,
			     (void **)&again));
	ASSERT_EQ(0, munmap(again, page));
	back = 0;
	EXPECT_EQ((ssize_t)sizeof(back),
		  pread(fd, &back, sizeof(back), (off_t)(uintptr_t)(again + at)))
		TH_LOG("read: %s", strerror(errno));
	EXPECT_EQ(mark, back);
	munmap(again + page, size - page);
	close(fd);
	/* The channel works as before. */
	iso_send_one(_metadata, self, 9);
}

/*
 * A debugger's access that runs past the end of a ring mapping goes on in
 * the next mapping, never in ring bytes that this mapping does not map:
 * here the ring mapped without its last page, an anonymous page in its
 * place, and one read and one write of 128 bytes across the boundary.
 */
TEST_F_TIMEOUT(iso, ring_debugger_access_ends_at_the_mapping, 60)
{
	const struct lchan_chan *c = &self->cli.chan;
	size_t page = getpagesize(), size = c->map_size, shown;
	char *again = NULL, *next, *edge;
	unsigned char buf[128], ring_after[64], want[64];
	int fd = open("/proc/self/mem", O_RDWR | O_CLOEXEC);

	ASSERT_LE(0, fd) TH_LOG("/proc/self/mem: %s", strerror(errno));
	ASSERT_EQ(0, size % page);
	ASSERT_LE(2 * page, size);
	ASSERT_EQ(0, iso_map(c->fd, size, PROT_READ | PROT_WRITE, MAP_SHARED,
			     (void **)&again));
	shown = size - page;
	ASSERT_EQ(0, munmap(again + shown, page));
	next = mmap(again + shown, page, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	ASSERT_EQ(again + shown, next);
	memset(next, 0xa5, page);
	/* The ring bytes just past what the shortened mapping shows. */
	memcpy(ring_after, (char *)c->map + shown, sizeof(ring_after));
	edge = again + shown - 64;

	memset(buf, 0, sizeof(buf));
	EXPECT_EQ((ssize_t)sizeof(buf),
		  pread(fd, buf, sizeof(buf), (off_t)(uintptr_t)edge))
		TH_LOG("read: %s", strerror(errno));
	EXPECT_EQ(0, memcmp(buf, (char *)c->map + shown - 64, 64));
	memset(want, 0xa5, sizeof(want));
	EXPECT_EQ(0, memcmp(buf + 64, want, 64))
		TH_LOG("the read's second half is not the next mapping's");

	/* The ring's own bytes back where they were; the rest goes next. */
	memset(buf + 64, 0x5a, 64);
	EXPECT_EQ((ssize_t)sizeof(buf),
		  pwrite(fd, buf, sizeof(buf), (off_t)(uintptr_t)edge))
		TH_LOG("write: %s", strerror(errno));
	memset(want, 0x5a, sizeof(want));
	EXPECT_EQ(0, memcmp(next, want, 64))
		TH_LOG("the write's second half did not reach the next mapping");
	EXPECT_EQ(0, memcmp((char *)c->map + shown, ring_after,
			    sizeof(ring_after)))
		TH_LOG("the write landed in ring bytes past the mapping");
	munmap(next, page);
	munmap(again, shown);
	close(fd);
	iso_send_one(_metadata, self, 10);
}

TEST_HARNESS_MAIN
