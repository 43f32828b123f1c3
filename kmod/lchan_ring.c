// SPDX-License-Identifier: GPL-2.0
/*
 * The shared rings of a channel: memory and mmap, reading and validating
 * SQEs/RQEs, posting them as one chain, and writing CQEs.
 *
 * Ownership and ordering.  Each index word has exactly one writer:
 *   SQ/RQ tail, CQ head: the application.  SQ/RQ head, CQ tail: the kernel.
 * The kernel keeps private copies of the indices it writes (sq_head_k,
 * rq_head_k, cq_tail_k) and never reads them back from the mapping.  Every
 * index read from the mapping is untrusted: it is masked before use and a
 * distance larger than the ring is refused.
 *
 * Pairs (application side in liblchan.h):
 *  - The app fills an SQE/RQE, then store-releases the tail.  The kernel
 *    load-acquires the tail before reading entries, so it sees them whole.
 *  - The kernel reads an entry (each field once, READ_ONCE into a local),
 *    then store-releases its head.  The app load-acquires the head before
 *    reusing the slot, so the kernel's reads are done before the app writes.
 *  - The kernel writes a CQE, then store-releases the CQ tail.  The app
 *    load-acquires the tail before reading the CQE.
 *  - The app reads a CQE, then store-releases the CQ head.  The kernel
 *    load-acquires the CQ head before it lets a completion reuse the slot.
 *
 * Flow control: a work request is posted only when the CQ ring has a slot
 * for its completion that no other CQE or posted request has claimed
 * (ring->inflight counts the claims), so no completion is ever dropped.
 */
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <linux/nospec.h>
#include <linux/log2.h>

#include "lchan.h"

/* Indices each get a cache line so producer and consumer do not share. */
enum {
	LCHAN_LINE = 64,
	LCHAN_OFF_SQ_HEAD = 0 * LCHAN_LINE,
	LCHAN_OFF_SQ_TAIL = 1 * LCHAN_LINE,
	LCHAN_OFF_RQ_HEAD = 2 * LCHAN_LINE,
	LCHAN_OFF_RQ_TAIL = 3 * LCHAN_LINE,
	LCHAN_OFF_CQ_HEAD = 4 * LCHAN_LINE,
	LCHAN_OFF_CQ_TAIL = 5 * LCHAN_LINE,
	LCHAN_OFF_CONST = 6 * LCHAN_LINE,	/* masks and sizes, read-only */
	LCHAN_OFF_FLAGS = 7 * LCHAN_LINE,	/* kernel-written flags */
	LCHAN_OFF_ENTRIES = 8 * LCHAN_LINE,
};

static int lchan_ring_size_one(u32 asked, u32 max, u32 *out)
{
	if (!asked)
		asked = LCHAN_DEFAULT_ENTRIES;
	if (asked > max)
		return -EINVAL;
	*out = roundup_pow_of_two(asked);
	return 0;
}

static void lchan_ring_fill_off(struct lchan_ring_offsets *off, u32 head,
				u32 tail, u32 konst, u32 entries)
{
	off->head = head;
	off->tail = tail;
	off->ring_mask = konst;
	off->ring_entries = konst + sizeof(u32);
	off->entries = entries;
}

/* What can be checked before a device is known. */
int lchan_ring_sizes_check(const struct lchan_ring_sizes *sizes)
{
	if (sizes->resv || sizes->sq_entries > LCHAN_MAX_ENTRIES ||
	    sizes->rq_entries > LCHAN_MAX_ENTRIES ||
	    sizes->cq_entries > 2 * LCHAN_MAX_ENTRIES)
		return -EINVAL;
	return 0;
}

