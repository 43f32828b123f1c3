// SPDX-License-Identifier: GPL-2.0
/*
 * Reading ring entries: every field of an SQE or RQE (and of its
 * continuation slots) is read once with READ_ONCE() into a local and only
 * the local is checked and used.  A bad entry gives a CQE status; a good
 * one gives a work request with a reference on each MR it names.
 */
#include <linux/nospec.h>

#include "lchan.h"

void lchan_wr_put_mrs(struct lchan_wr *wr)
{
	u8 i;

	for (i = 0; i < wr->num_sge; i++) {
		lchan_region_put(wr->mr[i]);
		wr->mr[i] = NULL;
	}
	wr->num_sge = 0;
}

/* Append one checked buffer to @wr.  0 or a CQE status. */
static u32 lchan_wr_add_buf(struct lchan_channel *chan, struct lchan_wr *wr,
			    u32 handle, u64 addr, u32 len, bool need_write)
{
	struct lchan_region *mr;

	if (len > chan->caps.max_msg_size ||
	    len > chan->caps.max_msg_size - wr->length)
		return LCHAN_CQE_BAD_LEN;
	mr = lchan_region_lookup(chan->ctx, handle);
	if (!mr)
		return LCHAN_CQE_BAD_MR;
	if (mr->pd != chan->pd || !READ_ONCE(mr->ibmr)) {
		lchan_region_put(mr);
		return LCHAN_CQE_BAD_MR;
	}
	if (addr < mr->addr || addr - mr->addr > mr->length ||
	    len > mr->length - (addr - mr->addr)) {
		lchan_region_put(mr);
		return LCHAN_CQE_BAD_RANGE;
	}
	if (need_write && !(mr->access & LCHAN_ACCESS_LOCAL_WRITE)) {
		lchan_region_put(mr);
		return LCHAN_CQE_BAD_ACCESS;
	}
	wr->mr[wr->num_sge] = mr;
	wr->sge[wr->num_sge].addr = addr;
	wr->sge[wr->num_sge].length = len;
	wr->sge[wr->num_sge].lkey = mr->lkey;
	wr->num_sge++;
	wr->length += len;
	return 0;
}

/* The inline buffer: none when mr is 0, which needs len and addr 0. */
static u32 lchan_wr_first_buf(struct lchan_channel *chan, struct lchan_wr *wr,
			      u32 handle, u64 addr, u32 len, u8 num_sge,
			      bool need_write)
{
	if (handle)
		return lchan_wr_add_buf(chan, wr, handle, addr, len,
					need_write);
	if (len || addr || num_sge > 1)
		return LCHAN_CQE_BAD_MR;
	return 0;
}

/*
 * The continuation slots of a multi-SGE entry: @extra buffers, @per_slot
 * to a slot starting at ring index @idx.  Unused places must be zero.
 */
static u32 lchan_wr_more_bufs(struct lchan_channel *chan, struct lchan_wr *wr,
			      const struct lchan_sge *(*slot_of)(struct lchan_channel *, u32),
			      u32 idx, u32 extra, u32 per_slot, bool need_write)
{
	u32 i, status;

	for (i = 0; i < DIV_ROUND_UP(extra, per_slot) * per_slot; i++) {
		const struct lchan_sge *sge = slot_of(chan, idx + i / per_slot) +
					      i % per_slot;
		u32 handle = READ_ONCE(sge->mr);
		u32 len = READ_ONCE(sge->len);
		u64 addr = READ_ONCE(sge->addr);

		if (i >= extra) {
			if (handle || len || addr)
				return LCHAN_CQE_BAD_SGE;
			continue;
		}
		if (!handle || !len)
			return LCHAN_CQE_BAD_SGE;
		status = lchan_wr_add_buf(chan, wr, handle, addr, len,
					  need_write);
		if (status)
			return status;
	}
	return 0;
}

static const struct lchan_sge *lchan_wr_sq_sges(struct lchan_channel *chan,
						u32 idx)
{
	struct lchan_ring *ring = &chan->ring;

	return (const struct lchan_sge *)
		&ring->sqes[idx & (ring->sq.entries - 1)];
}

static const struct lchan_sge *lchan_wr_rq_sges(struct lchan_channel *chan,
						u32 idx)
{
	struct lchan_ring *ring = &chan->ring;

	return (const struct lchan_sge *)
		&ring->rqes[idx & (ring->rq.entries - 1)];
}

/*
 * How many ring slots the entry at @head uses.  0: its continuation slots
 * are not all published yet, so it waits.
 */
