// SPDX-License-Identifier: GPL-2.0
/*
 * One-sided operations and the finer points of submission: WRITE,
 * WRITE_IMM, READ, atomics, multi-SGE gather and scatter, remote access
 * errors (a READ behind a refused WRITE completes once on iWARP),
 * selective signalling on a small ring, fence.
 */
#include "kselftest_harness.h"
#include "lchan_test.h"

#define SLOT	(1u << 20)

FIXTURE(ops) {
	struct lchan_t_dev d;
	struct lchan_t_ep srv, cli;
	int iwarp;
};

LCHAN_T_VARIANTS(ops);

FIXTURE_SETUP(ops)
{
	struct lchan_opts opts = { .sq_entries = 16, .rq_entries = 16 };
	int ret;

	LCHAN_T_NEED_DEV(&self->d, variant->kind);
	lchan_t_raise_memlock();
	self->iwarp = !strcmp(variant->kind, "siw");
	self->srv.slot = self->cli.slot = SLOT;
	self->srv.nrecv = self->cli.nrecv = 2;
	self->srv.nsend = self->cli.nsend = 2;
	self->srv.access = self->cli.access = LCHAN_ACCESS_ALL;
	ret = lchan_t_ep_pair(&self->srv, &self->cli, self->d.addr, &opts);
	ASSERT_EQ(0, ret) TH_LOG("pair: %s", strerror(-ret));
}

FIXTURE_TEARDOWN(ops)
{
	lchan_t_ep_close(&self->cli);
	lchan_t_ep_close(&self->srv);
}

/* Submit what was prepared and return the next CQE of @ep. */
static int run1(struct lchan_t_ep *ep, struct lchan_cqe *cqe)
{
	int ret = lchan_submit(&ep->chan);

	if (ret < 0)
		return ret;
	return lchan_t_reap(ep, cqe, 10000);
}

/* The client's next SQE, which must be there. */
static struct lchan_sqe *ops_cli_sqe(struct __test_metadata *_metadata,
				     FIXTURE_DATA(ops) *self)
{
	struct lchan_sqe *sqe = lchan_get_sqe(&self->cli.chan);

	ASSERT_NE(NULL, sqe);
	return sqe;
}

/* run1() of the client's prepared operation of @size bytes: it must succeed. */
static void ops_run_ok(struct __test_metadata *_metadata,
		       FIXTURE_DATA(ops) *self, unsigned size,
		       struct lchan_cqe *cqe)
{
	ASSERT_EQ(0, run1(&self->cli, cqe));
	ASSERT_EQ(LCHAN_CQE_OK, cqe->status)
		TH_LOG("%u bytes: %s", size, lchan_cqe_status_str(cqe->status));
}

static const unsigned sizes[] = { 1, 7, 64, 4096, 4097, 65536, SLOT };

TEST_F_TIMEOUT(ops, write_1b_to_1mib, 300)
{
	uint8_t *src = lchan_t_send_slot(&self->cli, 0);
	uint8_t *dst = lchan_t_send_slot(&self->srv, 1);
	struct lchan_cqe cqe;
	unsigned i;

	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		struct lchan_sqe *sqe = ops_cli_sqe(_metadata, self);

		lchan_t_fill(src, i + 1, sizes[i]);
		memset(dst, 0, sizes[i] + (sizes[i] < SLOT));
		lchan_prep_write(sqe, &self->cli.mr, src, sizes[i],
				 (uintptr_t)dst, self->srv.mr.rkey, i);
		ops_run_ok(_metadata, self, sizes[i], &cqe);
		EXPECT_EQ(LCHAN_CQE_WRITE, cqe.opcode);
		EXPECT_EQ(sizes[i], cqe.byte_len);
		EXPECT_EQ(-1, lchan_t_wait_check(dst, i + 1, sizes[i]))
			TH_LOG("%u bytes", sizes[i]);
		/* Not one byte more. */
		if (sizes[i] < SLOT)
			EXPECT_EQ(0, dst[sizes[i]]);
	}
	/* A one-sided write consumed no receive at the peer. */
	EXPECT_EQ(0, lchan_cq_ready(&self->srv.chan));
}

