// SPDX-License-Identifier: GPL-2.0
/*
 * Data through the rings: SEND/RECV with every byte checked, SEND_WITH_IMM,
 * a whole ring in one ENTER (of one buffer each and of many), and the
 * rejection of bad ring entries.
 */
#include "kselftest_harness.h"
#include "lchan_test.h"

#define SLOT		65536
#define NRECV		64
#define NSEND		32

FIXTURE(data) {
	struct lchan_t_dev d;
	struct lchan_t_ep srv, cli;
};

LCHAN_T_VARIANTS(data);

FIXTURE_SETUP(data)
{
	struct lchan_opts opts = {
		.sq_entries = NSEND, .rq_entries = NRECV,
	};
	int ret;

	LCHAN_T_NEED_DEV(&self->d, variant->kind);
	lchan_t_raise_memlock();
	self->srv.slot = self->cli.slot = SLOT;
	self->srv.nrecv = self->cli.nrecv = NRECV;
	self->srv.nsend = self->cli.nsend = NSEND;
	ret = lchan_t_ep_pair(&self->srv, &self->cli, self->d.addr, &opts);
	ASSERT_EQ(0, ret) TH_LOG("pair over %s: %s", self->d.addr,
				 strerror(-ret));
}

FIXTURE_TEARDOWN(data)
{
	lchan_t_ep_close(&self->cli);
	lchan_t_ep_close(&self->srv);
}

/* Message sizes from 1 B to 64 KiB, spread over every power of two. */
static unsigned msg_size(unsigned i, unsigned seed)
{
	unsigned h = (i + 1) * 2654435761u ^ seed;
	unsigned bits;

	if (i == 0)
		return 1;
	if (i == 1)
		return SLOT;
	h ^= h >> 15;
	bits = h % 17;
	return 1 + ((h >> 5) & ((1u << bits) - 1)) % SLOT;
}

struct xfer {
	unsigned sent, send_done, recvd;
};

static int reap_rx(struct __test_metadata *_metadata, struct lchan_t_ep *rx,
		   struct xfer *x, unsigned seed, unsigned *progress)
{
	struct lchan_cqe *cqe;
	unsigned reposted = 0;

	while (!lchan_peek_cqe(&rx->chan, &cqe)) {
		unsigned size = msg_size(x->recvd, seed);
		unsigned slot = (unsigned)cqe->user_data;
		long bad;

		EXPECT_EQ(LCHAN_CQE_OK, cqe->status)
			TH_LOG("recv %u: %s", x->recvd,
			       lchan_cqe_status_str(cqe->status));
		EXPECT_EQ(LCHAN_CQE_RECV, cqe->opcode);
		EXPECT_EQ(size, cqe->byte_len) TH_LOG("message %u", x->recvd);
		if (cqe->status || cqe->byte_len != size)
			return -EIO;
		bad = lchan_t_check(lchan_t_recv_slot(rx, slot), x->recvd,
				    size);
		EXPECT_EQ(-1, bad) TH_LOG("message %u byte %ld", x->recvd, bad);
		if (bad != -1)
			return -EIO;
		lchan_cqe_seen(&rx->chan);
		if (lchan_t_post_recv(rx, slot))
			return -ENOSPC;
		reposted++;
		x->recvd++;
		(*progress)++;
	}
	if (reposted && lchan_submit(&rx->chan) < 0)
		return -EIO;
	return 0;
}

static int reap_tx(struct __test_metadata *_metadata, struct lchan_t_ep *tx,
		   struct xfer *x, unsigned *progress)
{
	struct lchan_cqe *cqe;

	while (!lchan_peek_cqe(&tx->chan, &cqe)) {
		EXPECT_EQ(LCHAN_CQE_OK, cqe->status)
			TH_LOG("send %u: %s", x->send_done,
			       lchan_cqe_status_str(cqe->status));
		EXPECT_EQ(x->send_done, cqe->user_data);
		if (cqe->status || cqe->user_data != x->send_done)
			return -EIO;
		lchan_cqe_seen(&tx->chan);
		x->send_done++;
		(*progress)++;
	}
	return 0;
}