int lchan_ring_alloc(struct lchan_chan *chan,
		     const struct lchan_ring_sizes *sizes)
{
	struct lchan_ring *ring = &chan->ring;
	struct lchan_chan_info *info = &ring->info;
	u32 max = min_t(u32, LCHAN_MAX_ENTRIES,
			chan->dev->ibdev->attrs.max_qp_wr - 1);
	size_t sq_off, rq_off, cq_off, size;
	u32 *konst;
	int ret;

	if (sizes->resv)
		return -EINVAL;
	ret = lchan_ring_size_one(sizes->sq_entries, max, &ring->sq_entries);
	if (ret)
		return ret;
	ret = lchan_ring_size_one(sizes->rq_entries, max, &ring->rq_entries);
	if (ret)
		return ret;
	if (sizes->cq_entries > 2 * LCHAN_MAX_ENTRIES)
		return -EINVAL;
	ring->cq_entries = roundup_pow_of_two(max3(sizes->cq_entries,
						   ring->sq_entries +
						   ring->rq_entries, 1U));

	sq_off = LCHAN_OFF_ENTRIES;
	rq_off = sq_off + ring->sq_entries * sizeof(struct lchan_sqe);
	cq_off = rq_off + ring->rq_entries * sizeof(struct lchan_rqe);
	size = PAGE_ALIGN(cq_off + ring->cq_entries * sizeof(struct lchan_cqe));

	ring->mem = vmalloc_user(size);
	if (!ring->mem)
		return -ENOMEM;
	ring->size = size;

	ring->swr = kvcalloc(ring->sq_entries, sizeof(*ring->swr), GFP_KERNEL);
	ring->rwr = kvcalloc(ring->rq_entries, sizeof(*ring->rwr), GFP_KERNEL);
	if (!ring->swr || !ring->rwr) {
		lchan_ring_free(ring);
		return -ENOMEM;
	}

	ring->sq_head = ring->mem + LCHAN_OFF_SQ_HEAD;
	ring->sq_tail = ring->mem + LCHAN_OFF_SQ_TAIL;
	ring->rq_head = ring->mem + LCHAN_OFF_RQ_HEAD;
	ring->rq_tail = ring->mem + LCHAN_OFF_RQ_TAIL;
	ring->cq_head = ring->mem + LCHAN_OFF_CQ_HEAD;
	ring->cq_tail = ring->mem + LCHAN_OFF_CQ_TAIL;
	ring->sqes = ring->mem + sq_off;
	ring->rqes = ring->mem + rq_off;
	ring->cqes = ring->mem + cq_off;

	/* Masks and sizes for the app; the kernel never reads them back. */
	konst = ring->mem + LCHAN_OFF_CONST;
	konst[0] = ring->sq_entries - 1;
	konst[1] = ring->sq_entries;
	konst[2] = ring->rq_entries - 1;
	konst[3] = ring->rq_entries;
	konst[4] = ring->cq_entries - 1;
	konst[5] = ring->cq_entries;

	info->mmap_size = size;
	lchan_ring_fill_off(&info->sq_off, LCHAN_OFF_SQ_HEAD, LCHAN_OFF_SQ_TAIL,
			    LCHAN_OFF_CONST, sq_off);
	info->sq_off.flags = LCHAN_OFF_FLAGS;
	lchan_ring_fill_off(&info->rq_off, LCHAN_OFF_RQ_HEAD, LCHAN_OFF_RQ_TAIL,
			    LCHAN_OFF_CONST + 2 * sizeof(u32), rq_off);
	info->rq_off.flags = LCHAN_OFF_FLAGS;
	lchan_ring_fill_off(&info->cq_off, LCHAN_OFF_CQ_HEAD, LCHAN_OFF_CQ_TAIL,
			    LCHAN_OFF_CONST + 4 * sizeof(u32), cq_off);
	info->cq_off.flags = LCHAN_OFF_FLAGS;
	info->cq_off.overflow = LCHAN_OFF_FLAGS + sizeof(u32);
	return 0;
}

void lchan_ring_free(struct lchan_ring *ring)
{
	kvfree(ring->swr);
	kvfree(ring->rwr);
	vfree(ring->mem);
	ring->swr = NULL;
	ring->rwr = NULL;
	ring->mem = NULL;
}

/*
 * The mapping holds a reference to the channel file (vm_file), so the
 * channel and its ring memory outlive every mapping: munmap after close
 * and close after munmap are both safe.
 */