TEST_F_TIMEOUT(ops, read_1b_to_1mib, 300)
{
	uint8_t *remote = lchan_t_send_slot(&self->srv, 0);
	uint8_t *local = lchan_t_send_slot(&self->cli, 1);
	struct lchan_cqe cqe;
	unsigned i;

	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		struct lchan_sqe *sqe = ops_cli_sqe(_metadata, self);

		lchan_t_fill(remote, i + 50, sizes[i]);
		memset(local, 0, sizes[i]);
		lchan_prep_read(sqe, &self->cli.mr, local, sizes[i],
				(uintptr_t)remote, self->srv.mr.rkey, i);
		ops_run_ok(_metadata, self, sizes[i], &cqe);
		EXPECT_EQ(LCHAN_CQE_READ, cqe.opcode);
		EXPECT_EQ(-1, lchan_t_check(local, i + 50, sizes[i]));
	}
}

/*
 * Zero-length WRITE and READ: no buffer, no rkey, nothing moved, and RC
 * still completes them on the peer's answer (a probe of the peer).
 */
TEST_F_TIMEOUT(ops, zero_length_write_and_read, 60)
{
	static const uint8_t opcodes[] = { LCHAN_OP_WRITE, LCHAN_OP_READ };
	struct lchan_sqe *sqe;
	struct lchan_cqe cqe;
	unsigned i;

	for (i = 0; i < ARRAY_SIZE(opcodes); i++) {
		sqe = ops_cli_sqe(_metadata, self);
		lchan_prep_rdma(sqe, opcodes[i], &self->cli.mr, NULL, 0, 0, 0,
				i);
		ops_run_ok(_metadata, self, 0, &cqe);
		EXPECT_EQ(opcodes[i] == LCHAN_OP_WRITE ? LCHAN_CQE_WRITE :
			  LCHAN_CQE_READ, cqe.opcode);
		EXPECT_EQ(i, cqe.user_data);
		EXPECT_EQ(0, cqe.byte_len);
	}
	EXPECT_EQ(0, lchan_cq_ready(&self->srv.chan));
	EXPECT_EQ(LCHAN_STATE_CONNECTED, lchan_chan_state(&self->cli.chan));
}

TEST_F_TIMEOUT(ops, write_with_imm, 60)
{
	uint8_t *src = lchan_t_send_slot(&self->cli, 0);
	uint8_t *dst = lchan_t_send_slot(&self->srv, 0);
	struct lchan_sqe *sqe;
	struct lchan_cqe cqe;

	sqe = lchan_get_sqe(&self->cli.chan);
	ASSERT_NE(NULL, sqe);
	lchan_t_fill(src, 9, 3000);
	lchan_prep_write_imm(sqe, &self->cli.mr, src, 3000, (uintptr_t)dst,
			     self->srv.mr.rkey, 0xabcd1234, 77);
	ASSERT_EQ(0, run1(&self->cli, &cqe));
	if (self->iwarp) {
		/* iWARP has no immediate data: refused before the wire. */
		EXPECT_EQ(0, self->cli.chan.info.features &
			  LCHAN_FEATURE_WRITE_IMM);
		EXPECT_EQ(LCHAN_CQE_UNSUPPORTED, cqe.status);
		EXPECT_EQ(0, lchan_cq_ready(&self->srv.chan));
		return;
	}
	ASSERT_EQ(LCHAN_CQE_OK, cqe.status);
	EXPECT_EQ(LCHAN_CQE_WRITE_IMM, cqe.opcode);
	/* The peer is told through one of its receives. */
	ASSERT_EQ(0, lchan_t_reap(&self->srv, &cqe, 10000));
	ASSERT_EQ(LCHAN_CQE_OK, cqe.status);
	EXPECT_EQ(LCHAN_CQE_RECV_WRITE_IMM, cqe.opcode);
	EXPECT_NE(0, cqe.flags & LCHAN_CQE_F_IMM);
	EXPECT_EQ(0xabcd1234, cqe.imm_data);
	EXPECT_EQ(3000, cqe.byte_len);
	EXPECT_EQ(-1, lchan_t_check(dst, 9, 3000));
}

