// SPDX-License-Identifier: GPL-2.0
/*
 * Memory registration: access rights, bad ranges, handles per context,
 * the owner's mm, RLIMIT_MEMLOCK, and pinned pages given back on dereg,
 * on close and on exit.
 */
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <linux/capability.h>

#include "kselftest_harness.h"
#include "lchan_test.h"

#define LCHAN_SYSFS	"/sys/kernel/lchan"
#define MR_REMOTE	(LCHAN_ACCESS_REMOTE_WRITE | \
			 LCHAN_ACCESS_REMOTE_READ | \
			 LCHAN_ACCESS_REMOTE_ATOMIC)
#define MIB		(1UL << 20)
#define KIB		(1UL << 10)

/*
 * What pinning a range the caller may not write or that is not mapped
 * returns.  rxe pins through ib_umem_get() (pin_user_pages_fast), siw
 * through siw_umem_get() (pin_user_pages); both ask for FOLL_WRITE, adding
 * FOLL_FORCE only for an MR without write access, and GUP answers a
 * missing VMA or a write to a !VM_WRITE VMA without FOLL_FORCE with
 * EFAULT.  So the two variants agree.
 */
#define MR_GUP_ERRNO	EFAULT

FIXTURE(mr) {
	struct lchan_t_dev d;
	struct lchan_ctx ctx;		/* registers on cli */
	struct lchan_ctx sctx;		/* owns srv */
	struct lchan_chan cli, srv;
	long page;
};

LCHAN_T_VARIANTS(mr);

FIXTURE_SETUP(mr)
{
	/* Teardown also runs after a SKIP: nothing may look open. */
	self->ctx.fd = -1;
	self->sctx.fd = -1;
	self->cli.fd = -1;
	self->srv.fd = -1;
	self->page = sysconf(_SC_PAGESIZE);
	LCHAN_T_NEED_DEV(&self->d, variant->kind);
	if (!lchan_t_module_loaded())
		LCHAN_T_SETUP_SKIP("lchan is not loaded");
	/* An MR lives on a channel's device: it needs a channel. */
	ASSERT_EQ(0, lchan_ctx_open(&self->ctx));
	ASSERT_EQ(0, lchan_ctx_open(&self->sctx));
	ASSERT_EQ(0, lchan_t_pair(&self->sctx, &self->ctx, self->d.addr, NULL,
				  &self->srv, &self->cli, NULL, NULL, NULL));
}

FIXTURE_TEARDOWN(mr)
{
	lchan_chan_close(&self->cli);
	lchan_chan_close(&self->srv);
	lchan_ctx_close(&self->sctx);
	lchan_ctx_close(&self->ctx);
}

/* LCHAN_IOC_MR_REG as 0 or -errno; the answer lands in @out if given. */
static int mr_reg(int ctx_fd, int chan_fd, __u64 addr, __u64 len,
		  __u32 access, struct lchan_mr_reg_args *out)
{
	struct lchan_mr_reg_args req = {
		.size = sizeof(req),
		.addr = addr,
		.length = len,
		.access = access,
		.chan_fd = chan_fd,
	};
	int ret = ioctl(ctx_fd, LCHAN_IOC_MR_REG, &req) ? -errno : 0;

	if (out)
		*out = req;
	return ret;
}

static int mr_dereg(int ctx_fd, __u32 handle)
{
	struct lchan_mr_dereg_args req = {
		.size = sizeof(req),
		.handle = handle,
	};

	return ioctl(ctx_fd, LCHAN_IOC_MR_DEREG, &req) ? -errno : 0;
}

static __u64 mr_addr(const void *p)
{
	return (uintptr_t)p;
}