/*
 * Send @count messages from @tx to @rx.  Never more in flight than @rx has
 * receives posted: iWARP has no receiver-not-ready retry.
 */
static int transfer(struct __test_metadata *_metadata, struct lchan_t_ep *tx,
		    struct lchan_t_ep *rx, unsigned count, unsigned seed)
{
	struct xfer x = { 0 };
	double stall = lchan_t_now();

	while (x.recvd < count || x.send_done < count) {
		unsigned progress = 0, posted = 0;

		while (x.sent < count && x.sent - x.recvd < rx->nrecv &&
		       x.sent - x.send_done < tx->nsend) {
			struct lchan_sqe *sqe = lchan_get_sqe(&tx->chan);
			unsigned size = msg_size(x.sent, seed);
			uint8_t *p = lchan_t_send_slot(tx, x.sent);

			if (!sqe)
				break;
			lchan_t_fill(p, x.sent, size);
			lchan_prep_send(sqe, &tx->mr, p, size, x.sent);
			x.sent++;
			posted++;
		}
		if (posted && lchan_submit(&tx->chan) < 0)
			return -EIO;
		if (reap_rx(_metadata, rx, &x, seed, &progress) ||
		    reap_tx(_metadata, tx, &x, &progress))
			return -EIO;
		if (progress || posted) {
			stall = lchan_t_now();
			continue;
		}
		if (lchan_t_now() - stall > 20) {
			TH_LOG("stalled: sent %u done %u received %u", x.sent,
			       x.send_done, x.recvd);
			return -ETIMEDOUT;
		}
		{
			struct pollfd pfd[2] = {
				{ .fd = rx->chan.fd, .events = POLLIN },
				{ .fd = tx->chan.fd, .events = POLLIN },
			};

			poll(pfd, 2, 100);
		}
	}
	return 0;
}

TEST_F_TIMEOUT(data, ten_thousand_each_way, 600)
{
	ASSERT_EQ(0, transfer(_metadata, &self->cli, &self->srv,
			      lchan_t_count(10000), 1));
	ASSERT_EQ(0, transfer(_metadata, &self->srv, &self->cli,
			      lchan_t_count(10000), 2));
}

TEST_F_TIMEOUT(data, send_with_imm, 120)
{
	struct lchan_cqe cqe;
	unsigned i;

	if (!strcmp(variant->kind, "siw")) {
		struct lchan_sqe *sqe;

		/* iWARP has no immediate data: refused, and the rest runs. */
		EXPECT_EQ(0, self->cli.chan.info.features &
			  LCHAN_FEATURE_SEND_IMM);
		sqe = lchan_get_sqe(&self->cli.chan);
		ASSERT_NE(NULL, sqe);
		lchan_prep_send_imm(sqe, &self->cli.mr,
				    lchan_t_send_slot(&self->cli, 0), 8, 1, 9);
		sqe = lchan_get_sqe(&self->cli.chan);
		ASSERT_NE(NULL, sqe);
		lchan_prep_send(sqe, &self->cli.mr,
				lchan_t_send_slot(&self->cli, 0), 8, 10);
		ASSERT_LE(0, lchan_submit(&self->cli.chan));
		ASSERT_EQ(0, lchan_t_reap(&self->cli, &cqe, 10000));
		EXPECT_EQ(9, cqe.user_data);
		EXPECT_EQ(LCHAN_CQE_UNSUPPORTED, cqe.status);
		ASSERT_EQ(0, lchan_t_reap(&self->cli, &cqe, 10000));
		EXPECT_EQ(10, cqe.user_data);
		EXPECT_EQ(LCHAN_CQE_OK, cqe.status);
		ASSERT_EQ(0, lchan_t_reap(&self->srv, &cqe, 10000));
		EXPECT_EQ(LCHAN_CQE_OK, cqe.status);
		EXPECT_EQ(0, cqe.flags & LCHAN_CQE_F_IMM);
		return;
	}
	ASSERT_NE(0, self->cli.chan.info.features & LCHAN_FEATURE_SEND_IMM);
	for (i = 0; i < 100; i++) {
		struct lchan_sqe *sqe = lchan_get_sqe(&self->cli.chan);
		uint8_t *p = lchan_t_send_slot(&self->cli, i);
		unsigned len = i % 2 ? 0 : 1 + i * 37;

		ASSERT_NE(NULL, sqe);
		lchan_t_fill(p, i, len);
		lchan_prep_send_imm(sqe, &self->cli.mr, p, len,
				    i ^ 0xdeadbeefu, i);
		ASSERT_LE(0, lchan_submit(&self->cli.chan));
		ASSERT_EQ(0, lchan_t_reap(&self->cli, &cqe, 10000));
		ASSERT_EQ(LCHAN_CQE_OK, cqe.status);
		ASSERT_EQ(LCHAN_CQE_SEND_IMM, cqe.opcode);

		ASSERT_EQ(0, lchan_t_reap(&self->srv, &cqe, 10000));
		ASSERT_EQ(LCHAN_CQE_OK, cqe.status);
		ASSERT_EQ(LCHAN_CQE_RECV, cqe.opcode);
		ASSERT_NE(0, cqe.flags & LCHAN_CQE_F_IMM);
		ASSERT_EQ(i ^ 0xdeadbeefu, cqe.imm_data);
		ASSERT_EQ(len, cqe.byte_len);
		ASSERT_EQ(-1, lchan_t_check(lchan_t_recv_slot(&self->srv,
				cqe.user_data), i, len));
		ASSERT_EQ(0, lchan_t_post_recv(&self->srv, cqe.user_data));
		ASSERT_LE(0, lchan_submit(&self->srv.chan));
	}
}

