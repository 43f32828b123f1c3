// SPDX-License-Identifier: GPL-2.0
/*
 * lchan_fuzz: seeded random ring entries and ioctls against lchan, next to
 * one valid channel whose traffic is checked byte for byte.
 *
 * Environment: LCHAN_FUZZ_SEED (default: time), LCHAN_FUZZ_ENTRIES
 * (random ring entries per device, default 100000), LCHAN_FUZZ_IOCTLS
 * (default 10000).  The seed is printed so a failure can be replayed.
 *
 * The fuzzed channel lives in its own contexts: its garbage may break its
 * own connection (it is then rebuilt) but must never touch the valid
 * channel, leak, warn or oops.
 */
#include <sys/ioctl.h>
#include <sys/mman.h>

#include "kselftest_harness.h"
#include "lchan_test.h"

struct rng {
	uint64_t s;
};

static uint64_t rnd(struct rng *r)
{
	r->s ^= r->s << 13;
	r->s ^= r->s >> 7;
	r->s ^= r->s << 17;
	return r->s;
}

static uint64_t pick(struct rng *r, const uint64_t *v, unsigned n)
{
	return v[rnd(r) % n];
}

static unsigned long env_ul(const char *name, unsigned long def)
{
	const char *v = getenv(name);

	return v && *v ? strtoul(v, NULL, 0) : def;
}

FIXTURE(fuzz) {
	struct lchan_t_dev d;
	struct lchan_t_ep vs, vc;	/* the valid pair */
	struct lchan_t_ep fs, fc;	/* the fuzzed pair */
	struct rng r;
	unsigned long rebuilt, cqes, valid_msgs;
};

LCHAN_T_VARIANTS(fuzz);

static int fuzz_pair(struct lchan_t_dev *d, struct lchan_t_ep *s,
		     struct lchan_t_ep *c)
{
	struct lchan_opts opts = { .sq_entries = 64, .rq_entries = 64 };

	s->slot = c->slot = 4096;
	s->nrecv = c->nrecv = 16;
	s->nsend = c->nsend = 16;
	s->access = c->access = LCHAN_ACCESS_ALL;
	return lchan_t_ep_pair(s, c, d->addr, &opts);
}

FIXTURE_SETUP(fuzz)
{
	uint64_t seed = env_ul("LCHAN_FUZZ_SEED", 0);

	LCHAN_T_NEED_DEV(&self->d, variant->kind);
	lchan_t_raise_memlock();
	if (!seed)
		seed = (uint64_t)time(NULL);
	/* Each device gets its own stream from the same seed. */
	self->r.s = seed * 2654435761u + variant->kind[0];
	TH_LOG("seed %llu (LCHAN_FUZZ_SEED to replay)",
	       (unsigned long long)seed);
	ASSERT_EQ(0, fuzz_pair(&self->d, &self->vs, &self->vc));
	ASSERT_EQ(0, fuzz_pair(&self->d, &self->fs, &self->fc));
}

FIXTURE_TEARDOWN(fuzz)
{
	lchan_t_ep_close(&self->fc);
	lchan_t_ep_close(&self->fs);
	lchan_t_ep_close(&self->vc);
	lchan_t_ep_close(&self->vs);
}

/* A random 64-bit value, leaning toward the interesting ones. */
static uint64_t fuzz_u64(struct rng *r, const struct lchan_t_ep *ep)
{
	const uint64_t edges[] = {
		0, 1, 7, 8, 4095, 4096, 0x7fffffff, 0xffffffff,
		~0ULL, ~0ULL - 7, 1ULL << 63, 0xffff888000000000ULL,
		(uintptr_t)ep->buf, (uintptr_t)ep->buf + 4096 * 31,
		(uintptr_t)ep->buf - 1, (uintptr_t)ep->buf + 4096 * 32,
	};

	return rnd(r) % 3 ? pick(r, edges, ARRAY_SIZE(edges)) : rnd(r);
}

/* Pure noise in every byte of an entry of @len bytes (a multiple of 8). */
static void fuzz_noise(struct rng *r, void *entry, size_t len)
{
	uint64_t *raw = entry;
	size_t i;

	for (i = 0; i < len / 8; i++)
		raw[i] = rnd(r);
}