TEST_F_TIMEOUT(ops, atomics, 60)
{
	uint64_t *remote = (uint64_t *)lchan_t_send_slot(&self->srv, 0);
	uint64_t *old = (uint64_t *)lchan_t_send_slot(&self->cli, 0);
	struct lchan_sqe *sqe;
	struct lchan_cqe cqe;

	*remote = 100;
	sqe = lchan_get_sqe(&self->cli.chan);
	ASSERT_NE(NULL, sqe);
	lchan_prep_fetch_add(sqe, &self->cli.mr, old, (uintptr_t)remote,
			     self->srv.mr.rkey, 5, 1);
	ASSERT_EQ(0, run1(&self->cli, &cqe));
	if (!(self->cli.chan.info.features & LCHAN_FEATURE_ATOMIC)) {
		EXPECT_EQ(LCHAN_CQE_UNSUPPORTED, cqe.status);
		EXPECT_EQ(100, *remote);
		SKIP(return, "%s has no atomics: refused as documented",
		     self->d.dev);
	}
	ASSERT_EQ(LCHAN_CQE_OK, cqe.status);
	EXPECT_EQ(LCHAN_CQE_FETCH_ADD, cqe.opcode);
	EXPECT_EQ(100, *old);
	EXPECT_EQ(105, *remote);

	sqe = lchan_get_sqe(&self->cli.chan);
	lchan_prep_cmp_swap(sqe, &self->cli.mr, old, (uintptr_t)remote,
			    self->srv.mr.rkey, 105, 7, 2);
	ASSERT_EQ(0, run1(&self->cli, &cqe));
	ASSERT_EQ(LCHAN_CQE_OK, cqe.status);
	EXPECT_EQ(LCHAN_CQE_CMP_SWAP, cqe.opcode);
	EXPECT_EQ(105, *old);
	EXPECT_EQ(7, *remote);

	/* A compare that does not match leaves the value alone. */
	sqe = lchan_get_sqe(&self->cli.chan);
	lchan_prep_cmp_swap(sqe, &self->cli.mr, old, (uintptr_t)remote,
			    self->srv.mr.rkey, 1, 99, 3);
	ASSERT_EQ(0, run1(&self->cli, &cqe));
	ASSERT_EQ(LCHAN_CQE_OK, cqe.status);
	EXPECT_EQ(7, *old);
	EXPECT_EQ(7, *remote);

	/* Misaligned or not 8 bytes: refused before the wire. */
	sqe = lchan_get_sqe(&self->cli.chan);
	lchan_prep_fetch_add(sqe, &self->cli.mr, old, (uintptr_t)remote + 4,
			     self->srv.mr.rkey, 1, 4);
	ASSERT_EQ(0, run1(&self->cli, &cqe));
	EXPECT_EQ(LCHAN_CQE_BAD_ALIGN, cqe.status);
	sqe = lchan_get_sqe(&self->cli.chan);
	lchan_prep_fetch_add(sqe, &self->cli.mr, old, (uintptr_t)remote,
			     self->srv.mr.rkey, 1, 5);
	sqe->len = 4;
	ASSERT_EQ(0, run1(&self->cli, &cqe));
	EXPECT_EQ(LCHAN_CQE_BAD_ALIGN, cqe.status);
	EXPECT_EQ(7, *remote);
}