TEST_F_TIMEOUT(data, whole_ring_in_one_enter, 120)
{
	struct lchan_enter_args req = { .size = sizeof(req) };
	struct lchan_cqe cqe;
	unsigned i, n = self->cli.chan.sq.entries;

	ASSERT_EQ(NSEND, n);
	for (i = 0; i < n; i++) {
		struct lchan_sqe *sqe = lchan_get_sqe(&self->cli.chan);
		uint8_t *p = lchan_t_send_slot(&self->cli, i);

		ASSERT_NE(NULL, sqe);
		lchan_t_fill(p, i, 100 + i);
		lchan_prep_send(sqe, &self->cli.mr, p, 100 + i, i);
	}
	/* The ring is full now. */
	ASSERT_EQ(NULL, lchan_get_sqe(&self->cli.chan));
	lchan_publish(&self->cli.chan);
	ASSERT_EQ(0, ioctl(self->cli.chan.fd, LCHAN_IOC_ENTER, &req));
	ASSERT_EQ(n, req.sq_consumed);
	for (i = 0; i < n; i++) {
		ASSERT_EQ(0, lchan_t_reap(&self->cli, &cqe, 10000));
		ASSERT_EQ(LCHAN_CQE_OK, cqe.status);
		ASSERT_EQ(i, cqe.user_data);
		ASSERT_EQ(0, lchan_t_reap(&self->srv, &cqe, 10000));
		ASSERT_EQ(LCHAN_CQE_OK, cqe.status);
		ASSERT_EQ(100 + i, cqe.byte_len);
		ASSERT_EQ(-1, lchan_t_check(lchan_t_recv_slot(&self->srv,
				cqe.user_data), i, 100 + i));
	}
}

/*
 * A ring of SENDs with as many buffers as the device takes, in one ENTER:
 * their SGE lists together outgrow what the kernel hands the device in one
 * post call, so the batch goes in more than one, in order, and each
 * message arrives gathered from its pieces.
 */