static void fuzz_sqe(struct rng *r, struct lchan_sqe *sqe,
		     const struct lchan_t_ep *ep, const struct lchan_t_ep *peer,
		     const struct lchan_t_ep *other)
{
	const uint64_t handles[] = {
		0, ep->mr.handle, other->mr.handle, ep->mr.handle + 1,
		0x7fffffff, 0xffffffff,
	};

	if (rnd(r) % 8 == 0) {
		fuzz_noise(r, sqe, sizeof(*sqe));
		return;
	}
	memset(sqe, 0, sizeof(*sqe));
	sqe->opcode = rnd(r) % 4 ? 1 + rnd(r) % (LCHAN_OP_MAX - 1) : rnd(r);
	sqe->flags = rnd(r) % 4 ? 0 : rnd(r);
	sqe->num_sge = rnd(r) % 4 ? rnd(r) % 3 : rnd(r);
	sqe->resv0 = rnd(r) % 16 ? 0 : 1;
	sqe->mr = pick(r, handles, ARRAY_SIZE(handles));
	sqe->addr = fuzz_u64(r, ep);
	sqe->len = rnd(r) % 2 ? rnd(r) % 9000 : fuzz_u64(r, ep);
	sqe->imm_data = rnd(r) % 4 ? 0 : rnd(r);
	sqe->user_data = rnd(r);
	sqe->remote_addr = rnd(r) % 2 ? (uintptr_t)peer->buf + rnd(r) % 8192 :
			   fuzz_u64(r, peer);
	sqe->rkey = rnd(r) % 2 ? peer->mr.rkey : (uint32_t)rnd(r);
	sqe->resv1 = rnd(r) % 16 ? 0 : rnd(r);
	sqe->compare_add = rnd(r) % 2 ? 0 : rnd(r);
	sqe->swap = rnd(r) % 2 ? 0 : rnd(r);
}

static void fuzz_rqe(struct rng *r, struct lchan_rqe *rqe,
		     const struct lchan_t_ep *ep, const struct lchan_t_ep *other)
{
	const uint64_t handles[] = {
		0, ep->mr.handle, other->mr.handle, 0x7fffffff,
	};

	if (rnd(r) % 8 == 0) {
		fuzz_noise(r, rqe, sizeof(*rqe));
		return;
	}
	memset(rqe, 0, sizeof(*rqe));
	rqe->mr = pick(r, handles, ARRAY_SIZE(handles));
	rqe->addr = fuzz_u64(r, ep);
	rqe->len = rnd(r) % 2 ? rnd(r) % 9000 : fuzz_u64(r, ep);
	rqe->user_data = rnd(r);
	rqe->flags = rnd(r) % 8 ? 0 : rnd(r);
	rqe->num_sge = rnd(r) % 4 ? rnd(r) % 3 : rnd(r);
	rqe->resv0 = rnd(r) % 16 ? 0 : 1;
	rqe->resv = rnd(r) % 16 ? 0 : rnd(r);
}

/* Take every CQE; statuses must be ones the ABI defines. */
static int reap_all(struct __test_metadata *_metadata, struct lchan_t_ep *ep,
		    unsigned long *count)
{
	struct lchan_cqe *c;

	while (!lchan_peek_cqe(&ep->chan, &c)) {
		EXPECT_TRUE(c->status <= LCHAN_CQE_GENERAL_ERR ||
			    (c->status >= LCHAN_CQE_BAD_OPCODE &&
			     c->status <= LCHAN_CQE_BAD_ALIGN))
			TH_LOG("unknown status %u", c->status);
		if (c->status > LCHAN_CQE_GENERAL_ERR &&
		    c->status < LCHAN_CQE_BAD_OPCODE)
			return -EIO;
		lchan_cqe_seen(&ep->chan);
		(*count)++;
	}
	return 0;
}

static int is_down(struct lchan_t_ep *ep)
{
	struct pollfd pfd = { .fd = ep->chan.fd, .events = POLLRDHUP };

	return poll(&pfd, 1, 0) > 0 && (pfd.revents & (POLLRDHUP | POLLHUP));
}

/* One batch of random entries on the fuzzed client (and server RQ). */
/* Garbage broke the fuzzed channel's own connection: build another. */
static void fuzz_rebuild(struct __test_metadata *_metadata,
			 FIXTURE_DATA(fuzz) *self)
{
	lchan_t_ep_close(&self->fc);
	lchan_t_ep_close(&self->fs);
	memset(&self->fc, 0, sizeof(self->fc));
	memset(&self->fs, 0, sizeof(self->fs));
	ASSERT_EQ(0, fuzz_pair(&self->d, &self->fs, &self->fc));
	self->rebuilt++;
}