TEST_F_TIMEOUT(ops, multi_sge_gather_and_scatter, 60)
{
	uint8_t *base = lchan_t_send_slot(&self->cli, 0);
	uint8_t *rbase = lchan_t_recv_slot(&self->srv, 0);
	unsigned max = self->cli.chan.info.max_send_sge;
	unsigned rmax = self->srv.chan.info.max_recv_sge;
	struct lchan_sge sg[16], rsg[16];
	uint8_t msg[16 * 700];
	unsigned i, n, rn, total = 0, off = 0;
	struct lchan_sqe *sqe;
	struct lchan_rqe *rqe;
	struct lchan_cqe cqe;

	ASSERT_NE(0, self->cli.chan.info.features & LCHAN_FEATURE_MULTI_SGE);
	n = max < 16 ? max : 16;
	rn = rmax < 3 ? rmax : 3;
	/* Gather n pieces of different sizes from scattered places. */
	for (i = 0; i < n; i++) {
		uint8_t *p = base + i * 20000 + i;

		sg[i] = (struct lchan_sge){ .mr = self->cli.mr.handle,
					    .len = 100 + i * 37,
					    .addr = (uintptr_t)p };
		lchan_t_fill(p, 200 + i, sg[i].len);
		memcpy(msg + total, p, sg[i].len);
		total += sg[i].len;
	}
	/* Scatter into rn buffers at the peer. */
	for (i = 0; i < rn; i++) {
		rsg[i] = (struct lchan_sge){ .mr = self->srv.mr.handle,
					     .len = i + 1 < rn ? 1000 : 8192,
					     .addr = (uintptr_t)(rbase +
						 4096 * (i + 1) + 3) };
	}
	rqe = lchan_get_rqe(&self->srv.chan);
	ASSERT_NE(NULL, rqe);
	lchan_prep_recv(rqe, &self->srv.mr, NULL, 0, 42);
	ASSERT_EQ(0, lchan_rqe_set_sges(&self->srv.chan, rqe, rsg, rn));
	ASSERT_LE(0, lchan_submit(&self->srv.chan));

	/* The receives posted at setup come first: use them up. */
	for (i = 0; i < self->srv.nrecv; i++) {
		sqe = lchan_get_sqe(&self->cli.chan);
		lchan_prep_send(sqe, &self->cli.mr, base, 1, 900 + i);
		ASSERT_EQ(0, run1(&self->cli, &cqe));
		ASSERT_EQ(0, lchan_t_reap(&self->srv, &cqe, 10000));
		ASSERT_EQ(LCHAN_CQE_OK, cqe.status);
	}

	sqe = lchan_get_sqe(&self->cli.chan);
	ASSERT_NE(NULL, sqe);
	lchan_prep_send(sqe, &self->cli.mr, NULL, 0, 7);
	ASSERT_EQ(0, lchan_sqe_set_sges(&self->cli.chan, sqe, sg, n));
	ASSERT_EQ(0, run1(&self->cli, &cqe));
	ASSERT_EQ(LCHAN_CQE_OK, cqe.status)
		TH_LOG("%s", lchan_cqe_status_str(cqe.status));
	EXPECT_EQ(total, cqe.byte_len);
	ASSERT_EQ(0, lchan_t_reap(&self->srv, &cqe, 10000));
	ASSERT_EQ(LCHAN_CQE_OK, cqe.status)
		TH_LOG("%s", lchan_cqe_status_str(cqe.status));
	EXPECT_EQ(42, cqe.user_data);
	ASSERT_EQ(total, cqe.byte_len);
	for (i = 0; i < rn && off < total; i++) {
		unsigned len = rsg[i].len < total - off ? rsg[i].len :
			       total - off;

		EXPECT_EQ(0, memcmp((void *)(uintptr_t)rsg[i].addr, msg + off,
				    len)) TH_LOG("scatter piece %u", i);
		off += len;
	}

	/* One more buffer than the device takes. */
	sqe = lchan_get_sqe(&self->cli.chan);
	lchan_prep_send(sqe, &self->cli.mr, base, 1, 8);
	sqe->num_sge = (uint8_t)(max + 1);
	ASSERT_EQ(0, run1(&self->cli, &cqe));
	EXPECT_EQ(LCHAN_CQE_BAD_SGE, cqe.status);
}