TEST_F_TIMEOUT(data, multi_sge_ring_in_one_enter, 120)
{
	struct lchan_enter_args req = { .size = sizeof(req) };
	unsigned max = self->cli.chan.info.max_send_sge;
	unsigned i, j, n, per, sges = 0;
	struct lchan_sge sg[16];
	struct lchan_cqe cqe;

	ASSERT_NE(0, self->cli.chan.info.features & LCHAN_FEATURE_MULTI_SGE);
	if (max > 16)
		max = 16;
	per = 1 + (max - 1 + LCHAN_SQE_SGES - 1) / LCHAN_SQE_SGES;
	n = self->cli.chan.sq.entries / per;
	for (i = 0; i < n; i++) {
		struct lchan_sqe *sqe = lchan_get_sqe(&self->cli.chan);
		uint8_t *slot = lchan_t_send_slot(&self->cli, i);

		ASSERT_NE(NULL, sqe);
		/* Piece j of message i: i + j fill, 100 + 7 j bytes. */
		for (j = 0; j < max; j++) {
			uint8_t *p = slot + j * 1024;

			sg[j] = (struct lchan_sge){ .mr = self->cli.mr.handle,
						    .len = 100 + 7 * j,
						    .addr = (uintptr_t)p };
			lchan_t_fill(p, i + j, sg[j].len);
		}
		lchan_prep_send(sqe, &self->cli.mr, NULL, 0, i);
		ASSERT_EQ(0, lchan_sqe_set_sges(&self->cli.chan, sqe, sg, max));
		sges += max;
	}
	/*
	 * A post call carries 64 buffers, and the kernel posts what it has
	 * before a request that might not fit: past 48, so this needs two.
	 */
	ASSERT_LT(48, sges) TH_LOG("%u SENDs of %u buffers", n, max);
	lchan_publish(&self->cli.chan);
	ASSERT_EQ(0, ioctl(self->cli.chan.fd, LCHAN_IOC_ENTER, &req));
	ASSERT_EQ(n, req.sq_consumed);
	for (i = 0; i < n; i++) {
		const uint8_t *got;

		ASSERT_EQ(0, lchan_t_reap(&self->cli, &cqe, 10000));
		ASSERT_EQ(LCHAN_CQE_OK, cqe.status)
			TH_LOG("send %u: %s", i,
			       lchan_cqe_status_str(cqe.status));
		ASSERT_EQ(i, cqe.user_data);
		ASSERT_EQ(0, lchan_t_reap(&self->srv, &cqe, 10000));
		ASSERT_EQ(LCHAN_CQE_OK, cqe.status);
		ASSERT_EQ(max * 100 + 7 * max * (max - 1) / 2, cqe.byte_len);
		got = lchan_t_recv_slot(&self->srv, cqe.user_data);
		for (j = 0; j < max; j++) {
			ASSERT_EQ(-1, lchan_t_check(got, i + j, 100 + 7 * j))
				TH_LOG("message %u, piece %u", i, j);
			got += 100 + 7 * j;
		}
	}
}

/* A bad SQE: how to spoil a valid one, and the status it must get. */
struct bad_sqe {
	const char *name;
	void (*spoil)(struct lchan_sqe *sqe, struct lchan_t_ep *ep);
	unsigned status;
};

static void spoil_op0(struct lchan_sqe *s, struct lchan_t_ep *e)
{ (void)e; s->opcode = LCHAN_OP_NOP; }
static void spoil_op99(struct lchan_sqe *s, struct lchan_t_ep *e)
{ (void)e; s->opcode = 99; }
static void spoil_opff(struct lchan_sqe *s, struct lchan_t_ep *e)
{ (void)e; s->opcode = 0xff; }
static void spoil_flags(struct lchan_sqe *s, struct lchan_t_ep *e)
{ (void)e; s->flags = 0x80; }
static void spoil_resv0(struct lchan_sqe *s, struct lchan_t_ep *e)
{ (void)e; s->resv0 = 1; }
static void spoil_raddr(struct lchan_sqe *s, struct lchan_t_ep *e)
{ (void)e; s->remote_addr = 0x1000; }
static void spoil_rkey(struct lchan_sqe *s, struct lchan_t_ep *e)
{ (void)e; s->rkey = 7; }
static void spoil_resv1(struct lchan_sqe *s, struct lchan_t_ep *e)
{ (void)e; s->resv1 = 1; }
static void spoil_compare(struct lchan_sqe *s, struct lchan_t_ep *e)
{ (void)e; s->compare_add = 1; }
static void spoil_swap(struct lchan_sqe *s, struct lchan_t_ep *e)
{ (void)e; s->swap = 1ULL << 63; }
static void spoil_imm(struct lchan_sqe *s, struct lchan_t_ep *e)
{ (void)e; s->imm_data = 5; }
static void spoil_nsge(struct lchan_sqe *s, struct lchan_t_ep *e)
{ (void)e; s->num_sge = 200; }
static void spoil_mr(struct lchan_sqe *s, struct lchan_t_ep *e)
{ (void)e; s->mr = 0x7fffffff; }
static void spoil_mr0(struct lchan_sqe *s, struct lchan_t_ep *e)
{ (void)e; s->mr = 0; }
static void spoil_before(struct lchan_sqe *s, struct lchan_t_ep *e)
{ s->addr = (uintptr_t)e->buf - 1; }
static void spoil_after(struct lchan_sqe *s, struct lchan_t_ep *e)
{
	s->addr = (uintptr_t)e->buf + e->mr.length - 10;
	s->len = 11;
}
static void spoil_wrap(struct lchan_sqe *s, struct lchan_t_ep *e)
{ (void)e; s->addr = ~0ULL - 4; }
static void spoil_len(struct lchan_sqe *s, struct lchan_t_ep *e)
{ (void)e; s->len = 0xffffffffu; }