static u32 lchan_wr_slots(u8 num_sge, u32 max_sge, u32 per_slot, u32 avail,
			  u32 ring_entries)
{
	u32 slots;

	if (num_sge <= 1 || num_sge > max_sge)
		return 1;
	slots = 1 + DIV_ROUND_UP(num_sge - 1, per_slot);
	/* A group larger than the ring could never be complete. */
	if (slots > ring_entries)
		return 1;
	return slots <= avail ? slots : 0;
}

struct lchan_op_desc {
	u8 cqe_op;
	u8 ib_op;
	u64 feature;
	bool remote;		/* remote_addr/rkey used */
	bool local_write;	/* data lands in the local buffers */
	bool atomic;
};

static const struct lchan_op_desc lchan_ops[LCHAN_OP_MAX] = {
	[LCHAN_OP_SEND] = { LCHAN_CQE_SEND, IB_WR_SEND, LCHAN_FEATURE_SEND },
	[LCHAN_OP_SEND_IMM] = { LCHAN_CQE_SEND_IMM, IB_WR_SEND_WITH_IMM,
				LCHAN_FEATURE_SEND_IMM },
	[LCHAN_OP_WRITE] = { LCHAN_CQE_WRITE, IB_WR_RDMA_WRITE,
			     LCHAN_FEATURE_WRITE, true },
	[LCHAN_OP_WRITE_IMM] = { LCHAN_CQE_WRITE_IMM,
				 IB_WR_RDMA_WRITE_WITH_IMM,
				 LCHAN_FEATURE_WRITE_IMM, true },
	[LCHAN_OP_READ] = { LCHAN_CQE_READ, IB_WR_RDMA_READ,
			    LCHAN_FEATURE_READ, true, true },
	[LCHAN_OP_CMP_SWAP] = { LCHAN_CQE_CMP_SWAP, IB_WR_ATOMIC_CMP_AND_SWP,
				LCHAN_FEATURE_ATOMIC, true, true, true },
	[LCHAN_OP_FETCH_ADD] = { LCHAN_CQE_FETCH_ADD,
				 IB_WR_ATOMIC_FETCH_AND_ADD,
				 LCHAN_FEATURE_ATOMIC, true, true, true },
};

/*
 * Read the SQE at ring index @head (@avail entries published from there)
 * into @wr, whose sge array has room for LCHAN_MAX_SGE.  Returns 0 or a
 * CQE status; *slots is how many slots the entry took, 0 when it must wait
 * for the rest of its slots.
 */
u32 lchan_wr_read_sqe(struct lchan_channel *chan, u32 head, u32 avail,
		      struct lchan_wr *wr, u32 *slots)
{
	const struct lchan_sqe *sqe = &chan->ring.sqes[head &
						(chan->ring.sq.entries - 1)];
	u8 opcode = READ_ONCE(sqe->opcode);
	u8 flags = READ_ONCE(sqe->flags);
	u8 num_sge = READ_ONCE(sqe->num_sge);
	u32 handle = READ_ONCE(sqe->mr);
	u64 addr = READ_ONCE(sqe->addr);
	u32 len = READ_ONCE(sqe->len);
	u32 imm = READ_ONCE(sqe->imm_data);
	u64 raddr = READ_ONCE(sqe->remote_addr);
	u32 rkey = READ_ONCE(sqe->rkey);
	u64 compare_add = READ_ONCE(sqe->compare_add);
	u64 swap = READ_ONCE(sqe->swap);
	const struct lchan_op_desc *op;
	struct ib_send_wr *swr = &wr->rdma.wr;
	u32 status;

	memset(wr, 0, offsetof(struct lchan_wr, sge));
	wr->user_data = READ_ONCE(sqe->user_data);
	*slots = lchan_wr_slots(num_sge, chan->caps.max_send_sge,
				LCHAN_SQE_SGES, avail, chan->ring.sq.entries);
	if (!*slots)
		return 0;