TEST_F_TIMEOUT(ops, write_without_remote_access_fails_at_requester, 60)
{
	uint8_t *page = aligned_alloc(4096, 4096);
	struct lchan_mr ro;
	struct lchan_sqe *sqe;
	struct lchan_cqe cqe;

	ASSERT_NE(NULL, page);
	memset(page, 0x5a, 4096);
	/* Readable from afar, not writable. */
	ASSERT_EQ(0, lchan_mr_reg(&self->srv.ctx, &self->srv.chan, page, 4096,
				  LCHAN_ACCESS_REMOTE_READ, &ro));
	ASSERT_NE(0, ro.rkey);
	sqe = lchan_get_sqe(&self->cli.chan);
	lchan_prep_write(sqe, &self->cli.mr, lchan_t_send_slot(&self->cli, 0),
			 64, (uintptr_t)page, ro.rkey, 1);
	ASSERT_EQ(0, run1(&self->cli, &cqe));
	if (self->iwarp) {
		/*
		 * An iWARP WRITE completes when it is sent; the peer's refusal
		 * comes back as a terminate that ends the connection.  When
		 * the terminate comes first, the WRITE fails with it (siw says
		 * local QP operation error).
		 */
		struct pollfd pfd = { .fd = self->cli.chan.fd,
				      .events = POLLRDHUP };

		EXPECT_TRUE(cqe.status == LCHAN_CQE_OK ||
			    cqe.status == LCHAN_CQE_REM_ACCESS_ERR ||
			    cqe.status == LCHAN_CQE_LOC_QP_OP_ERR)
			TH_LOG("got %s", lchan_cqe_status_str(cqe.status));
		ASSERT_EQ(1, poll(&pfd, 1, 10000));
		EXPECT_NE(0, pfd.revents & (POLLRDHUP | POLLHUP));
		/*
		 * The refusing side's QP went to error with no request of
		 * its own failing (the device's access-error event).
		 */
		EXPECT_EQ(LCHAN_STATE_ERROR, lchan_chan_state(&self->srv.chan));
	} else {
		struct pollfd pfd = { .fd = self->cli.chan.fd,
				      .events = POLLRDHUP };

		EXPECT_EQ(LCHAN_CQE_REM_ACCESS_ERR, cqe.status)
			TH_LOG("got %s", lchan_cqe_status_str(cqe.status));
		/*
		 * The failure put the requester's QP in error: the channel
		 * says so at once, and what comes next is flushed.
		 */
		EXPECT_EQ(LCHAN_STATE_ERROR, lchan_chan_state(&self->cli.chan));
		EXPECT_EQ(1, poll(&pfd, 1, 0));
		EXPECT_NE(0, pfd.revents & POLLRDHUP);
		sqe = ops_cli_sqe(_metadata, self);
		lchan_prep_send(sqe, &self->cli.mr,
				lchan_t_send_slot(&self->cli, 0), 8, 2);
		ASSERT_LE(0, lchan_submit(&self->cli.chan));
		/* The posted receives are flushed too, in any order. */
		do {
			ASSERT_EQ(0, lchan_t_reap(&self->cli, &cqe, 10000));
		} while (cqe.opcode == LCHAN_CQE_RECV &&
			 cqe.status == LCHAN_CQE_WR_FLUSH_ERR);
		EXPECT_EQ(LCHAN_CQE_SEND, cqe.opcode);
		EXPECT_EQ(2, cqe.user_data);
		EXPECT_EQ(LCHAN_CQE_WR_FLUSH_ERR, cqe.status)
			TH_LOG("got %s", lchan_cqe_status_str(cqe.status));
	}
	/* The memory is untouched. */
	EXPECT_EQ(0x5a, page[0]);
	EXPECT_EQ(0x5a, page[63]);
	lchan_chan_close(&self->srv.chan);
	lchan_mr_dereg(&self->srv.ctx, &ro);
	free(page);
}

/*
 * iWARP: a READ posted right behind a refused WRITE fails, and completes
 * once.  siw flushes a READ that is queued but not yet sent twice (from
 * its outstanding-read queue and as transmit work); the CQ ring holds one
 * CQE per request whatever the device does.  Every CQE until the ring
 * stays quiet is accounted for: the READ's, and each receive's flush.
 */