static const struct bad_sqe bad_sqes[] = {
	{ "opcode 0", spoil_op0, LCHAN_CQE_BAD_OPCODE },
	{ "opcode 99", spoil_op99, LCHAN_CQE_BAD_OPCODE },
	{ "opcode 255", spoil_opff, LCHAN_CQE_BAD_OPCODE },
	{ "unknown flag", spoil_flags, LCHAN_CQE_BAD_FLAGS },
	{ "resv0", spoil_resv0, LCHAN_CQE_BAD_RESV },
	{ "remote_addr", spoil_raddr, LCHAN_CQE_BAD_RESV },
	{ "rkey", spoil_rkey, LCHAN_CQE_BAD_RESV },
	{ "resv1", spoil_resv1, LCHAN_CQE_BAD_RESV },
	{ "compare_add on a SEND", spoil_compare, LCHAN_CQE_BAD_RESV },
	{ "swap on a SEND", spoil_swap, LCHAN_CQE_BAD_RESV },
	{ "imm_data on a SEND", spoil_imm, LCHAN_CQE_BAD_RESV },
	{ "num_sge above the device's", spoil_nsge, LCHAN_CQE_BAD_SGE },
	{ "foreign MR handle", spoil_mr, LCHAN_CQE_BAD_MR },
	{ "no MR with a length", spoil_mr0, LCHAN_CQE_BAD_MR },
	{ "starts before the MR", spoil_before, LCHAN_CQE_BAD_RANGE },
	{ "ends after the MR", spoil_after, LCHAN_CQE_BAD_RANGE },
	{ "address wraps", spoil_wrap, LCHAN_CQE_BAD_RANGE },
	{ "length above max", spoil_len, LCHAN_CQE_BAD_LEN },
};

TEST_F_TIMEOUT(data, bad_sqe_gets_error_cqe_and_next_runs, 300)
{
	struct lchan_cqe cqe;
	unsigned i, want;

	for (i = 0; i < sizeof(bad_sqes) / sizeof(bad_sqes[0]); i++) {
		struct lchan_sqe *bad = lchan_get_sqe(&self->cli.chan);
		struct lchan_sqe *good = lchan_get_sqe(&self->cli.chan);
		uint8_t *p = lchan_t_send_slot(&self->cli, i);

		ASSERT_NE(NULL, bad);
		ASSERT_NE(NULL, good);
		lchan_prep_send(bad, &self->cli.mr, p, 64, 1000 + i);
		bad_sqes[i].spoil(bad, &self->cli);
		want = bad_sqes[i].status;
		/* A device whose limit is 4 GiB - 1 sees only the range. */
		if (want == LCHAN_CQE_BAD_LEN &&
		    self->cli.chan.info.max_msg_size == 0xffffffffu)
			want = LCHAN_CQE_BAD_RANGE;
		lchan_t_fill(p, i, 64);
		lchan_prep_send(good, &self->cli.mr, p, 64, 2000 + i);
		ASSERT_LE(0, lchan_submit(&self->cli.chan));

		ASSERT_EQ(0, lchan_t_reap(&self->cli, &cqe, 10000));
		EXPECT_EQ(1000 + i, cqe.user_data) TH_LOG("%s", bad_sqes[i].name);
		EXPECT_EQ(want, cqe.status)
			TH_LOG("%s: got %s", bad_sqes[i].name,
			       lchan_cqe_status_str(cqe.status));
		ASSERT_EQ(0, lchan_t_reap(&self->cli, &cqe, 10000));
		EXPECT_EQ(2000 + i, cqe.user_data);
		EXPECT_EQ(LCHAN_CQE_OK, cqe.status) TH_LOG("after %s",
							   bad_sqes[i].name);

		/* Only the good one reached the peer. */
		ASSERT_EQ(0, lchan_t_reap(&self->srv, &cqe, 10000));
		EXPECT_EQ(LCHAN_CQE_OK, cqe.status);
		EXPECT_EQ(64, cqe.byte_len);
		EXPECT_EQ(-1, lchan_t_check(lchan_t_recv_slot(&self->srv,
				cqe.user_data), i, 64));
		ASSERT_EQ(0, lchan_t_post_recv(&self->srv, cqe.user_data));
		ASSERT_LE(0, lchan_submit(&self->srv.chan));
	}
	/* Nothing else arrived at the peer. */
	ASSERT_EQ(0, lchan_cq_ready(&self->srv.chan));
}