int lchan_ring_mmap(struct lchan_chan *chan, struct vm_area_struct *vma)
{
	struct lchan_ring *ring = &chan->ring;

	if (vma->vm_pgoff != (LCHAN_OFF_RINGS >> PAGE_SHIFT))
		return -EINVAL;
	if (vma->vm_end - vma->vm_start != ring->size)
		return -EINVAL;
	vma->vm_flags |= VM_DONTCOPY | VM_DONTEXPAND | VM_DONTDUMP;
	return remap_vmalloc_range(vma, ring->mem, 0);
}

/* Entries the app has published and the kernel not taken, or -1 if bogus. */
static s64 lchan_ring_pending(u32 *tail_word, u32 head_k, u32 entries)
{
	u32 tail = smp_load_acquire(tail_word);	/* pairs with app release */
	u32 pending = tail - head_k;

	return pending > entries ? -1LL : (s64)pending;
}

/* CQEs written and not yet consumed by the app; clamped if head is bogus. */
static u32 lchan_ring_cq_used(struct lchan_ring *ring, u32 tail_k)
{
	u32 head = smp_load_acquire(ring->cq_head); /* pairs with app release */
	u32 used = tail_k - head;

	return used > ring->cq_entries ? ring->cq_entries : used;
}

u32 lchan_ring_cq_ready(struct lchan_chan *chan)
{
	return lchan_ring_cq_used(&chan->ring, READ_ONCE(chan->ring.cq_tail_k));
}

u32 lchan_ring_sq_outstanding(struct lchan_chan *chan)
{
	return READ_ONCE(chan->ring.swr_post) - READ_ONCE(chan->ring.swr_done);
}

u32 lchan_ring_rq_outstanding(struct lchan_chan *chan)
{
	return READ_ONCE(chan->ring.rwr_post) - READ_ONCE(chan->ring.rwr_done);
}

/* Claim a CQ slot for one future CQE.  Called with cq_lock held. */
static bool lchan_ring_claim_cq(struct lchan_ring *ring)
{
	u32 used = lchan_ring_cq_used(ring, ring->cq_tail_k);

	if (used + ring->inflight >= ring->cq_entries)
		return false;
	ring->inflight++;
	return true;
}

/* Write one CQE into a claimed slot and publish it.  cq_lock held. */
static void lchan_ring_put_cqe(struct lchan_chan *chan,
			       const struct lchan_cqe *src)
{
	struct lchan_ring *ring = &chan->ring;
	struct lchan_cqe *cqe;

	cqe = &ring->cqes[ring->cq_tail_k & (ring->cq_entries - 1)];
	memcpy(cqe, src, sizeof(*cqe));
	ring->cq_tail_k++;
	ring->inflight--;
	if (src->status)
		chan->stats.err_cqes++;
	/* Pairs with the app's acquire of the CQ tail. */
	smp_store_release(ring->cq_tail, ring->cq_tail_k);
}

static void lchan_ring_wake(struct lchan_chan *chan)
{
	if (wq_has_sleeper(&chan->wq))
		wake_up(&chan->wq);
}

/* An error CQE for an entry that never reached the device. */
static void lchan_ring_reject(struct lchan_chan *chan, u8 opcode,
			      u64 user_data, u32 status)
{
	struct lchan_cqe cqe = {
		.user_data = user_data,
		.opcode = opcode,
		.status = status,
	};

	spin_lock_bh(&chan->cq_lock);
	lchan_ring_put_cqe(chan, &cqe);
	spin_unlock_bh(&chan->cq_lock);
}