	if (opcode == LCHAN_OP_NOP || opcode >= LCHAN_OP_MAX)
		return LCHAN_CQE_BAD_OPCODE;
	op = &lchan_ops[array_index_nospec(opcode, LCHAN_OP_MAX)];
	wr->opcode = op->cqe_op;
	if (flags & ~LCHAN_SQE_FLAGS_ALL)
		return LCHAN_CQE_BAD_FLAGS;
	if (READ_ONCE(sqe->resv0) || READ_ONCE(sqe->resv1))
		return LCHAN_CQE_BAD_RESV;
	/* Fields the operation does not use must be zero. */
	if ((!op->remote && (raddr || rkey)) ||
	    (!op->atomic && compare_add) ||
	    (opcode != LCHAN_OP_CMP_SWAP && swap) ||
	    (opcode != LCHAN_OP_SEND_IMM && opcode != LCHAN_OP_WRITE_IMM &&
	     imm))
		return LCHAN_CQE_BAD_RESV;
	if (!(chan->caps.features & op->feature))
		return LCHAN_CQE_UNSUPPORTED;
	if (num_sge > chan->caps.max_send_sge || (num_sge > 1 && *slots == 1))
		return LCHAN_CQE_BAD_SGE;
	if (opcode == LCHAN_OP_READ) {
		if (num_sge > chan->caps.max_read_sge)
			return LCHAN_CQE_BAD_SGE;
		if ((flags & LCHAN_SQE_FENCE) &&
		    !(chan->caps.features & LCHAN_FEATURE_READ_FENCE))
			return LCHAN_CQE_UNSUPPORTED;
	}
	if (op->atomic && (num_sge > 1 || len != 8 || (addr & 7) ||
			   (raddr & 7)))
		return LCHAN_CQE_BAD_ALIGN;

	status = lchan_wr_first_buf(chan, wr, handle, addr, len, num_sge,
				    op->local_write);
	if (!status && num_sge > 1)
		status = lchan_wr_more_bufs(chan, wr, lchan_wr_sq_sges, head + 1,
					    num_sge - 1, LCHAN_SQE_SGES,
					    op->local_write);
	if (status)
		return status;
	if (op->atomic && !wr->num_sge)
		return LCHAN_CQE_BAD_ALIGN;
	/* iWARP names a READ's sink by exactly one SGE: an empty one here. */
	if (opcode == LCHAN_OP_READ && !wr->num_sge) {
		wr->sge[0] = (struct ib_sge){ .lkey = chan->caps.empty_lkey };
		wr->mr[0] = NULL;
		wr->num_sge = 1;
	}

	swr->opcode = op->ib_op;
	swr->num_sge = wr->num_sge;
	wr->signaled = !(flags & LCHAN_SQE_UNSIGNALED);
	if (flags & LCHAN_SQE_SOLICITED)
		swr->send_flags |= IB_SEND_SOLICITED;
	if (flags & LCHAN_SQE_FENCE)
		swr->send_flags |= IB_SEND_FENCE;
	if (opcode == LCHAN_OP_SEND_IMM || opcode == LCHAN_OP_WRITE_IMM)
		swr->ex.imm_data = cpu_to_be32(imm);
	if (op->atomic) {
		wr->atomic.remote_addr = raddr;
		wr->atomic.rkey = rkey;
		wr->atomic.compare_add = compare_add;
		wr->atomic.swap = swap;
	} else if (op->remote) {
		wr->rdma.remote_addr = raddr;
		wr->rdma.rkey = rkey;
	}
	return 0;
}

u32 lchan_wr_read_rqe(struct lchan_channel *chan, u32 head, u32 avail,
		      struct lchan_wr *wr, u32 *slots)
{
	const struct lchan_rqe *rqe = &chan->ring.rqes[head &
						(chan->ring.rq.entries - 1)];
	u32 handle = READ_ONCE(rqe->mr);
	u32 len = READ_ONCE(rqe->len);
	u64 addr = READ_ONCE(rqe->addr);
	u8 num_sge = READ_ONCE(rqe->num_sge);
	u32 status;

	memset(wr, 0, offsetof(struct lchan_wr, sge));
	wr->user_data = READ_ONCE(rqe->user_data);
	wr->opcode = LCHAN_CQE_RECV;
	wr->signaled = true;
	*slots = lchan_wr_slots(num_sge, chan->caps.max_recv_sge,
				LCHAN_RQE_SGES, avail, chan->ring.rq.entries);
	if (!*slots)
		return 0;
	if (READ_ONCE(rqe->flags))
		return LCHAN_CQE_BAD_FLAGS;
	if (READ_ONCE(rqe->resv) || READ_ONCE(rqe->resv0))
		return LCHAN_CQE_BAD_RESV;
	if (num_sge > chan->caps.max_recv_sge || (num_sge > 1 && *slots == 1))
		return LCHAN_CQE_BAD_SGE;
	status = lchan_wr_first_buf(chan, wr, handle, addr, len, num_sge,
				    true);
	if (!status && num_sge > 1)
		status = lchan_wr_more_bufs(chan, wr, lchan_wr_rq_sges, head + 1,
					    num_sge - 1, LCHAN_RQE_SGES, true);
	if (status)
		return status;
	wr->recv.num_sge = wr->num_sge;
	return 0;
}