TEST_F_TIMEOUT(data, bad_rqe_gets_error_cqe_and_next_runs, 120)
{
	struct lchan_mr ro;
	struct lchan_cqe cqe;
	struct {
		const char *name;
		struct lchan_rqe rqe;
		unsigned status;
	} cases[] = {
		{ "flags", { .flags = 1 }, LCHAN_CQE_BAD_FLAGS },
		{ "resv", { .resv = 1 }, LCHAN_CQE_BAD_RESV },
		{ "foreign MR", { .mr = 0x7ffffffe, .len = 8 },
		  LCHAN_CQE_BAD_MR },
		{ "range", { .len = 8 }, LCHAN_CQE_BAD_RANGE },
		{ "read-only MR", { .len = 8 }, LCHAN_CQE_BAD_ACCESS },
	};
	unsigned i;
	void *page;

	page = aligned_alloc(4096, 4096);
	ASSERT_NE(NULL, page);
	/* Registered without LOCAL_WRITE: a receive may not land here. */
	ASSERT_EQ(0, lchan_mr_reg(&self->srv.ctx, &self->srv.chan, page, 4096,
				  0, &ro));
	cases[3].rqe.mr = self->srv.mr.handle;
	cases[3].rqe.addr = (uintptr_t)self->srv.buf - 4096;
	cases[4].rqe.mr = ro.handle;
	cases[4].rqe.addr = (uintptr_t)page;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct lchan_rqe *rqe = lchan_get_rqe(&self->srv.chan);

		ASSERT_NE(NULL, rqe);
		*rqe = cases[i].rqe;
		rqe->user_data = 5000 + i;
		ASSERT_LE(0, lchan_submit(&self->srv.chan));
		ASSERT_EQ(0, lchan_t_reap(&self->srv, &cqe, 10000));
		EXPECT_EQ(5000 + i, cqe.user_data);
		EXPECT_EQ(LCHAN_CQE_RECV, cqe.opcode);
		EXPECT_EQ(cases[i].status, cqe.status)
			TH_LOG("%s: got %s", cases[i].name,
			       lchan_cqe_status_str(cqe.status));
	}

	/* The receives posted at setup still work. */
	{
		struct lchan_sqe *sqe = lchan_get_sqe(&self->cli.chan);
		uint8_t *p = lchan_t_send_slot(&self->cli, 0);

		ASSERT_NE(NULL, sqe);
		lchan_t_fill(p, 77, 300);
		lchan_prep_send(sqe, &self->cli.mr, p, 300, 1);
		ASSERT_LE(0, lchan_submit(&self->cli.chan));
		ASSERT_EQ(0, lchan_t_reap(&self->srv, &cqe, 10000));
		EXPECT_EQ(LCHAN_CQE_OK, cqe.status);
		EXPECT_EQ(300, cqe.byte_len);
		EXPECT_EQ(-1, lchan_t_check(lchan_t_recv_slot(&self->srv,
				cqe.user_data), 77, 300));
	}
	ASSERT_EQ(0, lchan_mr_dereg(&self->srv.ctx, &ro));
	free(page);
}