TEST_F_TIMEOUT(ops, read_behind_refused_write_completes_once, 60)
{
	uint8_t *page = aligned_alloc(4096, 4096);
	struct pollfd pfd = { .fd = self->cli.chan.fd, .events = POLLRDHUP };
	unsigned reads = 0, recvs[2] = { 0, 0 }, others = 0;
	struct lchan_sqe *sqe;
	struct lchan_cqe cqe;
	struct lchan_mr ro;

	if (!self->iwarp)
		SKIP(return, "only iWARP ends a connection on a refused WRITE");
	ASSERT_NE(NULL, page);
	ASSERT_EQ(0, lchan_mr_reg(&self->srv.ctx, &self->srv.chan, page, 4096,
				  LCHAN_ACCESS_REMOTE_READ, &ro));
	sqe = lchan_get_sqe(&self->cli.chan);
	lchan_prep_write(sqe, &self->cli.mr, lchan_t_send_slot(&self->cli, 0),
			 64, (uintptr_t)page, ro.rkey, 100);
	ASSERT_EQ(0, run1(&self->cli, &cqe));
	EXPECT_EQ(100, cqe.user_data);
	TH_LOG("WRITE: %s", lchan_cqe_status_str(cqe.status));
	sqe = lchan_get_sqe(&self->cli.chan);
	lchan_prep_read(sqe, &self->cli.mr, lchan_t_send_slot(&self->cli, 1),
			64, (uintptr_t)page, ro.rkey, 101);
	ASSERT_LE(0, lchan_submit(&self->cli.chan));
	ASSERT_EQ(1, poll(&pfd, 1, 10000));
	while (!lchan_t_reap(&self->cli, &cqe, 300)) {
		TH_LOG("CQE user_data %llu opcode %u: %s",
		       (unsigned long long)cqe.user_data, cqe.opcode,
		       lchan_cqe_status_str(cqe.status));
		if (cqe.user_data == 101) {
			reads++;
			EXPECT_NE(LCHAN_CQE_OK, cqe.status);
		} else if (cqe.user_data < 2) {
			recvs[cqe.user_data]++;
			EXPECT_EQ(LCHAN_CQE_WR_FLUSH_ERR, cqe.status);
		} else {
			others++;
		}
	}
	EXPECT_EQ(1, reads);
	EXPECT_EQ(0, others);
	EXPECT_GE(1, recvs[0]);
	EXPECT_GE(1, recvs[1]);
	lchan_chan_close(&self->srv.chan);
	lchan_mr_dereg(&self->srv.ctx, &ro);
	free(page);
}

TEST_F_TIMEOUT(ops, unsignaled_on_a_small_ring, 300)
{
	const unsigned total = 10000, every = 1000;
	uint8_t *src = lchan_t_send_slot(&self->cli, 0);
	uint8_t *dst = lchan_t_send_slot(&self->srv, 0);
	unsigned posted = 0, cqes = 0;
	struct lchan_cqe *c;
	double stall = lchan_t_now();

	ASSERT_EQ(16, self->cli.chan.sq.entries);
	while (posted < total || cqes < total / every) {
		struct lchan_sqe *sqe;
		int n = 0;

		while (posted < total && (sqe = lchan_get_sqe(&self->cli.chan))) {
			uint8_t *p = src + (posted % 64) * 64;

			*(uint32_t *)p = posted;
			lchan_prep_write(sqe, &self->cli.mr, p, 64,
					 (uintptr_t)(dst + (posted % 64) * 64),
					 self->srv.mr.rkey, posted);
			/* Only every 1000th asks for a completion. */
			if ((posted + 1) % every)
				sqe->flags |= LCHAN_SQE_UNSIGNALED;
			posted++;
			n++;
		}
		if (n)
			ASSERT_LE(0, lchan_submit(&self->cli.chan));
		while (!lchan_peek_cqe(&self->cli.chan, &c)) {
			ASSERT_EQ(LCHAN_CQE_OK, c->status);
			ASSERT_EQ((cqes + 1) * every - 1, c->user_data);
			lchan_cqe_seen(&self->cli.chan);
			cqes++;
			stall = lchan_t_now();
		}
		if (n)
			stall = lchan_t_now();
		ASSERT_LT(lchan_t_now() - stall, 20.0)
			TH_LOG("stalled at %u posted, %u CQEs", posted, cqes);
		if (!n)
			lchan_submit(&self->cli.chan);
	}
	EXPECT_EQ(total / every, cqes);
	/* The last 64 writes landed. */
	for (posted = total - 64; posted < total; posted++)
		EXPECT_EQ(posted, lchan_t_wait_u32((uint32_t *)(dst +
					(posted % 64) * 64), posted));
	/* Nothing else came. */
	usleep(100000);
	EXPECT_EQ(0, lchan_cq_ready(&self->cli.chan));
}

