// SPDX-License-Identifier: GPL-2.0
/*
 * The ioctl and mmap ABI: the size, flags and reserved-field rules every
 * argument shares, the errno of each kind of bad argument, and the ioctl
 * numbers each kind of fd refuses.
 */
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>

#include "kselftest_harness.h"
#include "lchan_test.h"

/* How far a "newer" caller's struct reaches past ours. */
#define ABI_TAIL	8

FIXTURE(abi) {
	struct lchan_t_dev d;
	struct lchan_ctx ctx;		/* ctx ioctls, client of the pair */
	struct lchan_ctx sctx;		/* server of the pair */
	struct lchan_chan cli, srv;
	struct lchan_listener lst;
	struct lchan_info info;
	long page;
};

LCHAN_T_VARIANTS(abi);

FIXTURE_SETUP(abi)
{
	/* Teardown also runs after a SKIP: nothing may look open. */
	self->ctx.fd = -1;
	self->sctx.fd = -1;
	self->cli.fd = -1;
	self->srv.fd = -1;
	self->lst.fd = -1;
	self->page = sysconf(_SC_PAGESIZE);
	LCHAN_T_NEED_DEV(&self->d, variant->kind);
	if (!lchan_t_module_loaded())
		LCHAN_T_SETUP_SKIP("lchan is not loaded");
	ASSERT_EQ(0, lchan_ctx_open(&self->ctx));
	ASSERT_EQ(0, lchan_query(&self->ctx, &self->info));
}

FIXTURE_TEARDOWN(abi)
{
	lchan_chan_close(&self->cli);
	lchan_chan_close(&self->srv);
	lchan_listener_close(&self->lst);
	lchan_ctx_close(&self->sctx);
	lchan_ctx_close(&self->ctx);
}

/* ioctl() as its result, or -errno. */
static int abi_ioctl(int fd, unsigned long cmd, void *arg)
{
	int ret = ioctl(fd, cmd, arg);

	return ret < 0 ? -errno : ret;
}

/* Every argument starts with its __u32 size. */
static void abi_set_size(void *arg, __u32 size)
{
	memcpy(arg, &size, sizeof(size));
}

static bool abi_zero(const void *p, size_t len)
{
	const unsigned char *c = p;

	while (len--)
		if (*c++)
			return false;
	return true;
}

/*
 * The rules every argument shares.  @tmpl is an otherwise valid argument
 * of @ksize bytes whose first released size is @min: a size below that is
 * EINVAL, a longer struct with a non-zero tail or a size above a page is
 * E2BIG, and a NULL pointer is EFAULT.  Each of these comes before any
 * other check, so nothing here can create an object.
 */
static void abi_check_sizes(struct __test_metadata *_metadata, int fd,
			    unsigned long cmd, const void *tmpl, __u32 ksize,
			    __u32 min, const char *name)
{
	long page = sysconf(_SC_PAGESIZE);
	char *buf = calloc(2, page);

	ASSERT_TRUE(buf != NULL);
	memcpy(buf, tmpl, ksize);

	abi_set_size(buf, min - 1);
	EXPECT_EQ(-EINVAL, abi_ioctl(fd, cmd, buf))
		TH_LOG("%s: size %u (one byte short)", name, min - 1);
	abi_set_size(buf, 0);
	EXPECT_EQ(-EINVAL, abi_ioctl(fd, cmd, buf))
		TH_LOG("%s: size 0", name);

	/* A newer caller set a field this kernel does not know. */
	abi_set_size(buf, ksize + ABI_TAIL);
	buf[ksize + ABI_TAIL - 1] = 1;
	EXPECT_EQ(-E2BIG, abi_ioctl(fd, cmd, buf))
		TH_LOG("%s: size %u, non-zero tail", name, ksize + ABI_TAIL);
	buf[ksize + ABI_TAIL - 1] = 0;

	/* More than a page is refused before the tail is even read. */
	abi_set_size(buf, page + ABI_TAIL);
	EXPECT_EQ(-E2BIG, abi_ioctl(fd, cmd, buf))
		TH_LOG("%s: size %ld", name, page + ABI_TAIL);

	EXPECT_EQ(-EFAULT, abi_ioctl(fd, cmd, NULL))
		TH_LOG("%s: NULL argument", name);
	free(buf);
}

/* The other ioctls of the other fd kinds must not leak into this one. */
static void abi_expect_enotty(struct __test_metadata *_metadata, int fd,
			      const unsigned long *cmds, size_t n,
			      const char *what)
{
	__u64 arg[32] = { 0 };
	size_t i;

	/* Braces: EXPECT_*() TH_LOG() is more than one statement. */
	for (i = 0; i < n; i++) {
		EXPECT_EQ(-ENOTTY, abi_ioctl(fd, cmds[i], arg))
			TH_LOG("%s fd, cmd %#lx", what, cmds[i]);
	}
}