TEST_F_TIMEOUT(data, bogus_tail_refused, 60)
{
	struct lchan_enter_args req = { .size = sizeof(req) };
	unsigned saved;

	saved = *self->cli.chan.sq.ktail;
	/* A tail more than a ring ahead of the head is not believed. */
	lchan_store_release(self->cli.chan.sq.ktail, saved + 100000);
	errno = 0;
	EXPECT_EQ(-1, ioctl(self->cli.chan.fd, LCHAN_IOC_ENTER, &req));
	EXPECT_EQ(EINVAL, errno);
	lchan_store_release(self->cli.chan.sq.ktail, saved - 5);
	errno = 0;
	EXPECT_EQ(-1, ioctl(self->cli.chan.fd, LCHAN_IOC_ENTER, &req));
	EXPECT_EQ(EINVAL, errno);
	lchan_store_release(self->cli.chan.sq.ktail, saved);
	EXPECT_EQ(0, ioctl(self->cli.chan.fd, LCHAN_IOC_ENTER, &req));
	EXPECT_EQ(0, req.sq_consumed);
}

TEST_F_TIMEOUT(data, dereg_with_receives_in_flight, 60)
{
	struct lchan_t_ep *rx = &self->srv;
	struct lchan_cqe cqe;
	struct lchan_mr mr2;
	uint8_t *buf2;
	unsigned i;

	/* Drain the receives posted at setup so only ours are left. */
	for (i = 0; i < NRECV; i++) {
		struct lchan_sqe *sqe = lchan_get_sqe(&self->cli.chan);

		ASSERT_NE(NULL, sqe);
		lchan_prep_send(sqe, &self->cli.mr,
				lchan_t_send_slot(&self->cli, 0), 1, i);
		ASSERT_LE(0, lchan_submit(&self->cli.chan));
		ASSERT_EQ(0, lchan_t_reap(rx, &cqe, 10000));
		ASSERT_EQ(LCHAN_CQE_OK, cqe.status);
		ASSERT_EQ(0, lchan_t_reap(&self->cli, &cqe, 10000));
	}
	buf2 = aligned_alloc(4096, 4 * 4096);
	ASSERT_NE(NULL, buf2);
	ASSERT_EQ(0, lchan_mr_reg(&rx->ctx, &rx->chan, buf2, 4 * 4096,
				  LCHAN_ACCESS_LOCAL_WRITE, &mr2));
	for (i = 0; i < 4; i++) {
		struct lchan_rqe *rqe = lchan_get_rqe(&rx->chan);

		ASSERT_NE(NULL, rqe);
		lchan_prep_recv(rqe, &mr2, buf2 + i * 4096, 4096, i);
	}
	ASSERT_LE(0, lchan_submit(&rx->chan));
	/* The handle goes; the posted receives keep the region alive. */
	ASSERT_EQ(0, lchan_mr_dereg(&rx->ctx, &mr2));
	for (i = 0; i < 4; i++) {
		struct lchan_sqe *sqe = lchan_get_sqe(&self->cli.chan);
		uint8_t *p = lchan_t_send_slot(&self->cli, i);

		ASSERT_NE(NULL, sqe);
		lchan_t_fill(p, 40 + i, 3000);
		lchan_prep_send(sqe, &self->cli.mr, p, 3000, i);
	}
	ASSERT_LE(0, lchan_submit(&self->cli.chan));
	for (i = 0; i < 4; i++) {
		ASSERT_EQ(0, lchan_t_reap(rx, &cqe, 10000));
		ASSERT_EQ(LCHAN_CQE_OK, cqe.status);
		ASSERT_EQ(3000, cqe.byte_len);
		ASSERT_EQ(-1, lchan_t_check(buf2 + cqe.user_data * 4096,
					    40 + cqe.user_data, 3000));
	}
	/* A new entry naming the dropped handle is refused. */
	{
		struct lchan_rqe *rqe = lchan_get_rqe(&rx->chan);

		ASSERT_NE(NULL, rqe);
		lchan_prep_recv(rqe, &mr2, buf2, 4096, 99);
		rqe->mr = mr2.handle ? mr2.handle : 1000;
		ASSERT_LE(0, lchan_submit(&rx->chan));
		ASSERT_EQ(0, lchan_t_reap(rx, &cqe, 10000));
		EXPECT_EQ(LCHAN_CQE_BAD_MR, cqe.status);
	}
	free(buf2);
}