static char *mr_map(size_t len, int prot)
{
	char *p = mmap(NULL, len, prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/* mr_map() read-write, or the test fails. */
static char *mr_map_rw(struct __test_metadata *_metadata, size_t len)
{
	char *mem = mr_map(len, PROT_READ | PROT_WRITE);

	ASSERT_TRUE(mem != NULL);
	return mem;
}

/* A page mapped and registered in ctx on cli for local writes, as @r. */
static char *mr_reg_page(struct __test_metadata *_metadata,
			 FIXTURE_DATA(mr) *self, struct lchan_mr_reg_args *r)
{
	char *mem = mr_map_rw(_metadata, self->page);

	ASSERT_EQ(0, mr_reg(self->ctx.fd, self->cli.fd, mr_addr(mem),
			    self->page, LCHAN_ACCESS_LOCAL_WRITE, r));
	return mem;
}

/* VmPin of this process in kB (mm->pinned_vm), or -1. */
static long vm_pin_kb(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long kb = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmPin: %ld kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

/* MR release ends in lchan's workqueue: wait for VmPin to reach @kb. */
static int vm_pin_wait(long kb, double secs)
{
	double end = lchan_t_now() + secs;

	do {
		if (vm_pin_kb() == kb)
			return 0;
		usleep(10000);
	} while (lchan_t_now() < end);
	return -ETIMEDOUT;
}

static int dev_channels(const struct lchan_t_dev *d)
{
	char path[160], buf[32];

	snprintf(path, sizeof(path), LCHAN_SYSFS "/devices/%s/channels",
		 d->dev);
	if (lchan_t_read_sysfs(path, buf, sizeof(buf)))
		return -1;
	return atoi(buf);
}

static int dev_channels_wait(const struct lchan_t_dev *d, int want,
			     double secs)
{
	double end = lchan_t_now() + secs;

	do {
		if (dev_channels(d) == want)
			return 0;
		usleep(20000);
	} while (lchan_t_now() < end);
	return -ETIMEDOUT;
}

TEST_F_TIMEOUT(mr, access_combinations, 60)
{
	static const __u32 acc[] = {
		LCHAN_ACCESS_LOCAL_WRITE,
		LCHAN_ACCESS_LOCAL_WRITE | LCHAN_ACCESS_REMOTE_WRITE,
		LCHAN_ACCESS_REMOTE_READ,
		LCHAN_ACCESS_ALL,
		0,	/* send-only */
	};
	enum { N = ARRAY_SIZE(acc) };
	long page = self->page;
	struct lchan_mr_reg_args r[N];
	struct {
		const char *what;
		size_t off, len;
	} bufs[] = {
		{ "page-aligned", 0, 2 * page },
		/* Starts mid-page and ends mid-page, three pages in all. */
		{ "unaligned", 100, 2 * page + 50 },
	};
	unsigned int b, i, j;
	char *mem;

	mem = mr_map_rw(_metadata, 4 * page);
	for (b = 0; b < 2; b++) {
		/* All at once, so that handles and rkeys must differ. */
		for (i = 0; i < N; i++) {
			ASSERT_EQ(0, mr_reg(self->ctx.fd, self->cli.fd,
					    mr_addr(mem + bufs[b].off),
					    bufs[b].len, acc[i], &r[i]))
				TH_LOG("%s, access %#x", bufs[b].what, acc[i]);
			EXPECT_NE(0, r[i].handle);
			/* An rkey only when a peer may use it. */
			if (acc[i] & MR_REMOTE) {
				EXPECT_NE(0, r[i].rkey)
					TH_LOG("%s, access %#x",
					       bufs[b].what, acc[i]);
			} else {
				EXPECT_EQ(0, r[i].rkey)
					TH_LOG("%s, access %#x",
					       bufs[b].what, acc[i]);
			}
		}
		for (i = 0; i < N; i++) {
			for (j = i + 1; j < N; j++) {
				EXPECT_NE(r[i].handle, r[j].handle);
				/* Braced: EXPECT_*() is two statements. */
				if (r[i].rkey && r[j].rkey) {
					EXPECT_NE(r[i].rkey, r[j].rkey);
				}
			}
		}
		for (i = 0; i < N; i++) {
			EXPECT_EQ(0, mr_dereg(self->ctx.fd, r[i].handle))
				TH_LOG("%s, access %#x", bufs[b].what, acc[i]);
		}
	}
	munmap(mem, 4 * page);
}

TEST_F_TIMEOUT(mr, access_rules, 60)
{
	static const __u32 bad[] = {
		/* Remote write and atomics need local write (IB spec). */
		LCHAN_ACCESS_REMOTE_WRITE,
		LCHAN_ACCESS_REMOTE_WRITE | LCHAN_ACCESS_REMOTE_READ,
		LCHAN_ACCESS_REMOTE_ATOMIC,
		LCHAN_ACCESS_REMOTE_ATOMIC | LCHAN_ACCESS_REMOTE_READ,
		/* Bits nobody defined. */
		1U << 4,
		LCHAN_ACCESS_ALL | 1U << 4,
		1U << 31,
	};
	unsigned int i;
	char *mem;

	mem = mr_map_rw(_metadata, self->page);
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		EXPECT_EQ(-EINVAL, mr_reg(self->ctx.fd, self->cli.fd,
					  mr_addr(mem), self->page, bad[i],
					  NULL))
			TH_LOG("access %#x", bad[i]);
	}
	munmap(mem, self->page);
}

TEST_F_TIMEOUT(mr, bad_ranges, 60)
{
	const __u32 lw = LCHAN_ACCESS_LOCAL_WRITE;
	__u64 page = self->page;
	int ctx = self->ctx.fd, chan = self->cli.fd;
	char *mem;

	mem = mr_map_rw(_metadata, page);
	EXPECT_EQ(-EINVAL, mr_reg(ctx, chan, mr_addr(mem), 0, lw, NULL));
	EXPECT_EQ(-EINVAL, mr_reg(ctx, chan, 0, 0, 0, NULL));
	/* addr + length wraps around. */
	EXPECT_EQ(-EINVAL, mr_reg(ctx, chan, ~0ULL - page + 1, 2 * page, lw,
				  NULL));
	EXPECT_EQ(-EINVAL, mr_reg(ctx, chan, mr_addr(mem), ~0ULL, lw, NULL));
	EXPECT_EQ(-EINVAL, mr_reg(ctx, chan, mr_addr(mem), -mr_addr(mem), lw,
				  NULL));
	/* No wrap, but above any user address space. */
	EXPECT_EQ(-EINVAL, mr_reg(ctx, chan, 1ULL << 62, page, lw, NULL));
	munmap(mem, page);
}

TEST_F_TIMEOUT(mr, unmapped_range, 60)
{
	long page = self->page;
	long pin0;
	char *mem;

	/* A hole with mappings on both sides: nothing can grow into it. */
	mem = mr_map_rw(_metadata, 3 * page);
	memset(mem, 1, 3 * page);
	ASSERT_EQ(0, munmap(mem + page, page));
	pin0 = vm_pin_kb();
	ASSERT_GE(pin0, 0);

	EXPECT_EQ(-MR_GUP_ERRNO,
		  mr_reg(self->ctx.fd, self->cli.fd, mr_addr(mem + page), page,
			 LCHAN_ACCESS_LOCAL_WRITE, NULL));
	/* FOLL_FORCE of a send-only MR does not invent memory either. */
	EXPECT_EQ(-MR_GUP_ERRNO,
		  mr_reg(self->ctx.fd, self->cli.fd, mr_addr(mem + page), page,
			 0, NULL));
	/* The first page pins, the hole fails: the first is given back. */
	EXPECT_EQ(-MR_GUP_ERRNO,
		  mr_reg(self->ctx.fd, self->cli.fd, mr_addr(mem), 3 * page,
			 LCHAN_ACCESS_LOCAL_WRITE, NULL));
	/* Failures are undone before the ioctl returns. */
	EXPECT_EQ(pin0, vm_pin_kb());
	munmap(mem, page);
	munmap(mem + 2 * page, page);
}

TEST_F_TIMEOUT(mr, readonly_mapping, 60)
{
	long page = self->page;
	struct lchan_mr_reg_args r0, r1;
	long pin0;
	char *ro;

	ro = mr_map(2 * page, PROT_READ);
	ASSERT_TRUE(ro != NULL);
	pin0 = vm_pin_kb();
	ASSERT_GE(pin0, 0);

	/* Anything that lets the device write needs a writable mapping. */
	EXPECT_EQ(-MR_GUP_ERRNO,
		  mr_reg(self->ctx.fd, self->cli.fd, mr_addr(ro), 2 * page,
			 LCHAN_ACCESS_LOCAL_WRITE, NULL));
	EXPECT_EQ(-MR_GUP_ERRNO,
		  mr_reg(self->ctx.fd, self->cli.fd, mr_addr(ro), 2 * page,
			 LCHAN_ACCESS_ALL, NULL));
	EXPECT_EQ(pin0, vm_pin_kb());

	/* Sending from it, or letting a peer read it, does not. */
	ASSERT_EQ(0, mr_reg(self->ctx.fd, self->cli.fd, mr_addr(ro), 2 * page,
			    0, &r0));
	EXPECT_NE(0, r0.handle);
	EXPECT_EQ(0, r0.rkey);
	ASSERT_EQ(0, mr_reg(self->ctx.fd, self->cli.fd, mr_addr(ro), 2 * page,
			    LCHAN_ACCESS_REMOTE_READ, &r1));
	EXPECT_NE(0, r1.rkey);
	EXPECT_EQ(pin0 + 2 * 2 * page / (long)KIB, vm_pin_kb());
	EXPECT_EQ(0, mr_dereg(self->ctx.fd, r0.handle));
	EXPECT_EQ(0, mr_dereg(self->ctx.fd, r1.handle));
	EXPECT_EQ(0, vm_pin_wait(pin0, 2));
	munmap(ro, 2 * page);
}

TEST_F_TIMEOUT(mr, handle_belongs_to_its_context, 60)
{
	struct lchan_mr_reg_args r;
	char *mem;

	mem = mr_reg_page(_metadata, self, &r);
	/* sctx registered nothing, so the same number means nothing there. */
	EXPECT_EQ(-ENOENT, mr_dereg(self->sctx.fd, r.handle));
	/* Nor may sctx register on a channel of ctx. */
	EXPECT_EQ(-EINVAL, mr_reg(self->sctx.fd, self->cli.fd, mr_addr(mem),
				  self->page, LCHAN_ACCESS_LOCAL_WRITE, NULL));
	/* The failed attempt in sctx left the handle alone in ctx. */
	EXPECT_EQ(0, mr_dereg(self->ctx.fd, r.handle));
	munmap(mem, self->page);
}

TEST_F_TIMEOUT(mr, double_dereg, 60)
{
	struct lchan_mr_reg_args r;
	char *mem;

	mem = mr_reg_page(_metadata, self, &r);
	EXPECT_EQ(0, mr_dereg(self->ctx.fd, r.handle));
	EXPECT_EQ(-ENOENT, mr_dereg(self->ctx.fd, r.handle));
	/* Handle 0 is never issued. */
	EXPECT_EQ(-ENOENT, mr_dereg(self->ctx.fd, 0));
	munmap(mem, self->page);
}

/*
 * In a child of the owner: the ctx fd is shared, the mm is not.  Whatever
 * would pin memory or create a channel for the ctx must refuse.
 */
static int eperm_child(const struct lchan_t_dev *d, int ctx_fd, int chan_fd,
		       int lst_fd, const char *mem, long page)
{
	struct lchan_listen_args lreq = { .size = sizeof(lreq) };
	struct lchan_connect_args creq = {
		.size = sizeof(creq),
		.timeout_ms = 2000,
	};
	struct lchan_accept_args areq = { .size = sizeof(areq) };
	char port[16];
	int ret;

	ret = mr_reg(ctx_fd, chan_fd, mr_addr(mem), page,
		     LCHAN_ACCESS_LOCAL_WRITE, NULL);
	if (ret != -EPERM)
		return lchan_t_child_fail(1, "MR_REG: %d, want %d", ret, -EPERM);

	snprintf(port, sizeof(port), "%u", lchan_t_port());
	if (lchan_addr_parse(d->addr, port, &lreq.addr))
		return lchan_t_child_fail(2, "cannot parse %s", d->addr);
	ret = ioctl(ctx_fd, LCHAN_IOC_LISTEN, &lreq) < 0 ? -errno : 0;
	if (ret != -EPERM)
		return lchan_t_child_fail(3, "LISTEN: %d, want %d", ret, -EPERM);

	creq.dst = lreq.addr;
	ret = ioctl(ctx_fd, LCHAN_IOC_CONNECT, &creq) < 0 ? -errno : 0;
	if (ret != -EPERM)
		return lchan_t_child_fail(4, "CONNECT: %d, want %d", ret, -EPERM);

	ret = ioctl(lst_fd, LCHAN_IOC_ACCEPT, &areq) < 0 ? -errno : 0;
	if (ret != -EPERM)
		return lchan_t_child_fail(5, "ACCEPT: %d, want %d", ret, -EPERM);
	return 0;
}

TEST_F_TIMEOUT(mr, forked_child_gets_eperm, 60)
{
	struct lchan_listener lst;
	struct lchan_mr_reg_args r;
	char port[16];
	char *mem;
	pid_t pid;

	mem = mr_map_rw(_metadata, self->page);
	snprintf(port, sizeof(port), "%u", lchan_t_port());
	ASSERT_EQ(0, lchan_listen(&self->sctx, self->d.addr, port, 4,
				  LCHAN_FD_NONBLOCK, &lst));
	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0)
		_exit(eperm_child(&self->d, self->ctx.fd, self->cli.fd, lst.fd,
				  mem, self->page));
	EXPECT_EQ(0, lchan_t_wait_child(pid));
	lchan_listener_close(&lst);

	/* The owner is unaffected. */
	ASSERT_EQ(0, mr_reg(self->ctx.fd, self->cli.fd, mr_addr(mem),
			    self->page, LCHAN_ACCESS_LOCAL_WRITE, &r));
	EXPECT_EQ(0, mr_dereg(self->ctx.fd, r.handle));
	munmap(mem, self->page);
}

/* Drop CAP_IPC_LOCK from every set; 0, or -errno. */
static int drop_ipc_lock(void)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];
	const unsigned int i = CAP_TO_INDEX(CAP_IPC_LOCK);
	const __u32 bit = CAP_TO_MASK(CAP_IPC_LOCK);

	/* Also from the bounding set: nothing can give it back. */
	if (prctl(PR_CAPBSET_DROP, CAP_IPC_LOCK, 0, 0, 0) && errno != EPERM)
		return -errno;
	memset(data, 0, sizeof(data));
	if (syscall(SYS_capget, &hdr, data))
		return -errno;
	data[i].effective &= ~bit;
	data[i].permitted &= ~bit;
	data[i].inheritable &= ~bit;
	if (syscall(SYS_capset, &hdr, data))
		return -errno;
	if (syscall(SYS_capget, &hdr, data))
		return -errno;
	return data[i].effective & bit ? -EPERM : 0;
}