TEST_F_TIMEOUT(ops, fence_orders_after_read, 60)
{
	uint8_t *remote = lchan_t_send_slot(&self->srv, 0);
	uint8_t *local = lchan_t_send_slot(&self->cli, 0);
	struct lchan_sqe *sqe;
	struct lchan_cqe cqe;

	lchan_t_fill(remote, 3, 4096);
	sqe = lchan_get_sqe(&self->cli.chan);
	lchan_prep_read(sqe, &self->cli.mr, local, 4096, (uintptr_t)remote,
			self->srv.mr.rkey, 1);
	/* The write may only start once the read has its data. */
	sqe = lchan_get_sqe(&self->cli.chan);
	lchan_prep_write(sqe, &self->cli.mr, local, 4096,
			 (uintptr_t)(remote + 8192), self->srv.mr.rkey, 2);
	sqe->flags |= LCHAN_SQE_FENCE;
	ASSERT_LE(0, lchan_submit(&self->cli.chan));
	ASSERT_EQ(0, lchan_t_reap(&self->cli, &cqe, 10000));
	EXPECT_EQ(LCHAN_CQE_OK, cqe.status);
	EXPECT_EQ(1, cqe.user_data);
	ASSERT_EQ(0, lchan_t_reap(&self->cli, &cqe, 10000));
	EXPECT_EQ(LCHAN_CQE_OK, cqe.status);
	EXPECT_EQ(2, cqe.user_data);
	EXPECT_EQ(-1, lchan_t_wait_check(remote + 8192, 3, 4096));
}

/*
 * What a device cannot do with a READ is refused per entry: a fence on
 * the READ itself (not on iWARP) and more buffers than max_read_sge.  The
 * entries after the refused ones still run.
 */
TEST_F_TIMEOUT(ops, read_limits_refused_per_device, 60)
{
	uint8_t *remote = lchan_t_send_slot(&self->srv, 0);
	uint8_t *local = lchan_t_send_slot(&self->cli, 0);
	const struct lchan_chan_info *info = &self->cli.chan.info;
	struct lchan_sge sg[2];
	struct lchan_sqe *sqe;
	struct lchan_cqe cqe;

	EXPECT_EQ(!self->iwarp, !!(info->features & LCHAN_FEATURE_READ_FENCE));
	ASSERT_LE(1, info->max_read_sge);
	ASSERT_GE(info->max_send_sge, info->max_read_sge);
	if (self->iwarp)
		EXPECT_EQ(1, info->max_read_sge);
	lchan_t_fill(remote, 9, 8192);

	sqe = lchan_get_sqe(&self->cli.chan);
	lchan_prep_read(sqe, &self->cli.mr, local, 4096, (uintptr_t)remote,
			self->srv.mr.rkey, 1);
	sqe->flags |= LCHAN_SQE_FENCE;
	ASSERT_EQ(0, run1(&self->cli, &cqe));
	EXPECT_EQ(1, cqe.user_data);
	EXPECT_EQ(self->iwarp ? LCHAN_CQE_UNSUPPORTED : LCHAN_CQE_OK,
		  cqe.status);

	if (info->max_read_sge < 2 &&
	    (info->features & LCHAN_FEATURE_MULTI_SGE)) {
		sg[0] = (struct lchan_sge){ .mr = self->cli.mr.handle,
					    .len = 100,
					    .addr = (uintptr_t)local };
		sg[1] = (struct lchan_sge){ .mr = self->cli.mr.handle,
					    .len = 100,
					    .addr = (uintptr_t)local + 4096 };
		sqe = lchan_get_sqe(&self->cli.chan);
		lchan_prep_read(sqe, &self->cli.mr, local, 100,
				(uintptr_t)remote, self->srv.mr.rkey, 2);
		ASSERT_EQ(0, lchan_sqe_set_sges(&self->cli.chan, sqe, sg, 2));
		ASSERT_EQ(0, run1(&self->cli, &cqe));
		EXPECT_EQ(2, cqe.user_data);
		EXPECT_EQ(LCHAN_CQE_BAD_SGE, cqe.status);
	}

	/* The channel still reads. */
	memset(local, 0, 8192);
	sqe = lchan_get_sqe(&self->cli.chan);
	lchan_prep_read(sqe, &self->cli.mr, local, 8192, (uintptr_t)remote,
			self->srv.mr.rkey, 3);
	ASSERT_EQ(0, run1(&self->cli, &cqe));
	EXPECT_EQ(LCHAN_CQE_OK, cqe.status);
	EXPECT_EQ(3, cqe.user_data);
	EXPECT_EQ(-1, lchan_t_wait_check(local, 9, 8192));
}