TEST_F_TIMEOUT(data, full_cq_holds_back_work, 120)
{
	struct lchan_t_ep *tx = &self->cli, *rx = &self->srv;
	/* The sender's own posted receives hold CQ slots too. */
	unsigned cq = tx->chan.cq.entries - NRECV, sent = 0, reaped = 0, i;
	unsigned *overflow = (unsigned *)((char *)tx->chan.map +
					  tx->chan.info.cq_off.overflow);
	struct lchan_cqe cqe;
	int n;

	/* Fill the sender's CQ without reading it. */
	while (sent < cq) {
		unsigned batch = 0;

		while (batch < NSEND && sent + batch < cq) {
			struct lchan_sqe *sqe = lchan_get_sqe(&tx->chan);

			if (!sqe)
				break;
			lchan_prep_send(sqe, &tx->mr, lchan_t_send_slot(tx, 0),
					16, sent + batch);
			batch++;
		}
		/*
		 * The receiver has had the last batch, but the sender's kernel
		 * may not have handled its completions yet (siw announces some
		 * late): their WR slots are still taken, and the kernel holds
		 * the rest back and posts them when the slots free.
		 */
		n = lchan_submit(&tx->chan);
		ASSERT_LE(0, n);
		ASSERT_GE((int)batch, n);
		if (n < (int)batch)
			TH_LOG("%u of %u sends held back: sq_held %llu sq_starved %llu cq_recovered %llu",
			       batch - n, batch,
			       lchan_t_chan_attr(&tx->chan, "sq_held"),
			       lchan_t_chan_attr(&tx->chan, "sq_starved"),
			       lchan_t_chan_attr(&tx->chan, "cq_recovered"));
		/* Keep the receiver supplied. */
		for (i = 0; i < batch; i++) {
			ASSERT_EQ(0, lchan_t_reap(rx, &cqe, 10000));
			ASSERT_EQ(LCHAN_CQE_OK, cqe.status);
			ASSERT_EQ(0, lchan_t_post_recv(rx, cqe.user_data));
		}
		ASSERT_LE(0, lchan_submit(&rx->chan));
		sent += batch;
	}
	ASSERT_EQ(0, lchan_submit_and_wait(&tx->chan, cq, 10000000000LL));
	ASSERT_EQ(cq, lchan_cq_ready(&tx->chan));

	/* No room for another completion: the kernel leaves the SQE be. */
	{
		struct lchan_sqe *sqe = lchan_get_sqe(&tx->chan);

		ASSERT_NE(NULL, sqe);
		lchan_prep_send(sqe, &tx->mr, lchan_t_send_slot(tx, 0), 16,
				sent);
		ASSERT_EQ(0, lchan_submit(&tx->chan));
		usleep(100000);
		ASSERT_EQ(0, lchan_submit(&tx->chan));
	}
	/* Reading one CQE makes room; the waiting SQE then goes. */
	ASSERT_EQ(0, lchan_t_reap(tx, &cqe, 1000));
	reaped++;
	ASSERT_EQ(1, lchan_submit(&tx->chan));
	ASSERT_EQ(0, lchan_t_reap(rx, &cqe, 10000));
	ASSERT_EQ(LCHAN_CQE_OK, cqe.status);
	while (reaped < cq + 1) {
		ASSERT_EQ(0, lchan_t_reap(tx, &cqe, 10000));
		ASSERT_EQ(LCHAN_CQE_OK, cqe.status);
		ASSERT_EQ(reaped, cqe.user_data);
		reaped++;
	}
	EXPECT_EQ(0, *overflow);
}

TEST_HARNESS_MAIN