/* A connected pair: srv in sctx, cli in ctx. */
static void abi_make_pair(struct __test_metadata *_metadata,
		     FIXTURE_DATA(abi) *self)
{
	ASSERT_EQ(0, lchan_ctx_open(&self->sctx));
	ASSERT_EQ(0, lchan_t_pair(&self->sctx, &self->ctx, self->d.addr, NULL,
				  &self->srv, &self->cli, NULL, NULL, NULL));
}

/* A non-blocking listener of ctx on the variant's address. */
static void abi_make_listener(struct __test_metadata *_metadata,
		       FIXTURE_DATA(abi) *self)
{
	char port[16];

	snprintf(port, sizeof(port), "%u", lchan_t_port());
	ASSERT_EQ(0, lchan_listen(&self->ctx, self->d.addr, port, 4,
				  LCHAN_FD_NONBLOCK, &self->lst));
}

/* The variant's address with a fresh port. */
static void abi_fresh_addr(struct __test_metadata *_metadata,
		     FIXTURE_DATA(abi) *self, struct lchan_addr *addr)
{
	char port[16];

	snprintf(port, sizeof(port), "%u", lchan_t_port());
	ASSERT_EQ(0, lchan_addr_parse(self->d.addr, port, addr));
	ASSERT_EQ(AF_INET, addr->family);
}

TEST_F_TIMEOUT(abi, info, 60)
{
	struct lchan_info tmpl = { .size = sizeof(tmpl) };
	struct lchan_info *info;
	long page = self->page;
	char *buf, *map;

	abi_check_sizes(_metadata, self->ctx.fd, LCHAN_IOC_INFO, &tmpl,
			sizeof(tmpl), sizeof(tmpl), "INFO");

	/* No flag is defined yet. */
	tmpl.flags = 1;
	EXPECT_EQ(-EINVAL, abi_ioctl(self->ctx.fd, LCHAN_IOC_INFO, &tmpl));
	tmpl.flags = 1U << 31;
	EXPECT_EQ(-EINVAL, abi_ioctl(self->ctx.fd, LCHAN_IOC_INFO, &tmpl));

	/* A longer struct with a zero tail: answered, tail left alone. */
	buf = calloc(2, page);
	ASSERT_TRUE(buf != NULL);
	info = (struct lchan_info *)buf;
	abi_set_size(buf, sizeof(*info) + ABI_TAIL);
	EXPECT_EQ(0, abi_ioctl(self->ctx.fd, LCHAN_IOC_INFO, buf));
	EXPECT_EQ(LCHAN_ABI_VERSION, info->abi_version);
	EXPECT_EQ(self->info.max_entries, info->max_entries);
	EXPECT_EQ(self->info.features, info->features);
	EXPECT_TRUE(abi_zero(buf + sizeof(*info), ABI_TAIL));

	/* A whole page is still a size the kernel takes. */
	memset(buf, 0, 2 * page);
	abi_set_size(buf, page);
	EXPECT_EQ(0, abi_ioctl(self->ctx.fd, LCHAN_IOC_INFO, buf));
	EXPECT_EQ(LCHAN_ABI_VERSION, info->abi_version);
	free(buf);

	/* A tail that cannot be read is a fault, not "too big". */
	map = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_TRUE(map != MAP_FAILED);
	ASSERT_EQ(0, munmap(map + page, page));
	info = (struct lchan_info *)(map + page - sizeof(*info));
	memset(info, 0, sizeof(*info));
	info->size = sizeof(*info) + ABI_TAIL;
	EXPECT_EQ(-EFAULT, abi_ioctl(self->ctx.fd, LCHAN_IOC_INFO, info));
	munmap(map, page);
}