static void fuzz_batch(struct __test_metadata *_metadata,
		       FIXTURE_DATA(fuzz) *self, unsigned *done)
{
	struct rng *r = &self->r;
	struct lchan_chan *chan = &self->fc.chan;
	unsigned n = 1 + rnd(r) % 48, i;
	struct lchan_enter_args req = { .size = sizeof(req) };

	for (i = 0; i < n; i++) {
		struct lchan_sqe *sqe = lchan_get_sqe(chan);
		struct lchan_rqe *rqe = rnd(r) % 3 ? NULL :
					lchan_get_rqe(&self->fs.chan);

		if (sqe)
			fuzz_sqe(r, sqe, &self->fc, &self->fs, &self->vc);
		if (rqe)
			fuzz_rqe(r, rqe, &self->fs, &self->vs);
	}
	*done += n;
	if (rnd(r) % 64 == 0) {
		/* A tail far ahead or behind: refused, then put right. */
		/* Relative to the kernel's head: ahead by far, or behind. */
		unsigned head = lchan_load_acquire(chan->sq.khead);
		unsigned bogus = head + (rnd(r) % 2 ? 1000000 : -3u);

		lchan_store_release(chan->sq.ktail, bogus);
		EXPECT_EQ(-1, ioctl(chan->fd, LCHAN_IOC_ENTER, &req));
		EXPECT_EQ(EINVAL, errno);
	}
	lchan_submit(&self->fs.chan);
	lchan_submit(chan);
	usleep(rnd(r) % 2 ? 0 : 200);
	reap_all(_metadata, &self->fc, &self->cqes);
	reap_all(_metadata, &self->fs, &self->cqes);
}

/* The valid pair: a few messages, every byte checked. */
static void valid_round(struct __test_metadata *_metadata,
			FIXTURE_DATA(fuzz) *self)
{
	struct lchan_t_ep *tx = &self->vc, *rx = &self->vs;
	struct lchan_cqe cqe;
	unsigned i, k = 4;

	for (i = 0; i < k; i++) {
		struct lchan_sqe *sqe = lchan_get_sqe(&tx->chan);
		unsigned id = self->valid_msgs + i;
		unsigned len = 1 + (id * 977) % 4096;

		ASSERT_NE(NULL, sqe);
		lchan_t_fill(lchan_t_send_slot(tx, id), id, len);
		lchan_prep_send(sqe, &tx->mr, lchan_t_send_slot(tx, id), len,
				id);
	}
	ASSERT_LE(0, lchan_submit(&tx->chan));
	for (i = 0; i < k; i++) {
		unsigned id = self->valid_msgs + i;
		unsigned len = 1 + (id * 977) % 4096;

		ASSERT_EQ(0, lchan_t_reap(rx, &cqe, 10000))
			TH_LOG("valid message %u lost", id);
		ASSERT_EQ(LCHAN_CQE_OK, cqe.status);
		ASSERT_EQ(len, cqe.byte_len);
		ASSERT_EQ(-1, lchan_t_check(lchan_t_recv_slot(rx,
				cqe.user_data), id, len));
		ASSERT_EQ(0, lchan_t_post_recv(rx, cqe.user_data));
		ASSERT_EQ(0, lchan_t_reap(tx, &cqe, 10000));
		ASSERT_EQ(LCHAN_CQE_OK, cqe.status);
	}
	ASSERT_LE(0, lchan_submit(&rx->chan));
	self->valid_msgs += k;
}

TEST_F_TIMEOUT(fuzz, ring_entries, 900)
{
	unsigned long total = env_ul("LCHAN_FUZZ_ENTRIES", 100000);
	unsigned done = 0, since_valid = 0;

	while (done < total) {
		fuzz_batch(_metadata, self, &done);
		if (++since_valid >= 16) {
			valid_round(_metadata, self);
			since_valid = 0;
		}
		if (is_down(&self->fc) || is_down(&self->fs))
			fuzz_rebuild(_metadata, self);
	}
	valid_round(_metadata, self);
	TH_LOG("%u entries, %lu CQEs, %lu valid messages checked, fuzzed channel rebuilt %lu times",
	       done, self->cqes, self->valid_msgs, self->rebuilt);
}

