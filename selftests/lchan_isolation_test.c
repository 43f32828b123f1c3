// SPDX-License-Identifier: GPL-2.0
/*
 * Isolation: handles are per context, no kernel address reaches user
 * space, and an unprivileged user works within its memlock limit only.
 */
#include <grp.h>
#include <sys/ioctl.h>
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

	LCHAN_T_BODY();
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

	LCHAN_T_BODY();
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
	struct rlimit rl = { 1 << 20, 1 << 20 };
	struct lchan_t_ep srv = { .slot = 4096, .nrecv = 4, .nsend = 4 };
	struct lchan_t_ep cli = { .slot = 4096, .nrecv = 4, .nsend = 4 };
	struct lchan_mr mr;
	struct lchan_cqe cqe;
	struct lchan_sqe *sqe;
	void *big = aligned_alloc(4096, 4 << 20);

	if (!big || setrlimit(RLIMIT_MEMLOCK, &rl) || setgroups(0, NULL) ||
	    setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534))
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

	LCHAN_T_BODY();
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

TEST_HARNESS_MAIN