TEST_F_TIMEOUT(abi, mr_reg, 60)
{
	union {
		struct lchan_mr_reg_args r;
		char b[sizeof(struct lchan_mr_reg_args) + ABI_TAIL];
	} big;
	struct lchan_mr_reg_args tmpl, req;
	struct lchan_mr_dereg_args dreq = { .size = sizeof(dreq) };
	int pfd[2];
	char *mem;

	abi_make_pair(_metadata, self);
	mem = mmap(NULL, self->page, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_TRUE(mem != MAP_FAILED);
	memset(&tmpl, 0, sizeof(tmpl));
	tmpl.size = sizeof(tmpl);
	tmpl.addr = (uintptr_t)mem;
	tmpl.length = self->page;
	tmpl.access = LCHAN_ACCESS_LOCAL_WRITE;
	tmpl.chan_fd = self->cli.fd;
	abi_check_sizes(_metadata, self->ctx.fd, LCHAN_IOC_MR_REG, &tmpl,
			sizeof(tmpl), sizeof(tmpl), "MR_REG");

	req = tmpl;
	req.flags = 1;
	EXPECT_EQ(-EINVAL, abi_ioctl(self->ctx.fd, LCHAN_IOC_MR_REG, &req));
	req = tmpl;
	req.access = 1U << 4;
	EXPECT_EQ(-EINVAL, abi_ioctl(self->ctx.fd, LCHAN_IOC_MR_REG, &req));

	/* chan_fd must name a channel: not a ctx, not nothing, not a pipe. */
	req = tmpl;
	req.chan_fd = self->ctx.fd;
	EXPECT_EQ(-EBADF, abi_ioctl(self->ctx.fd, LCHAN_IOC_MR_REG, &req));
	req.chan_fd = -1;
	EXPECT_EQ(-EBADF, abi_ioctl(self->ctx.fd, LCHAN_IOC_MR_REG, &req));
	ASSERT_EQ(0, pipe(pfd));
	req.chan_fd = pfd[0];
	EXPECT_EQ(-EBADF, abi_ioctl(self->ctx.fd, LCHAN_IOC_MR_REG, &req));
	close(pfd[0]);
	close(pfd[1]);
	/* A channel, but of another context. */
	req.chan_fd = self->srv.fd;
	EXPECT_EQ(-EINVAL, abi_ioctl(self->ctx.fd, LCHAN_IOC_MR_REG, &req));

	/* A longer struct with a zero tail registers like the plain one. */
	memset(&big, 0, sizeof(big));
	big.r = tmpl;
	big.r.size = sizeof(big);
	ASSERT_EQ(0, abi_ioctl(self->ctx.fd, LCHAN_IOC_MR_REG, &big));
	EXPECT_NE(0, big.r.handle);
	EXPECT_EQ(0, big.r.rkey);
	EXPECT_TRUE(abi_zero(big.b + sizeof(big.r), ABI_TAIL));
	dreq.handle = big.r.handle;
	EXPECT_EQ(0, abi_ioctl(self->ctx.fd, LCHAN_IOC_MR_DEREG, &dreq));

	req = tmpl;
	ASSERT_EQ(0, abi_ioctl(self->ctx.fd, LCHAN_IOC_MR_REG, &req));
	EXPECT_NE(0, req.handle);
	dreq.handle = req.handle;
	EXPECT_EQ(0, abi_ioctl(self->ctx.fd, LCHAN_IOC_MR_DEREG, &dreq));
	munmap(mem, self->page);
}

TEST_F_TIMEOUT(abi, mr_dereg, 60)
{
	static const __u32 never[] = { 0, 1, 2, 0x7fffffff, 0xffffffff };
	union {
		struct lchan_mr_dereg_args r;
		char b[sizeof(struct lchan_mr_dereg_args) + ABI_TAIL];
	} big;
	struct lchan_mr_dereg_args tmpl = { .size = sizeof(tmpl), .handle = 1 };
	struct lchan_mr_dereg_args req;
	unsigned int i;

	abi_check_sizes(_metadata, self->ctx.fd, LCHAN_IOC_MR_DEREG, &tmpl,
			sizeof(tmpl), sizeof(tmpl), "MR_DEREG");

	req = tmpl;
	req.flags = 1;
	EXPECT_EQ(-EINVAL, abi_ioctl(self->ctx.fd, LCHAN_IOC_MR_DEREG, &req));
	req = tmpl;
	req.resv = 1;
	EXPECT_EQ(-EINVAL, abi_ioctl(self->ctx.fd, LCHAN_IOC_MR_DEREG, &req));

	/* This context registered nothing: no handle exists in it. */
	for (i = 0; i < ARRAY_SIZE(never); i++) {
		req = tmpl;
		req.handle = never[i];
		EXPECT_EQ(-ENOENT,
			  abi_ioctl(self->ctx.fd, LCHAN_IOC_MR_DEREG, &req))
			TH_LOG("handle %#x", never[i]);
	}

	/* A zero tail gets past the copy to the handle lookup. */
	memset(&big, 0, sizeof(big));
	big.r = tmpl;
	big.r.size = sizeof(big);
	EXPECT_EQ(-ENOENT, abi_ioctl(self->ctx.fd, LCHAN_IOC_MR_DEREG, &big));
}

TEST_F_TIMEOUT(abi, listen, 60)
{
	union {
		struct lchan_listen_args r;
		char b[sizeof(struct lchan_listen_args) + ABI_TAIL];
	} big;
	struct lchan_listen_args tmpl, req;
	int fd;

	memset(&tmpl, 0, sizeof(tmpl));
	tmpl.size = sizeof(tmpl);
	tmpl.backlog = 4;
	abi_fresh_addr(_metadata, self, &tmpl.addr);
	abi_check_sizes(_metadata, self->ctx.fd, LCHAN_IOC_LISTEN, &tmpl,
			sizeof(tmpl), sizeof(tmpl), "LISTEN");

	/* Only CLOEXEC and NONBLOCK: a listener has no establish to defer. */
	req = tmpl;
	req.flags = 1U << 2;
	EXPECT_EQ(-EINVAL, abi_ioctl(self->ctx.fd, LCHAN_IOC_LISTEN, &req));
	req.flags = LCHAN_DEFER_ESTABLISH;
	EXPECT_EQ(-EINVAL, abi_ioctl(self->ctx.fd, LCHAN_IOC_LISTEN, &req));
	req.flags = 1U << 31;
	EXPECT_EQ(-EINVAL, abi_ioctl(self->ctx.fd, LCHAN_IOC_LISTEN, &req));
	req = tmpl;
	req.sock_fd = 1;
	EXPECT_EQ(-EINVAL, abi_ioctl(self->ctx.fd, LCHAN_IOC_LISTEN, &req));

	req = tmpl;
	req.backlog = 1025;
	EXPECT_EQ(-EINVAL, abi_ioctl(self->ctx.fd, LCHAN_IOC_LISTEN, &req));
	req.backlog = 0xffffffff;
	EXPECT_EQ(-EINVAL, abi_ioctl(self->ctx.fd, LCHAN_IOC_LISTEN, &req));

	req = tmpl;
	req.addr.family = 99;
	EXPECT_EQ(-EAFNOSUPPORT,
		  abi_ioctl(self->ctx.fd, LCHAN_IOC_LISTEN, &req));
	/* IPv4 has no scope and only 4 address bytes. */
	req = tmpl;
	req.addr.scope_id = 1;
	EXPECT_EQ(-EINVAL, abi_ioctl(self->ctx.fd, LCHAN_IOC_LISTEN, &req));
	req = tmpl;
	req.addr.addr[4] = 1;
	EXPECT_EQ(-EINVAL, abi_ioctl(self->ctx.fd, LCHAN_IOC_LISTEN, &req));

	/* The largest backlog is accepted, and the address comes back. */
	req = tmpl;
	req.backlog = 1024;
	fd = abi_ioctl(self->ctx.fd, LCHAN_IOC_LISTEN, &req);
	EXPECT_GE(fd, 0);
	EXPECT_EQ(tmpl.addr.port, req.addr.port);
	if (fd >= 0)
		close(fd);

	/* A longer struct with a zero tail makes a listener too. */
	memset(&big, 0, sizeof(big));
	big.r = tmpl;
	abi_fresh_addr(_metadata, self, &big.r.addr);
	big.r.size = sizeof(big);
	fd = abi_ioctl(self->ctx.fd, LCHAN_IOC_LISTEN, &big);
	EXPECT_GE(fd, 0);
	EXPECT_TRUE(abi_zero(big.b + sizeof(big.r), ABI_TAIL));
	if (fd >= 0)
		close(fd);
}

TEST_F_TIMEOUT(abi, connect, 90)
{
	union {
		struct lchan_connect_args r;
		char b[sizeof(struct lchan_connect_args) + ABI_TAIL];
	} big;
	struct lchan_connect_args tmpl, req;
	__u32 max = self->info.max_entries;
	int fd = self->ctx.fd;

	memset(&tmpl, 0, sizeof(tmpl));
	tmpl.size = sizeof(tmpl);
	tmpl.timeout_ms = 5000;
	abi_fresh_addr(_metadata, self, &tmpl.dst);
	/* The first released layout ended before 'rc'. */
	abi_check_sizes(_metadata, fd, LCHAN_IOC_CONNECT, &tmpl,
			sizeof(tmpl), offsetof(struct lchan_connect_args, rc),
			"CONNECT");

	req = tmpl;
	req.flags = 1U << 2;
	EXPECT_EQ(-EINVAL, abi_ioctl(fd, LCHAN_IOC_CONNECT, &req));
	req.flags = 1U << 31;
	EXPECT_EQ(-EINVAL, abi_ioctl(fd, LCHAN_IOC_CONNECT, &req));
	req = tmpl;
	req.resv = 1;
	EXPECT_EQ(-EINVAL, abi_ioctl(fd, LCHAN_IOC_CONNECT, &req));
	req = tmpl;
	req.rings.resv = 1;
	EXPECT_EQ(-EINVAL, abi_ioctl(fd, LCHAN_IOC_CONNECT, &req));
	req = tmpl;
	req.timeout_ms = 600001;
	EXPECT_EQ(-EINVAL, abi_ioctl(fd, LCHAN_IOC_CONNECT, &req));

	/* RC timing out of range, or reserved bits set. */
	req = tmpl;
	req.rc.ack_timeout = 32;
	EXPECT_EQ(-EINVAL, abi_ioctl(fd, LCHAN_IOC_CONNECT, &req));
	req.rc.ack_timeout = 0xff;
	EXPECT_EQ(-EINVAL, abi_ioctl(fd, LCHAN_IOC_CONNECT, &req));
	req = tmpl;
	req.rc.retry_count = 8;
	EXPECT_EQ(-EINVAL, abi_ioctl(fd, LCHAN_IOC_CONNECT, &req));
	req.rc.retry_count = 0xff;
	EXPECT_EQ(-EINVAL, abi_ioctl(fd, LCHAN_IOC_CONNECT, &req));
	req = tmpl;
	req.rc.resv0 = 1;
	EXPECT_EQ(-EINVAL, abi_ioctl(fd, LCHAN_IOC_CONNECT, &req));

	/* Keepalive period below, above its range. */
	req = tmpl;
	req.rc.keepalive_ms = 1;
	EXPECT_EQ(-EINVAL, abi_ioctl(fd, LCHAN_IOC_CONNECT, &req));
	req.rc.keepalive_ms = LCHAN_KEEPALIVE_MIN_MS - 1;
	EXPECT_EQ(-EINVAL, abi_ioctl(fd, LCHAN_IOC_CONNECT, &req));
	req.rc.keepalive_ms = LCHAN_KEEPALIVE_MAX_MS + 1;
	EXPECT_EQ(-EINVAL, abi_ioctl(fd, LCHAN_IOC_CONNECT, &req));
	req.rc.keepalive_ms = 1U << 31;
	EXPECT_EQ(-EINVAL, abi_ioctl(fd, LCHAN_IOC_CONNECT, &req));

	/* Destination: none, unknown family, no port. */
	req = tmpl;
	req.dst.family = 0;
	EXPECT_EQ(-EDESTADDRREQ, abi_ioctl(fd, LCHAN_IOC_CONNECT, &req));
	req.dst.family = 99;
	EXPECT_EQ(-EAFNOSUPPORT, abi_ioctl(fd, LCHAN_IOC_CONNECT, &req));
	req = tmpl;
	req.dst.port = 0;
	EXPECT_EQ(-EINVAL, abi_ioctl(fd, LCHAN_IOC_CONNECT, &req));
	req = tmpl;
	req.dst.scope_id = 1;
	EXPECT_EQ(-EINVAL, abi_ioctl(fd, LCHAN_IOC_CONNECT, &req));

	/* A source must be a known family, and the destination's. */
	req = tmpl;
	req.src.family = 99;
	EXPECT_EQ(-EAFNOSUPPORT, abi_ioctl(fd, LCHAN_IOC_CONNECT, &req));
	req.src.family = AF_INET6;
	EXPECT_EQ(-EINVAL, abi_ioctl(fd, LCHAN_IOC_CONNECT, &req));

	/* A zero tail gets past the copy to the address checks. */
	memset(&big, 0, sizeof(big));
	big.r = tmpl;
	big.r.size = sizeof(big);
	big.r.dst.family = 0;
	EXPECT_EQ(-EDESTADDRREQ, abi_ioctl(fd, LCHAN_IOC_CONNECT, &big));

	/*
	 * Rings above the limit.  These are checked once the address has
	 * resolved to a device, so the destination is real (nobody listens:
	 * it never gets as far as connecting).  The CQ may be up to twice
	 * the limit since it holds sq + rq completions.
	 */
	req = tmpl;
	req.rings.sq_entries = max + 1;
	EXPECT_EQ(-EINVAL, abi_ioctl(fd, LCHAN_IOC_CONNECT, &req));
	req = tmpl;
	req.rings.rq_entries = max + 1;
	EXPECT_EQ(-EINVAL, abi_ioctl(fd, LCHAN_IOC_CONNECT, &req));
	req = tmpl;
	req.rings.cq_entries = 2 * max + 1;
	EXPECT_EQ(-EINVAL, abi_ioctl(fd, LCHAN_IOC_CONNECT, &req));
	req = tmpl;
	req.rings.sq_entries = 0xffffffff;
	EXPECT_EQ(-EINVAL, abi_ioctl(fd, LCHAN_IOC_CONNECT, &req));
}

TEST_F_TIMEOUT(abi, accept, 60)
{
	union {
		struct lchan_accept_args r;
		char b[sizeof(struct lchan_accept_args) + ABI_TAIL];
	} big;
	struct lchan_accept_args tmpl = { .size = sizeof(tmpl) };
	struct lchan_accept_args req;
	__u32 first = offsetof(struct lchan_accept_args, peer);
	int fd;

	abi_make_listener(_metadata, self);
	fd = self->lst.fd;
	/* The first released layout ended before 'peer'. */
	abi_check_sizes(_metadata, fd, LCHAN_IOC_ACCEPT, &tmpl, sizeof(tmpl),
			first, "ACCEPT");

	req = tmpl;
	req.flags = 1U << 2;
	EXPECT_EQ(-EINVAL, abi_ioctl(fd, LCHAN_IOC_ACCEPT, &req));
	req.flags = 1U << 31;
	EXPECT_EQ(-EINVAL, abi_ioctl(fd, LCHAN_IOC_ACCEPT, &req));
	req = tmpl;
	req.rings.resv = 1;
	EXPECT_EQ(-EINVAL, abi_ioctl(fd, LCHAN_IOC_ACCEPT, &req));
	req = tmpl;
	req.rc.ack_timeout = 32;
	EXPECT_EQ(-EINVAL, abi_ioctl(fd, LCHAN_IOC_ACCEPT, &req));
	req = tmpl;
	req.rc.retry_count = 8;
	EXPECT_EQ(-EINVAL, abi_ioctl(fd, LCHAN_IOC_ACCEPT, &req));
	req = tmpl;
	req.rc.resv0 = 0x8000;
	EXPECT_EQ(-EINVAL, abi_ioctl(fd, LCHAN_IOC_ACCEPT, &req));
	req = tmpl;
	req.rc.keepalive_ms = LCHAN_KEEPALIVE_MIN_MS - 1;
	EXPECT_EQ(-EINVAL, abi_ioctl(fd, LCHAN_IOC_ACCEPT, &req));
	req.rc.keepalive_ms = LCHAN_KEEPALIVE_MAX_MS + 1;
	EXPECT_EQ(-EINVAL, abi_ioctl(fd, LCHAN_IOC_ACCEPT, &req));

	/* Valid, and nobody is waiting on a non-blocking listener. */
	req = tmpl;
	EXPECT_EQ(-EAGAIN, abi_ioctl(fd, LCHAN_IOC_ACCEPT, &req));
	/* The extremes of the RC timing are in range. */
	req.rc.ack_timeout = 31;
	req.rc.retry_count = 7;
	EXPECT_EQ(-EAGAIN, abi_ioctl(fd, LCHAN_IOC_ACCEPT, &req));
	req.rc.ack_timeout = 1;
	req.rc.retry_count = 1;
	EXPECT_EQ(-EAGAIN, abi_ioctl(fd, LCHAN_IOC_ACCEPT, &req));
	/* And those of the keepalive period. */
	req.rc.keepalive_ms = LCHAN_KEEPALIVE_MIN_MS;
	EXPECT_EQ(-EAGAIN, abi_ioctl(fd, LCHAN_IOC_ACCEPT, &req));
	req.rc.keepalive_ms = LCHAN_KEEPALIVE_MAX_MS;
	EXPECT_EQ(-EAGAIN, abi_ioctl(fd, LCHAN_IOC_ACCEPT, &req));
	req.rc.keepalive_ms = 0;
	req.flags = LCHAN_FD_CLOEXEC | LCHAN_FD_NONBLOCK |
		    LCHAN_DEFER_ESTABLISH;
	EXPECT_EQ(-EAGAIN, abi_ioctl(fd, LCHAN_IOC_ACCEPT, &req));
	req = tmpl;
	req.size = first;
	EXPECT_EQ(-EAGAIN, abi_ioctl(fd, LCHAN_IOC_ACCEPT, &req));

	memset(&big, 0, sizeof(big));
	big.r = tmpl;
	big.r.size = sizeof(big);
	EXPECT_EQ(-EAGAIN, abi_ioctl(fd, LCHAN_IOC_ACCEPT, &big));
}

TEST_F_TIMEOUT(abi, accept_rings_too_large, 90)
{
	struct lchan_accept_args req = { .size = sizeof(req) };
	struct lchan_t_peer peer = { .timeout_ms = 5000, .ret = 1 };
	struct pollfd pfd;
	pthread_t thr;
	int ready;

	abi_make_listener(_metadata, self);
	ASSERT_EQ(0, lchan_ctx_open(&peer.ctx));
	peer.chan.fd = -1;
	peer.host = self->d.addr;
	snprintf(peer.port, sizeof(peer.port), "%u", self->lst.addr.port);
	ASSERT_EQ(0, pthread_create(&thr, NULL, lchan_t_peer_connect, &peer));

	/* Ring sizes of an accept only matter once a request is there. */
	pfd.fd = self->lst.fd;
	pfd.events = POLLIN;
	ready = poll(&pfd, 1, 20000);
	if (ready == 1) {
		req.rings.sq_entries = self->info.max_entries + 1;
		EXPECT_EQ(-EINVAL,
			  abi_ioctl(self->lst.fd, LCHAN_IOC_ACCEPT, &req));
	}
	/* The request is refused with the listener: no wait for the timeout. */
	lchan_listener_close(&self->lst);
	pthread_join(thr, NULL);
	lchan_ctx_close(&peer.ctx);
	ASSERT_EQ(1, ready) TH_LOG("no connection request arrived");
	/* Nobody accepted it: the peer cannot have got a channel. */
	EXPECT_GT(0, peer.ret);
}

TEST_F_TIMEOUT(abi, chan_info, 60)
{
	union {
		struct lchan_chan_info r;
		char b[sizeof(struct lchan_chan_info) + ABI_TAIL];
	} big;
	struct lchan_chan_info tmpl = { .size = sizeof(tmpl) };
	struct lchan_chan_info req;

	abi_make_pair(_metadata, self);
	abi_check_sizes(_metadata, self->cli.fd, LCHAN_IOC_CHAN_INFO, &tmpl,
			sizeof(tmpl), sizeof(tmpl), "CHAN_INFO");

	req = tmpl;
	req.flags = 1;
	EXPECT_EQ(-EINVAL,
		  abi_ioctl(self->cli.fd, LCHAN_IOC_CHAN_INFO, &req));

	/* A zero tail: the same answer as liblchan got, tail untouched. */
	memset(&big, 0, sizeof(big));
	big.r.size = sizeof(big);
	ASSERT_EQ(0, abi_ioctl(self->cli.fd, LCHAN_IOC_CHAN_INFO, &big));
	/* As every command, the size field goes back as the caller set it. */
	EXPECT_EQ(sizeof(big), big.r.size);
	EXPECT_EQ(self->cli.info.id, big.r.id);
	EXPECT_EQ(self->cli.info.mmap_size, big.r.mmap_size);
	EXPECT_EQ(self->cli.info.local_qpn, big.r.local_qpn);
	EXPECT_EQ(self->cli.info.cq_off.entries, big.r.cq_off.entries);
	EXPECT_EQ(self->cli.info.remote.port, big.r.remote.port);
	EXPECT_TRUE(abi_zero(big.b + sizeof(big.r), ABI_TAIL));
}

TEST_F_TIMEOUT(abi, enter, 60)
{
	union {
		struct lchan_enter_args r;
		char b[sizeof(struct lchan_enter_args) + ABI_TAIL];
	} big;
	struct lchan_enter_args tmpl = { .size = sizeof(tmpl) };
	struct lchan_enter_args req;
	int fd;

	abi_make_pair(_metadata, self);
	fd = self->cli.fd;
	abi_check_sizes(_metadata, fd, LCHAN_IOC_ENTER, &tmpl, sizeof(tmpl),
			sizeof(tmpl), "ENTER");

	req = tmpl;
	req.flags = 1U << 2;
	EXPECT_EQ(-EINVAL, abi_ioctl(fd, LCHAN_IOC_ENTER, &req));
	req.flags = 1U << 31;
	EXPECT_EQ(-EINVAL, abi_ioctl(fd, LCHAN_IOC_ENTER, &req));
	req = tmpl;
	req.resv = 1;
	EXPECT_EQ(-EINVAL, abi_ioctl(fd, LCHAN_IOC_ENTER, &req));

	/* More completions than the CQ holds could never arrive. */
	req = tmpl;
	req.flags = LCHAN_ENTER_GETEVENTS;
	req.min_complete = self->cli.cq.entries + 1;
	EXPECT_EQ(-EINVAL, abi_ioctl(fd, LCHAN_IOC_ENTER, &req));
	req.flags = 0;
	EXPECT_EQ(-EINVAL, abi_ioctl(fd, LCHAN_IOC_ENTER, &req));
	/* A full CQ is fine; without GETEVENTS nothing waits. */
	req.min_complete = self->cli.cq.entries;
	EXPECT_EQ(0, abi_ioctl(fd, LCHAN_IOC_ENTER, &req));

	/* A zero tail: a plain submit of nothing on a connected channel. */
	memset(&big, 0, sizeof(big));
	big.r.size = sizeof(big);
	big.r.sq_consumed = 7;
	ASSERT_EQ(0, abi_ioctl(fd, LCHAN_IOC_ENTER, &big));
	EXPECT_EQ(0, big.r.sq_consumed);
	EXPECT_EQ(0, big.r.rq_consumed);
	EXPECT_EQ(0, big.r.cq_ready);
	EXPECT_EQ(LCHAN_STATE_CONNECTED, big.r.state);
	EXPECT_TRUE(abi_zero(big.b + sizeof(big.r), ABI_TAIL));
}

TEST_F_TIMEOUT(abi, establish, 60)
{
	union {
		struct lchan_establish_args r;
		char b[sizeof(struct lchan_establish_args) + ABI_TAIL];
	} big;
	struct lchan_establish_args tmpl = { .size = sizeof(tmpl) };
	struct lchan_establish_args req;
	int fd;

	abi_make_pair(_metadata, self);
	fd = self->cli.fd;
	abi_check_sizes(_metadata, fd, LCHAN_IOC_ESTABLISH, &tmpl,
			sizeof(tmpl), sizeof(tmpl), "ESTABLISH");

	req = tmpl;
	req.flags = 1;
	EXPECT_EQ(-EINVAL, abi_ioctl(fd, LCHAN_IOC_ESTABLISH, &req));
	req = tmpl;
	req.resv = 1;
	EXPECT_EQ(-EINVAL, abi_ioctl(fd, LCHAN_IOC_ESTABLISH, &req));
	req = tmpl;
	req.timeout_ms = 600001;
	EXPECT_EQ(-EINVAL, abi_ioctl(fd, LCHAN_IOC_ESTABLISH, &req));

	/* Both ends are connected already: the connecting and the accepted. */
	req = tmpl;
	EXPECT_EQ(-EISCONN, abi_ioctl(fd, LCHAN_IOC_ESTABLISH, &req));
	req = tmpl;
	EXPECT_EQ(-EISCONN,
		  abi_ioctl(self->srv.fd, LCHAN_IOC_ESTABLISH, &req));

	memset(&big, 0, sizeof(big));
	big.r.size = sizeof(big);
	EXPECT_EQ(-EISCONN, abi_ioctl(fd, LCHAN_IOC_ESTABLISH, &big));
	/* Still usable after all that. */
	EXPECT_EQ(LCHAN_STATE_CONNECTED, lchan_chan_state(&self->cli));
}

TEST_F_TIMEOUT(abi, mmap_ring, 60)
{
	const int prot = PROT_READ | PROT_WRITE;
	long page = self->page;
	size_t size;
	char *p;

	abi_make_pair(_metadata, self);
	size = self->cli.info.mmap_size;
	ASSERT_EQ(0, size % page);

	/* Only offset LCHAN_OFF_RINGS exists. */
	errno = 0;
	p = mmap(NULL, size, prot, MAP_SHARED, self->cli.fd, page);
	EXPECT_TRUE(p == MAP_FAILED);
	EXPECT_EQ(EINVAL, errno);
	if (p != MAP_FAILED)
		munmap(p, size);

	/* The whole ring, no more... */
	errno = 0;
	p = mmap(NULL, size + page, prot, MAP_SHARED, self->cli.fd,
		 LCHAN_OFF_RINGS);
	EXPECT_TRUE(p == MAP_FAILED);
	EXPECT_EQ(EINVAL, errno);
	if (p != MAP_FAILED)
		munmap(p, size + page);

	/* ...and no less. */
	if (size > (size_t)page) {
		errno = 0;
		p = mmap(NULL, size - page, prot, MAP_SHARED, self->cli.fd,
			 LCHAN_OFF_RINGS);
		EXPECT_TRUE(p == MAP_FAILED);
		EXPECT_EQ(EINVAL, errno);
		if (p != MAP_FAILED)
			munmap(p, size - page);
	}

	/* A second right mapping shows the ring liblchan mapped. */
	p = mmap(NULL, size, prot, MAP_SHARED, self->cli.fd, LCHAN_OFF_RINGS);
	ASSERT_TRUE(p != MAP_FAILED) TH_LOG("mmap: %s", strerror(errno));
	EXPECT_EQ(self->cli.sq.entries,
		  *(__u32 *)(p + self->cli.info.sq_off.ring_entries));
	EXPECT_EQ(self->cli.cq.entries,
		  *(__u32 *)(p + self->cli.info.cq_off.ring_entries));
	EXPECT_EQ(*self->cli.cq.khead,
		  *(__u32 *)(p + self->cli.info.cq_off.head));
	EXPECT_EQ(0, munmap(p, size));
}

TEST_F_TIMEOUT(abi, unknown_ioctl_enotty, 60)
{
	const unsigned long next = _IO(LCHAN_IOCTL_TYPE,
				       LCHAN_CMD_CTX_SETUP + 1);
	const unsigned long ctx_bad[] = {
		LCHAN_IOC_ACCEPT, LCHAN_IOC_CHAN_INFO, LCHAN_IOC_ENTER,
		LCHAN_IOC_ESTABLISH, next,
		_IO(LCHAN_IOCTL_TYPE, LCHAN_CMD_INFO - 1),
		/* The size lives in the struct, never in the number. */
		_IOWR(LCHAN_IOCTL_TYPE, LCHAN_CMD_INFO, struct lchan_info),
		_IOR(LCHAN_IOCTL_TYPE, LCHAN_CMD_MR_REG, struct lchan_mr_reg_args),
		_IO(LCHAN_IOCTL_TYPE + 1, LCHAN_CMD_INFO),
	};
	const unsigned long lst_bad[] = {
		LCHAN_IOC_INFO, LCHAN_IOC_MR_REG, LCHAN_IOC_MR_DEREG,
		LCHAN_IOC_LISTEN, LCHAN_IOC_CONNECT, LCHAN_IOC_CHAN_INFO,
		LCHAN_IOC_ENTER, LCHAN_IOC_ESTABLISH, LCHAN_IOC_CTX_SETUP,
		next,
		_IOWR(LCHAN_IOCTL_TYPE, LCHAN_CMD_ACCEPT,
		      struct lchan_accept_args),
	};
	const unsigned long chan_bad[] = {
		LCHAN_IOC_INFO, LCHAN_IOC_MR_REG, LCHAN_IOC_MR_DEREG,
		LCHAN_IOC_LISTEN, LCHAN_IOC_CONNECT, LCHAN_IOC_ACCEPT,
		LCHAN_IOC_CTX_SETUP, next,
		_IOWR(LCHAN_IOCTL_TYPE, LCHAN_CMD_ENTER, struct lchan_enter_args),
	};

	abi_make_pair(_metadata, self);
	abi_make_listener(_metadata, self);
	abi_expect_enotty(_metadata, self->ctx.fd, ctx_bad,
			  ARRAY_SIZE(ctx_bad), "ctx");
	abi_expect_enotty(_metadata, self->lst.fd, lst_bad,
			  ARRAY_SIZE(lst_bad), "listener");
	abi_expect_enotty(_metadata, self->cli.fd, chan_bad,
			  ARRAY_SIZE(chan_bad), "channel");
	abi_expect_enotty(_metadata, self->srv.fd, chan_bad,
			  ARRAY_SIZE(chan_bad), "accepted channel");
}

TEST_HARNESS_MAIN