/*
 * A READ holds its WR slot until its data is back; on siw the SENDs behind
 * it complete first.  With a 4-entry queue, SENDs published while the
 * READ is in flight find no free slot and wait in the ring.  The kernel
 * must post them when the READ completes, with no further submit: here
 * the client only reaps.
 */
TEST_F_TIMEOUT(ops, held_back_sends_go_without_another_submit, 60)
{
	struct lchan_opts opts = { .sq_entries = 4, .rq_entries = 16 };
	struct lchan_t_ep srv = { .slot = SLOT, .nrecv = 8, .nsend = 1,
				  .access = LCHAN_ACCESS_ALL };
	struct lchan_t_ep cli = { .slot = SLOT, .nrecv = 1, .nsend = 1,
				  .access = LCHAN_ACCESS_ALL };
	unsigned i, sends = 0, reads = 0, recvs = 0;
	struct lchan_sqe *sqe;
	struct lchan_cqe cqe;
	int ret, taken;

	ret = lchan_t_ep_pair(&srv, &cli, self->d.addr, &opts);
	ASSERT_EQ(0, ret) TH_LOG("pair: %s", strerror(-ret));
	sqe = lchan_get_sqe(&cli.chan);
	lchan_prep_read(sqe, &cli.mr, lchan_t_recv_slot(&cli, 0), SLOT,
			(uintptr_t)lchan_t_send_slot(&srv, 0), srv.mr.rkey,
			100);
	for (i = 0; i < 3; i++) {
		sqe = lchan_get_sqe(&cli.chan);
		lchan_prep_send(sqe, &cli.mr, lchan_t_send_slot(&cli, 0) + i,
				64, i);
	}
	ASSERT_EQ(4, lchan_submit(&cli.chan));
	/* The three SENDs (on rxe the READ first). */
	while (sends < 3) {
		ASSERT_EQ(0, lchan_t_reap(&cli, &cqe, 10000));
		ASSERT_EQ(LCHAN_CQE_OK, cqe.status);
		if (cqe.user_data == 100)
			reads++;
		else
			sends++;
	}
	for (i = 3; i < 6; i++) {
		sqe = lchan_get_sqe(&cli.chan);
		ASSERT_NE(NULL, sqe);
		lchan_prep_send(sqe, &cli.mr, lchan_t_send_slot(&cli, 0) + i,
				64, i);
	}
	taken = lchan_submit(&cli.chan);
	ASSERT_LE(0, taken);
	TH_LOG("%s: the READ was %s when 3 more SENDs came; %d taken at once",
	       variant->kind, reads ? "done" : "in flight", taken);
	/* Reap only: no submit from here on. */
	while (sends < 6 || !reads) {
		ret = lchan_t_reap(&cli, &cqe, 10000);
		ASSERT_EQ(0, ret) TH_LOG("sends %u reads %u", sends, reads);
		ASSERT_EQ(LCHAN_CQE_OK, cqe.status);
		if (cqe.user_data == 100)
			reads++;
		else
			sends++;
	}
	while (recvs < 6) {
		ASSERT_EQ(0, lchan_t_reap(&srv, &cqe, 10000));
		ASSERT_EQ(LCHAN_CQE_OK, cqe.status);
		recvs++;
	}
	lchan_t_ep_close(&cli);
	lchan_t_ep_close(&srv);
}

TEST_HARNESS_MAIN