/*
 * Without CAP_IPC_LOCK, pinned pages count against RLIMIT_MEMLOCK.  The
 * child needs its own ctx and channels: a ctx belongs to the mm that
 * opened it.
 */
static int memlock_child(const struct lchan_t_dev *d, long page)
{
	const struct rlimit rl = { 256 * KIB, 256 * KIB };
	const __u32 lw = LCHAN_ACCESS_LOCAL_WRITE;
	struct lchan_ctx sctx, ctx;
	struct lchan_chan srv, cli;
	struct lchan_mr_reg_args r;
	char *mem;
	long kb;
	int ret;

	ret = drop_ipc_lock();
	if (ret)
		return lchan_t_child_fail(1, "dropping CAP_IPC_LOCK: %d", ret);
	if (setrlimit(RLIMIT_MEMLOCK, &rl))
		return lchan_t_child_fail(2, "setrlimit: %d", -errno);
	if (lchan_ctx_open(&sctx) || lchan_ctx_open(&ctx))
		return lchan_t_child_fail(3, "cannot open /dev/lchan");
	ret = lchan_t_pair(&sctx, &ctx, d->addr, NULL, &srv, &cli, NULL, NULL,
			   NULL);
	if (ret)
		return lchan_t_child_fail(4, "channel pair: %d", ret);
	mem = mr_map(MIB + page, PROT_READ | PROT_WRITE);
	if (!mem)
		return lchan_t_child_fail(5, "mmap: %d", -errno);
	kb = vm_pin_kb();
	if (kb)
		return lchan_t_child_fail(6, "VmPin %ld kB at start", kb);

	ret = mr_reg(ctx.fd, cli.fd, mr_addr(mem), 128 * KIB, lw, &r);
	if (ret)
		return lchan_t_child_fail(7, "128 KiB under a 256 KiB limit: %d", ret);
	ret = mr_reg(ctx.fd, cli.fd, mr_addr(mem), MIB, lw, NULL);
	if (ret != -ENOMEM)
		return lchan_t_child_fail(8, "1 MiB: %d, want %d", ret, -ENOMEM);
	/* The refusal must not leave anything counted. */
	kb = vm_pin_kb();
	if (kb != 128)
		return lchan_t_child_fail(9, "VmPin %ld kB, want 128", kb);
	ret = mr_dereg(ctx.fd, r.handle);
	if (ret)
		return lchan_t_child_fail(10, "dereg: %d", ret);
	if (vm_pin_wait(0, 2))
		return lchan_t_child_fail(11, "VmPin %ld kB after dereg", vm_pin_kb());

	/* Exactly the limit fits; one page more does not. */
	ret = mr_reg(ctx.fd, cli.fd, mr_addr(mem), 256 * KIB, lw, &r);
	if (ret)
		return lchan_t_child_fail(12, "256 KiB at a 256 KiB limit: %d", ret);
	ret = mr_reg(ctx.fd, cli.fd, mr_addr(mem + 256 * KIB), page, lw,
		     NULL);
	if (ret != -ENOMEM)
		return lchan_t_child_fail(13, "a page over the limit: %d, want %d",
				  ret, -ENOMEM);
	ret = mr_dereg(ctx.fd, r.handle);
	if (ret)
		return lchan_t_child_fail(14, "dereg: %d", ret);
	return 0;
}