/* Random bytes for an ioctl argument, its size field random too. */
static void fuzz_arg(struct rng *r, uint8_t *arg, size_t cap)
{
	const uint32_t sizes[] = { 0, 4, 8, 15, 16, 23, 24, 40, 48, 80, 184,
				   200, 4096, 4097, 0xffffffff };
	size_t i;

	for (i = 0; i < cap; i++)
		arg[i] = rnd(r) % 3 ? 0 : (uint8_t)rnd(r);
	*(uint32_t *)arg = rnd(r) % 2 ? sizes[rnd(r) % ARRAY_SIZE(sizes)] :
					(uint32_t)rnd(r);
}

TEST_F_TIMEOUT(fuzz, ioctls, 900)
{
	const unsigned long cmds[] = {
		LCHAN_IOC_INFO, LCHAN_IOC_MR_REG, LCHAN_IOC_MR_DEREG,
		LCHAN_IOC_LISTEN, LCHAN_IOC_CONNECT, LCHAN_IOC_ACCEPT,
		LCHAN_IOC_CHAN_INFO, LCHAN_IOC_ENTER, LCHAN_IOC_ESTABLISH,
		LCHAN_IOC_CTX_SETUP,
	};
	unsigned long total = env_ul("LCHAN_FUZZ_IOCTLS", 10000), i;
	struct lchan_listener lst;
	struct lchan_ctx scratch;
	uint8_t arg[8192];
	char port[16];
	int fds[4];

	snprintf(port, sizeof(port), "%u", lchan_t_port());
	ASSERT_EQ(0, lchan_listen(&self->fc.ctx, self->d.addr, port, 2,
				  LCHAN_FD_NONBLOCK, &lst));
	ASSERT_EQ(0, lchan_ctx_open(&scratch));
	for (i = 0; i < total; i++) {
		struct rng *r = &self->r;
		unsigned long cmd = rnd(r) % 8 ? cmds[rnd(r) % ARRAY_SIZE(cmds)] :
				    _IO(LCHAN_IOCTL_TYPE, rnd(r) % 256);
		void *p = arg;
		long ret;
		int fd;

		fds[0] = self->fc.ctx.fd;
		fds[1] = self->fc.chan.fd;
		fds[2] = lst.fd;
		fds[3] = scratch.fd;
		fd = fds[rnd(r) % 4];
		fuzz_arg(r, arg, sizeof(arg));
		/* Keep calls bounded: no endless waits or connects. */
		if (cmd == LCHAN_IOC_ENTER) {
			struct lchan_enter_args *e = p;

			if (e->flags & LCHAN_ENTER_GETEVENTS) {
				e->flags |= LCHAN_ENTER_TIMEOUT;
				e->timeout_ns %= 2000000;
			}
		}
		if (cmd == LCHAN_IOC_CONNECT)
			((struct lchan_connect_args *)p)->timeout_ms = 1 + rnd(r) % 50;
		if (cmd == LCHAN_IOC_ESTABLISH)
			((struct lchan_establish_args *)p)->timeout_ms = 1 + rnd(r) % 50;
		if (rnd(r) % 32 == 0)
			p = rnd(r) % 2 ? NULL : (void *)0xffff888000001000ULL;
		ret = ioctl(fd, cmd, p);
		/* Whatever it created goes at once. */
		if (ret > 2 && (cmd == LCHAN_IOC_LISTEN ||
				cmd == LCHAN_IOC_CONNECT ||
				cmd == LCHAN_IOC_ACCEPT))
			close(ret);
		if (!ret && cmd == LCHAN_IOC_CTX_SETUP && fd == scratch.fd) {
			lchan_ctx_close(&scratch);
			ASSERT_EQ(0, lchan_ctx_open(&scratch));
		}
		if (i % 500 == 499) {
			valid_round(_metadata, self);
			/* The scratch context starts over now and then. */
			lchan_ctx_close(&scratch);
			ASSERT_EQ(0, lchan_ctx_open(&scratch));
		}
		if (is_down(&self->fc))
			fuzz_rebuild(_metadata, self);
	}
	valid_round(_metadata, self);
	lchan_listener_close(&lst);
	lchan_ctx_close(&scratch);
	TH_LOG("%lu ioctls, %lu valid messages checked, fuzzed channel rebuilt %lu times",
	       total, self->valid_msgs, self->rebuilt);
}

TEST_HARNESS_MAIN
