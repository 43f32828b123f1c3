// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * FI_MSG: sends and receives as SQEs and RQEs of the endpoint's channel.
 * Local buffers are named by their region (FI_MR_LOCAL); fi_inject copies
 * into the endpoint's own registered buffer, one per send slot.  FI_MORE
 * leaves the entry for the next call to submit with.
 */
#include <errno.h>
#include <string.h>

#include "lfi.h"

/* A free slot of @ops, or -1. */
static int lfi_msg_slot_get(struct lfi_op *ops, unsigned size, unsigned *hint)
{
	unsigned i;

	for (i = 0; i < size; i++) {
		unsigned s = (*hint + i) % size;

		if (!ops[s].busy) {
			ops[s].busy = true;
			*hint = (s + 1) % size;
			return (int)s;
		}
	}
	return -1;
}

static int lfi_msg_sges(const struct iovec *iov, void **desc, size_t count,
			struct lchan_sge *sge)
{
	size_t i;

	if (count > LFI_IOV_LIMIT)
		return -FI_EINVAL;
	for (i = 0; i < count; i++) {
		sge[i].mr = iov[i].iov_len ? lfi_mr_handle(desc ? desc[i] : NULL) : 0;
		sge[i].addr = iov[i].iov_len ? (uint64_t)(uintptr_t)iov[i].iov_base : 0;
		sge[i].len = (uint32_t)iov[i].iov_len;
		if (iov[i].iov_len > LFI_MAX_MSG_SIZE)
			return -FI_EMSGSIZE;
	}
	return 0;
}

static int lfi_msg_submit(struct lfi_ep *ep, uint64_t flags)
{
	int ret;

	if (flags & FI_MORE)
		return 0;
	ret = lchan_submit(&ep->chan);
	return ret < 0 ? ret : 0;
}

/*
 * Post one send-queue entry: SEND(_IMM), WRITE(_IMM) or READ.  @cq_flags
 * go into its completion.  FI_INJECT copies the payload first; it says
 * nothing about the completion, which FI_COMPLETION and the endpoint's
 * FI_SELECTIVE_COMPLETION decide, except for an inject call (@inject_call:
 * fi_inject and the like), which has neither a completion nor a context.
 */
static ssize_t lfi_msg_post(struct lfi_ep *ep, uint8_t opcode,
			    const struct iovec *iov, void **desc, size_t count,
			    uint64_t remote_addr, uint64_t key, uint64_t data,
			    void *context, uint64_t flags, uint64_t cq_flags,
			    bool inject_call)
{
	struct lchan_sge sge[LFI_IOV_LIMIT];
	struct lfi_fabric *fab = ep->dom->fabric;
	struct lchan_sqe *sqe;
	struct lfi_op *op;
	ssize_t ret;
	int slot;

	ret = lfi_msg_sges(iov, desc, count, sge);
	if (ret)
		return ret;
	pthread_mutex_lock(&fab->lock);
	if (ep->state != LFI_EP_CONNECTED) {
		ret = -FI_ENOTCONN;
		goto out;
	}
	slot = lfi_msg_slot_get(ep->tx_ops, ep->tx_size, &ep->tx_free);
	if (slot < 0) {
		ret = -FI_EAGAIN;
		goto out;
	}
	if (flags & FI_INJECT) {
		char *b = ep->inject_buf + (size_t)slot * LFI_INJECT_SIZE;
		size_t i, len = 0;

		for (i = 0; i < count; i++)
			len += iov[i].iov_len;
		if (len > LFI_INJECT_SIZE) {
			ep->tx_ops[slot].busy = false;
			ret = -FI_EMSGSIZE;
			goto out;
		}
		for (i = 0, len = 0; i < count; i++) {
			memcpy(b + len, iov[i].iov_base, iov[i].iov_len);
			len += iov[i].iov_len;
		}
		sge[0].mr = len ? ep->inject_mr->lmr.handle : 0;
		sge[0].addr = len ? (uint64_t)(uintptr_t)b : 0;
		sge[0].len = (uint32_t)len;
		count = 1;
	}
	sqe = lchan_get_sqe(&ep->chan);
	if (!sqe) {
		ep->tx_ops[slot].busy = false;
		ret = -FI_EAGAIN;
		goto out;
	}
	sqe->opcode = opcode;
	sqe->user_data = (uint64_t)slot;
	sqe->remote_addr = remote_addr;
	sqe->rkey = (uint32_t)key;
	sqe->imm_data = (uint32_t)data;
	if (count == 1) {
		sqe->mr = sge[0].mr;
		sqe->addr = sge[0].addr;
		sqe->len = sge[0].len;
	} else if (count > 1 &&
		   lchan_sqe_set_sges(&ep->chan, sqe, sge, (unsigned)count)) {
		/* No room for the continuation slots: give the SQE back. */
		ep->chan.sq.tail--;
		ep->tx_ops[slot].busy = false;
		ret = -FI_EAGAIN;
		goto out;
	}
	op = &ep->tx_ops[slot];
	op->context = context;
	op->flags = cq_flags;
	op->buf = NULL;
	op->len = 0;
	op->report = !inject_call &&
		     (!(ep->tx_flags & FI_SELECTIVE_COMPLETION) ||
		      (flags & FI_COMPLETION));
	op->inject_call = inject_call;
	ep->tx_busy++;
	ret = lfi_msg_submit(ep, flags);
out:
	pthread_mutex_unlock(&fab->lock);
	return ret;
}