TEST_F_TIMEOUT(mr, memlock_limit_without_cap_ipc_lock, 120)
{
	pid_t pid;

	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0)
		_exit(memlock_child(&self->d, self->page));
	EXPECT_EQ(0, lchan_t_wait_child(pid));
}

TEST_F_TIMEOUT(mr, pins_released_on_dereg, 60)
{
	struct lchan_mr_reg_args r;
	long pin0, pin1;
	char *mem;

	mem = mr_map_rw(_metadata, MIB);
	pin0 = vm_pin_kb();
	ASSERT_GE(pin0, 0);
	ASSERT_EQ(0, mr_reg(self->ctx.fd, self->cli.fd, mr_addr(mem), MIB,
			    LCHAN_ACCESS_LOCAL_WRITE, &r));
	pin1 = vm_pin_kb();
	EXPECT_GE(pin1, pin0 + (long)(MIB / KIB));
	ASSERT_EQ(0, mr_dereg(self->ctx.fd, r.handle));
	/* The last unpin runs in a workqueue: allow it a moment. */
	EXPECT_EQ(0, vm_pin_wait(pin0, 2))
		TH_LOG("VmPin %ld kB, was %ld before", vm_pin_kb(), pin0);
	munmap(mem, MIB);
}

TEST_F_TIMEOUT(mr, pins_released_on_close, 60)
{
	struct lchan_mr_reg_args r;
	long pin0;
	char *mem;

	mem = mr_map_rw(_metadata, MIB);
	pin0 = vm_pin_kb();
	ASSERT_GE(pin0, 0);
	/* sctx owns srv: register there and never deregister. */
	ASSERT_EQ(0, mr_reg(self->sctx.fd, self->srv.fd, mr_addr(mem), MIB,
			    LCHAN_ACCESS_LOCAL_WRITE, &r));
	EXPECT_GE(vm_pin_kb(), pin0 + (long)(MIB / KIB));
	/* The channel holds the ctx: both must go for the MRs to go. */
	EXPECT_EQ(0, lchan_chan_close(&self->srv));
	EXPECT_EQ(0, lchan_ctx_close(&self->sctx));
	EXPECT_EQ(0, vm_pin_wait(pin0, 2))
		TH_LOG("VmPin %ld kB, was %ld before", vm_pin_kb(), pin0);
	munmap(mem, MIB);
}