static void lchan_wr_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct lchan_wr *wr = container_of(wc->wr_cqe, struct lchan_wr, cqe);
	struct lchan_chan *chan = wr->chan;
	struct lchan_ring *ring = &chan->ring;
	struct lchan_mr *mr = wr->mr;
	struct lchan_cqe cqe = {
		.user_data = wr->user_data,
		.opcode = wr->opcode,
		.status = wc->status,
		.vendor_err = wc->vendor_err,
	};
	bool is_recv = wr->opcode == LCHAN_CQE_RECV;

	if (is_recv) {
		cqe.byte_len = wc->byte_len;
		if (wc->wc_flags & IB_WC_WITH_IMM) {
			cqe.flags |= LCHAN_CQE_F_IMM;
			cqe.imm_data = be32_to_cpu(wc->ex.imm_data);
		}
	} else {
		cqe.byte_len = wr->sge.length;
	}
	wr->mr = NULL;

	spin_lock(&chan->cq_lock);
	lchan_ring_put_cqe(chan, &cqe);
	/* RC completes each queue in order: the oldest slot is this one. */
	if (is_recv) {
		WRITE_ONCE(ring->rwr_done, ring->rwr_done + 1);
		if (!wc->status) {
			chan->stats.recv_ops++;
			chan->stats.recv_bytes += wc->byte_len;
		}
	} else {
		WRITE_ONCE(ring->swr_done, ring->swr_done + 1);
		if (!wc->status) {
			chan->stats.send_ops++;
			chan->stats.send_bytes += cqe.byte_len;
		}
	}
	spin_unlock(&chan->cq_lock);

	lchan_mr_put(mr);
	lchan_ring_wake(chan);
}

/* A validated local buffer: MR reference and SGE.  0 or a CQE status. */
static u32 lchan_ring_get_buf(struct lchan_chan *chan, u32 handle, u64 addr,
			      u32 len, bool need_write, struct lchan_wr *wr)
{
	struct lchan_mr *mr;

	wr->mr = NULL;
	wr->sge.addr = 0;
	wr->sge.length = 0;
	wr->sge.lkey = 0;
	if (!handle)
		return len || addr ? LCHAN_CQE_BAD_MR : 0;
	if (len > chan->max_msg_size)
		return LCHAN_CQE_BAD_LEN;

	mr = lchan_mr_lookup(chan->ctx, handle);
	if (!mr)
		return LCHAN_CQE_BAD_MR;
	if (mr->pd != chan->pd || !READ_ONCE(mr->ibmr)) {
		lchan_mr_put(mr);
		return LCHAN_CQE_BAD_MR;
	}
	if (addr < mr->addr || addr - mr->addr > mr->length ||
	    len > mr->length - (addr - mr->addr)) {
		lchan_mr_put(mr);
		return LCHAN_CQE_BAD_RANGE;
	}
	if (need_write && !(mr->access & LCHAN_ACCESS_LOCAL_WRITE)) {
		lchan_mr_put(mr);
		return LCHAN_CQE_BAD_ACCESS;
	}
	wr->mr = mr;
	wr->sge.addr = addr;
	wr->sge.length = len;
	wr->sge.lkey = mr->lkey;
	return 0;
}

/* Read one SQE once and check it.  0 or a CQE status. */
static u32 lchan_ring_read_sqe(struct lchan_chan *chan,
			       const struct lchan_sqe *sqe, struct lchan_wr *wr)
{
	u8 opcode = READ_ONCE(sqe->opcode);
	u8 flags = READ_ONCE(sqe->flags);
	u32 handle = READ_ONCE(sqe->mr);
	u64 addr = READ_ONCE(sqe->addr);
	u32 len = READ_ONCE(sqe->len);
	u32 imm = READ_ONCE(sqe->imm_data);
	static const u8 cqe_op[LCHAN_OP_MAX] = {
		[LCHAN_OP_SEND] = LCHAN_CQE_SEND,
		[LCHAN_OP_SEND_IMM] = LCHAN_CQE_SEND_IMM,
	};
	static const u8 ib_op[LCHAN_OP_MAX] = {
		[LCHAN_OP_SEND] = IB_WR_SEND,
		[LCHAN_OP_SEND_IMM] = IB_WR_SEND_WITH_IMM,
	};

	wr->user_data = READ_ONCE(sqe->user_data);
	wr->opcode = 0;
	wr->mr = NULL;
	if (opcode == LCHAN_OP_NOP || opcode >= LCHAN_OP_MAX)
		return LCHAN_CQE_BAD_OPCODE;
	opcode = array_index_nospec(opcode, LCHAN_OP_MAX);
	wr->opcode = cqe_op[opcode];
	if (flags & ~LCHAN_SQE_FLAGS_ALL)
		return LCHAN_CQE_BAD_FLAGS;
	if (opcode == LCHAN_OP_SEND_IMM &&
	    !(chan->features & LCHAN_FEATURE_SEND_IMM))
		return LCHAN_CQE_UNSUPPORTED;
	if (READ_ONCE(sqe->resv0) || READ_ONCE(sqe->remote_addr) ||
	    READ_ONCE(sqe->rkey) || READ_ONCE(sqe->resv1) ||
	    READ_ONCE(sqe->resv2[0]) || READ_ONCE(sqe->resv2[1]))
		return LCHAN_CQE_BAD_RESV;

	memset(&wr->send, 0, sizeof(wr->send));
	wr->send.opcode = ib_op[opcode];
	wr->send.send_flags = IB_SEND_SIGNALED;
	if (flags & LCHAN_SQE_SOLICITED)
		wr->send.send_flags |= IB_SEND_SOLICITED;
	if (opcode == LCHAN_OP_SEND_IMM)
		wr->send.ex.imm_data = cpu_to_be32(imm);
	return lchan_ring_get_buf(chan, handle, addr, len, false, wr);
}