ssize_t lfi_msg_post_send(struct lfi_ep *ep, uint8_t opcode,
			  const struct iovec *iov, void **desc, size_t count,
			  uint64_t remote_addr, uint64_t key, uint64_t data,
			  void *context, uint64_t flags, uint64_t cq_flags)
{
	return lfi_msg_post(ep, opcode, iov, desc, count, remote_addr, key,
			    data, context, flags, cq_flags, false);
}

ssize_t lfi_msg_post_inject(struct lfi_ep *ep, uint8_t opcode,
			    const void *buf, size_t len, uint64_t remote_addr,
			    uint64_t key, uint64_t data, uint64_t cq_flags)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };

	return lfi_msg_post(ep, opcode, &iov, NULL, 1, remote_addr, key, data,
			    NULL, FI_INJECT, cq_flags, true);
}

static ssize_t lfi_msg_post_recv(struct lfi_ep *ep, const struct iovec *iov,
				 void **desc, size_t count, void *context,
				 uint64_t flags)
{
	struct lchan_sge sge[LFI_IOV_LIMIT];
	struct lfi_fabric *fab = ep->dom->fabric;
	struct lfi_op *op;
	ssize_t ret;
	size_t i;
	int slot;

	ret = lfi_msg_sges(iov, desc, count, sge);
	if (ret)
		return ret;
	pthread_mutex_lock(&fab->lock);
	if (ep->state == LFI_EP_SHUTDOWN) {
		ret = -FI_ENOTCONN;
		goto out;
	}
	slot = lfi_msg_slot_get(ep->rx_ops, ep->rx_size, &ep->rx_free);
	if (slot < 0) {
		ret = -FI_EAGAIN;
		goto out;
	}
	op = &ep->rx_ops[slot];
	op->context = context;
	op->flags = FI_MSG | FI_RECV;
	op->buf = count ? iov[0].iov_base : NULL;
	op->len = 0;
	op->report = !(ep->rx_flags & FI_SELECTIVE_COMPLETION) ||
		     (flags & FI_COMPLETION);
	ep->rx_busy++;
	if (!lfi_ep_has_chan(ep)) {
		struct lfi_rx_pending *p = &ep->rx_pending[ep->n_rx_pending++];

		memcpy(p->sge, sge, sizeof(sge));
		for (i = 0; i < count; i++)
			p->desc[i] = desc ? desc[i] : NULL;
		p->n = (unsigned)count;
		p->slot = (unsigned)slot;
		goto out;
	}
	{
		struct lchan_rqe *rqe = lchan_get_rqe(&ep->chan);

		if (!rqe) {
			op->busy = false;
			ep->rx_busy--;
			ret = -FI_EAGAIN;
			goto out;
		}
		rqe->user_data = LFI_UD_RX | (uint64_t)slot;
		if (count == 1) {
			rqe->mr = sge[0].mr;
			rqe->addr = sge[0].addr;
			rqe->len = sge[0].len;
		} else if (count > 1 &&
			   lchan_rqe_set_sges(&ep->chan, rqe, sge, (unsigned)count)) {
			ep->chan.rq.tail--;
			op->busy = false;
			ep->rx_busy--;
			ret = -FI_EAGAIN;
			goto out;
		}
	}
	ret = lfi_msg_submit(ep, flags);
out:
	pthread_mutex_unlock(&fab->lock);
	return ret;
}

/* Put the receives posted before the channel into its RQ (lock held). */
void lfi_msg_post_pending_rx(struct lfi_ep *ep)
{
	unsigned i, j;

	for (i = 0; i < ep->n_rx_pending; i++) {
		struct lfi_rx_pending *p = &ep->rx_pending[i];
		struct lchan_rqe *rqe = lchan_get_rqe(&ep->chan);

		if (!rqe)
			break;	/* the ring is at least rx_size: cannot be */
		for (j = 0; j < p->n; j++)
			p->sge[j].mr = lfi_mr_handle(p->desc[j]);
		if (p->n == 1) {
			rqe->mr = p->sge[0].mr;
			rqe->addr = p->sge[0].addr;
			rqe->len = p->sge[0].len;
		} else if (p->n > 1) {
			lchan_rqe_set_sges(&ep->chan, rqe, p->sge, p->n);
		}
		rqe->user_data = LFI_UD_RX | p->slot;
	}
	ep->n_rx_pending = 0;
	lchan_submit(&ep->chan);
}