struct exit_report {
	int err;
	__u32 ids[2];
};

/*
 * Set up channels and a pinned MB, report the channel ids, wait for the
 * parent's go and exit without closing or deregistering anything.
 */
static int exit_child(const struct lchan_t_dev *d, int rep_fd, int go_fd)
{
	struct exit_report rep = { 0 };
	struct lchan_ctx sctx, ctx;
	struct lchan_chan srv, cli;
	char *mem, go;
	int ret;

	if (lchan_ctx_open(&sctx) || lchan_ctx_open(&ctx)) {
		rep.err = lchan_t_child_fail(1, "cannot open /dev/lchan");
		goto out;
	}
	ret = lchan_t_pair(&sctx, &ctx, d->addr, NULL, &srv, &cli, NULL, NULL,
			   NULL);
	if (ret) {
		rep.err = lchan_t_child_fail(2, "channel pair: %d", ret);
		goto out;
	}
	mem = mr_map(MIB, PROT_READ | PROT_WRITE);
	if (!mem) {
		rep.err = lchan_t_child_fail(3, "mmap: %d", -errno);
		goto out;
	}
	ret = mr_reg(ctx.fd, cli.fd, mr_addr(mem), MIB,
		     LCHAN_ACCESS_LOCAL_WRITE, NULL);
	if (ret) {
		rep.err = lchan_t_child_fail(4, "MR_REG: %d", ret);
		goto out;
	}
	if (vm_pin_kb() < (long)(MIB / KIB)) {
		rep.err = lchan_t_child_fail(5, "VmPin %ld kB", vm_pin_kb());
		goto out;
	}
	rep.ids[0] = cli.info.id;
	rep.ids[1] = srv.info.id;
out:
	if (write(rep_fd, &rep, sizeof(rep)) != sizeof(rep))
		return 100;
	if (!rep.err && read(go_fd, &go, 1) < 0)
		return 101;
	return rep.err;
}