static u32 lchan_ring_read_rqe(struct lchan_chan *chan,
			       const struct lchan_rqe *rqe, struct lchan_wr *wr)
{
	u32 handle = READ_ONCE(rqe->mr);
	u32 len = READ_ONCE(rqe->len);
	u64 addr = READ_ONCE(rqe->addr);

	wr->user_data = READ_ONCE(rqe->user_data);
	wr->opcode = LCHAN_CQE_RECV;
	wr->mr = NULL;
	if (READ_ONCE(rqe->flags))
		return LCHAN_CQE_BAD_FLAGS;
	if (READ_ONCE(rqe->resv))
		return LCHAN_CQE_BAD_RESV;
	memset(&wr->recv, 0, sizeof(wr->recv));
	return lchan_ring_get_buf(chan, handle, addr, len, true, wr);
}

/*
 * After a failed post: the unposted rest of the chain gets flush errors.
 * Those requests were the newest, so their slots are returned by moving
 * the post index back; the older ones in flight keep theirs.
 */
static void lchan_ring_fail_chain(struct lchan_chan *chan, struct lchan_wr *wr,
				  bool is_recv)
{
	struct lchan_ring *ring = &chan->ring;
	u32 *post_idx = is_recv ? &ring->rwr_post : &ring->swr_post;

	while (wr) {
		struct lchan_wr *next = NULL;

		if (is_recv && wr->recv.next)
			next = container_of(wr->recv.next, struct lchan_wr, recv);
		else if (!is_recv && wr->send.next)
			next = container_of(wr->send.next, struct lchan_wr, send);
		lchan_mr_put(wr->mr);
		wr->mr = NULL;
		WRITE_ONCE(*post_idx, *post_idx - 1);
		lchan_ring_reject(chan, wr->opcode, wr->user_data,
				  LCHAN_CQE_WR_FLUSH_ERR);
		wr = next;
	}
}

/* A free WR slot on a queue, or NULL.  Only chan->lock holders post. */
static struct lchan_wr *lchan_ring_free_wr(struct lchan_ring *ring,
					   bool is_recv)
{
	u32 depth = is_recv ? ring->rq_entries : ring->sq_entries;
	u32 post = is_recv ? ring->rwr_post : ring->swr_post;
	u32 done = is_recv ? READ_ONCE(ring->rwr_done) :
			     READ_ONCE(ring->swr_done);

	if (post - done >= depth)
		return NULL;
	return is_recv ? &ring->rwr[post & (depth - 1)] :
			 &ring->swr[post & (depth - 1)];
}

/*
 * Take published entries of one queue, post the good ones as one chain.
 * @post false: answer every entry with a flush error instead (the channel
 * is not connected).  Each entry is read into a local first: a bad one is
 * answered at once even when the queue is full, a good one waits in the
 * ring until a WR slot frees.  Returns the number taken, or -EINVAL for a
 * tail that is not within one ring of the head.
 */