static ssize_t lfi_msg_recv(struct fid_ep *ep, void *buf, size_t len,
			    void *desc, fi_addr_t src_addr, void *context)
{
	struct iovec iov = { .iov_base = buf, .iov_len = len };

	(void)src_addr;
	return lfi_msg_post_recv(to_lfi_ep(ep), &iov, &desc, 1, context,
				 to_lfi_ep(ep)->rx_op_flags);
}

static ssize_t lfi_msg_recvv(struct fid_ep *ep, const struct iovec *iov,
			     void **desc, size_t count, fi_addr_t src_addr,
			     void *context)
{
	(void)src_addr;
	return lfi_msg_post_recv(to_lfi_ep(ep), iov, desc, count, context,
				 to_lfi_ep(ep)->rx_op_flags);
}

static ssize_t lfi_msg_recvmsg(struct fid_ep *ep, const struct fi_msg *msg,
			       uint64_t flags)
{
	return lfi_msg_post_recv(to_lfi_ep(ep), msg->msg_iov, msg->desc,
				 msg->iov_count, msg->context, flags);
}

static ssize_t lfi_msg_send(struct fid_ep *ep, const void *buf, size_t len,
			    void *desc, fi_addr_t dest_addr, void *context)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };

	(void)dest_addr;
	return lfi_msg_post_send(to_lfi_ep(ep), LCHAN_OP_SEND, &iov, &desc, 1,
				 0, 0, 0, context, to_lfi_ep(ep)->tx_op_flags,
				 FI_MSG | FI_SEND);
}

static ssize_t lfi_msg_sendv(struct fid_ep *ep, const struct iovec *iov,
			     void **desc, size_t count, fi_addr_t dest_addr,
			     void *context)
{
	(void)dest_addr;
	return lfi_msg_post_send(to_lfi_ep(ep), LCHAN_OP_SEND, iov, desc, count,
				 0, 0, 0, context, to_lfi_ep(ep)->tx_op_flags,
				 FI_MSG | FI_SEND);
}

static ssize_t lfi_msg_sendmsg(struct fid_ep *ep, const struct fi_msg *msg,
			       uint64_t flags)
{
	bool imm = flags & FI_REMOTE_CQ_DATA;

	if (imm && !to_lfi_ep(ep)->cq_data)
		return -FI_EOPNOTSUPP;
	return lfi_msg_post_send(to_lfi_ep(ep),
				 imm ? LCHAN_OP_SEND_IMM : LCHAN_OP_SEND,
				 msg->msg_iov, msg->desc, msg->iov_count, 0, 0,
				 msg->data, msg->context, flags,
				 FI_MSG | FI_SEND);
}

static ssize_t lfi_msg_inject(struct fid_ep *ep, const void *buf, size_t len,
			      fi_addr_t dest_addr)
{
	(void)dest_addr;
	return lfi_msg_post_inject(to_lfi_ep(ep), LCHAN_OP_SEND, buf, len, 0,
				   0, 0, FI_MSG | FI_SEND);
}

static ssize_t lfi_msg_senddata(struct fid_ep *ep, const void *buf, size_t len,
				void *desc, uint64_t data, fi_addr_t dest_addr,
				void *context)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };

	(void)dest_addr;
	if (!to_lfi_ep(ep)->cq_data)
		return -FI_EOPNOTSUPP;
	return lfi_msg_post_send(to_lfi_ep(ep), LCHAN_OP_SEND_IMM, &iov, &desc,
				 1, 0, 0, data, context,
				 to_lfi_ep(ep)->tx_op_flags,
				 FI_MSG | FI_SEND);
}

static ssize_t lfi_msg_injectdata(struct fid_ep *ep, const void *buf,
				  size_t len, uint64_t data, fi_addr_t dest_addr)
{
	(void)dest_addr;
	if (!to_lfi_ep(ep)->cq_data)
		return -FI_EOPNOTSUPP;
	return lfi_msg_post_inject(to_lfi_ep(ep), LCHAN_OP_SEND_IMM, buf, len,
				   0, 0, data, FI_MSG | FI_SEND);
}

struct fi_ops_msg lfi_msg_ops = {
	.size = sizeof(struct fi_ops_msg),
	.recv = lfi_msg_recv,
	.recvv = lfi_msg_recvv,
	.recvmsg = lfi_msg_recvmsg,
	.send = lfi_msg_send,
	.sendv = lfi_msg_sendv,
	.sendmsg = lfi_msg_sendmsg,
	.inject = lfi_msg_inject,
	.senddata = lfi_msg_senddata,
	.injectdata = lfi_msg_injectdata,
};