TEST_F_TIMEOUT(mr, released_on_process_exit, 120)
{
	struct exit_report rep;
	int rep_p[2], go_p[2];
	struct lchan_info info;
	struct lchan_ctx ctx;
	char path[2][128];
	int base, i;
	pid_t pid;

	base = dev_channels(&self->d);
	ASSERT_GE(base, 2);
	ASSERT_EQ(0, pipe(rep_p));
	ASSERT_EQ(0, pipe(go_p));
	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		close(rep_p[0]);
		close(go_p[1]);
		_exit(exit_child(&self->d, rep_p[1], go_p[0]));
	}
	close(rep_p[1]);
	close(go_p[0]);

	/* EOF instead of a report if the child died early. */
	ASSERT_EQ(sizeof(rep), read(rep_p[0], &rep, sizeof(rep)));
	ASSERT_EQ(0, rep.err);
	for (i = 0; i < 2; i++) {
		snprintf(path[i], sizeof(path[i]), LCHAN_SYSFS "/channels/%u",
			 rep.ids[i]);
		EXPECT_EQ(0, access(path[i], F_OK)) TH_LOG("%s", path[i]);
	}
	EXPECT_EQ(base + 2, dev_channels(&self->d));

	/* Go: the child exits with everything still open and pinned. */
	ASSERT_EQ(1, write(go_p[1], "g", 1));
	close(go_p[1]);
	close(rep_p[0]);
	EXPECT_EQ(0, lchan_t_wait_child(pid));
	for (i = 0; i < 2; i++) {
		EXPECT_EQ(0, lchan_t_wait_path(path[i], 0, 5))
			TH_LOG("%s still there", path[i]);
	}
	EXPECT_EQ(0, dev_channels_wait(&self->d, base, 5))
		TH_LOG("%d channels on %s, want %d", dev_channels(&self->d),
		       self->d.dev, base);

	/* Nothing of the dead process is in the way of a new one. */
	ASSERT_EQ(0, lchan_ctx_open(&ctx));
	EXPECT_EQ(0, lchan_query(&ctx, &info));
	EXPECT_EQ(LCHAN_ABI_VERSION, info.abi_version);
	lchan_ctx_close(&ctx);
}

TEST_HARNESS_MAIN