static int lchan_ring_take(struct lchan_chan *chan, bool is_recv, bool post)
{
	struct lchan_ring *ring = &chan->ring;
	u32 entries = is_recv ? ring->rq_entries : ring->sq_entries;
	u32 *head_k = is_recv ? &ring->rq_head_k : &ring->sq_head_k;
	u32 *head_word = is_recv ? ring->rq_head : ring->sq_head;
	u32 *post_idx = is_recv ? &ring->rwr_post : &ring->swr_post;
	struct lchan_wr *first = NULL, *last = NULL;
	const struct ib_send_wr *bad_send;
	const struct ib_recv_wr *bad_recv;
	struct lchan_wr local;
	s64 pending;
	u32 taken = 0;
	int ret;

	pending = lchan_ring_pending(is_recv ? ring->rq_tail : ring->sq_tail,
				     *head_k, entries);
	if (pending < 0)
		return -EINVAL;

	while (taken < pending) {
		u32 slot = *head_k & (entries - 1);
		struct lchan_wr *wr;
		bool room;
		u32 status;

		spin_lock_bh(&chan->cq_lock);
		room = lchan_ring_claim_cq(ring);
		spin_unlock_bh(&chan->cq_lock);
		if (!room)
			break;

		status = is_recv ?
			lchan_ring_read_rqe(chan, &ring->rqes[slot], &local) :
			lchan_ring_read_sqe(chan, &ring->sqes[slot], &local);
		if (!status && !post)
			status = LCHAN_CQE_WR_FLUSH_ERR;
		wr = status ? NULL : lchan_ring_free_wr(ring, is_recv);
		if (!status && !wr) {
			/* Queue full: leave the entry for the next call. */
			lchan_mr_put(local.mr);
			spin_lock_bh(&chan->cq_lock);
			ring->inflight--;
			spin_unlock_bh(&chan->cq_lock);
			break;
		}
		(*head_k)++;
		taken++;
		if (status) {
			lchan_mr_put(local.mr);
			lchan_ring_reject(chan, local.opcode, local.user_data,
					  status);
			continue;
		}

		*wr = local;
		wr->chan = chan;
		wr->cqe.done = lchan_wr_done;
		if (is_recv) {
			wr->recv.wr_cqe = &wr->cqe;
			wr->recv.sg_list = &wr->sge;
			wr->recv.num_sge = wr->sge.length ? 1 : 0;
			wr->recv.next = NULL;
			if (last)
				last->recv.next = &wr->recv;
		} else {
			wr->send.wr_cqe = &wr->cqe;
			wr->send.sg_list = &wr->sge;
			wr->send.num_sge = wr->sge.length ? 1 : 0;
			wr->send.next = NULL;
			if (last)
				last->send.next = &wr->send;
		}
		if (!first)
			first = wr;
		last = wr;
		WRITE_ONCE(*post_idx, *post_idx + 1);
	}

	/* The slots are read: give them back.  Pairs with app acquire. */
	smp_store_release(head_word, *head_k);

	if (!first)
		return taken;

	if (is_recv) {
		ret = ib_post_recv(chan->qp, &first->recv, &bad_recv);
		if (ret)
			lchan_ring_fail_chain(chan,
				container_of(bad_recv, struct lchan_wr, recv),
				true);
	} else {
		ret = ib_post_send(chan->qp, &first->send, &bad_send);
		if (ret)
			lchan_ring_fail_chain(chan,
				container_of(bad_send, struct lchan_wr, send),
				false);
	}
	return taken;
}

/*
 * Post what the app published.  Called with chan->lock held.  Receives go
 * first so that a request/response exchange finds its buffer posted.
 * SQEs wait in the ring while a deferred establish is pending.
 */
int lchan_ring_submit(struct lchan_chan *chan, u32 *sq_done, u32 *rq_done)
{
	int state = READ_ONCE(chan->state);
	bool usable = chan->qp && state != LCHAN_STATE_DISCONNECTED &&
		      state != LCHAN_STATE_ERROR;
	int ret;

	*sq_done = 0;
	*rq_done = 0;
	ret = lchan_ring_take(chan, true, usable);
	if (ret < 0)
		return ret;
	*rq_done = ret;
	if (usable && state != LCHAN_STATE_CONNECTED)
		return 0;
	ret = lchan_ring_take(chan, false, usable);
	if (ret < 0)
		return ret;
	*sq_done = ret;
	return 0;
}
