// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * FI_EP_MSG endpoints: one lchan channel each.  The operation slots say
 * what each SQE and RQE in flight was (user_data is the slot, with
 * LFI_UD_RX for receives); completions are filed from the channel's CQ
 * ring into the endpoint's CQs.  Receives posted before the channel
 * exists wait in rx_pending and go into its RQ before it is established.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>

#include "lfi.h"


/* A free slot of @ops, or -1. */
int lfi_ep_slot_get(struct lfi_op *ops, unsigned size, unsigned *hint)
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

/* lchan's CQE status as a libfabric error. */
static int lfi_ep_status_err(unsigned status)
{
	switch (status) {
	case LCHAN_CQE_WR_FLUSH_ERR:
		return FI_ECANCELED;
	case LCHAN_CQE_LOC_LEN_ERR:
	case LCHAN_CQE_BAD_LEN:
		return FI_ETRUNC;
	case LCHAN_CQE_REM_ACCESS_ERR:
	case LCHAN_CQE_LOC_PROT_ERR:
	case LCHAN_CQE_BAD_ACCESS:
	case LCHAN_CQE_BAD_MR:
	case LCHAN_CQE_BAD_RANGE:
		return FI_EACCES;
	case LCHAN_CQE_UNSUPPORTED:
	case LCHAN_CQE_BAD_OPCODE:
		return FI_EOPNOTSUPP;
	case LCHAN_CQE_RETRY_EXC_ERR:
	case LCHAN_CQE_RNR_RETRY_EXC_ERR:
		return FI_ETIMEDOUT;
	}
	return FI_EIO;
}

bool lfi_ep_has_chan(const struct lfi_ep *ep)
{
	return ep->state == LFI_EP_ACCEPTING || ep->state == LFI_EP_CM_WAIT ||
	       ep->state == LFI_EP_CONNECTED;
}

static struct lfi_cm_msg *lfi_ep_cm_buf(struct lfi_ep *ep, bool rx)
{
	return (struct lfi_cm_msg *)(ep->inject_buf + ((size_t)ep->tx_size +
				     (rx ? 1 : 0)) * LFI_INJECT_SIZE);
}

/* Send a CM message (lock held); its completion is dropped. */
int lfi_ep_cm_send(struct lfi_ep *ep, uint8_t type, const void *data,
		   size_t len)
{
	struct lfi_cm_msg *m = lfi_ep_cm_buf(ep, false);
	struct lchan_sqe *sqe;
	int ret;

	if (len > LFI_CM_DATA_MAX)
		return -FI_EINVAL;
	sqe = lchan_get_sqe(&ep->chan);
	if (!sqe)
		return -FI_EAGAIN;
	memset(m, 0, sizeof(*m));
	m->magic = LFI_CM_MAGIC;
	m->type = type;
	m->len = (uint8_t)len;
	if (len)
		memcpy(m->data, data, len);
	lchan_prep_send(sqe, &ep->inject_mr->lmr, m, sizeof(*m), LFI_UD_CM);
	ep->cm_tx_busy = true;
	ret = lchan_submit(&ep->chan);
	return ret < 0 ? ret : 0;
}

static int lfi_ep_cm_post_rx(struct lfi_ep *ep)
{
	struct lchan_rqe *rqe = lchan_get_rqe(&ep->chan);

	if (!rqe)
		return -FI_EAGAIN;
	lchan_prep_recv(rqe, &ep->inject_mr->lmr, lfi_ep_cm_buf(ep, true),
			sizeof(struct lfi_cm_msg), LFI_UD_CM | LFI_UD_RX);
	return 0;
}

/*
 * Why the connection being made failed (lock held), for the EQ's error
 * event: what the establishment ended with when it says (the peer did
 * not answer, is not reachable), else a refusal (nobody listens there,
 * or the connection went before the ACCEPT came).
 */
int lfi_ep_connect_err(struct lfi_ep *ep)
{
	int ret = lchan_connect_result(&ep->chan);

	switch (ret) {
	case -ETIMEDOUT:
	case -EHOSTUNREACH:
	case -ENETUNREACH:
	case -ENODEV:
		return -ret;
	}
	return FI_ECONNREFUSED;
}

/*
 * A CM message completed (lock held).  Returns true when the channel
 * must be closed: the peer refused, or spoke out of turn.
 */
static bool lfi_ep_cm_done(struct lfi_ep *ep, const struct lchan_cqe *cqe)
{
	const struct lfi_cm_msg *m = lfi_ep_cm_buf(ep, true);
	struct fid *fid = &ep->ep_fid.fid;

	if (!(cqe->user_data & LFI_UD_RX) || ep->state != LFI_EP_CM_WAIT)
		return false;
	if (cqe->status == LCHAN_CQE_OK && cqe->byte_len == sizeof(*m) &&
	    m->magic == LFI_CM_MAGIC && m->len <= LFI_CM_DATA_MAX) {
		if (m->type == LFI_CM_ACCEPT) {
			ep->state = LFI_EP_CONNECTED;
			lfi_eq_rewatch(ep->eq, ep->chan.fd, EPOLLRDHUP, fid);
			lfi_eq_push(ep->eq, FI_CONNECTED, fid, NULL, m->data,
				    m->len);
			return false;
		}
		if (m->type == LFI_CM_REJECT) {
			lfi_eq_push_err(ep->eq, fid, fid->context,
					FI_ECONNREFUSED, 0, m->data, m->len);
			return true;
		}
	}
	lfi_eq_push_err(ep->eq, fid, fid->context, lfi_ep_connect_err(ep),
			(int)cqe->status, NULL, 0);
	return true;
}

/*
 * File the completions waiting in @ep's CQ ring (fabric lock held).
 * @reader is the CQ being read; another CQ that gets entries is kicked.
 */
void lfi_ep_progress(struct lfi_ep *ep, struct lfi_cq *reader)
{
	struct lchan_cqe *cqe;
	bool refused = false;

	if (!lfi_ep_has_chan(ep))
		return;
	while (!refused && !lchan_peek_cqe(&ep->chan, &cqe)) {
		bool rx = cqe->user_data & LFI_UD_RX;
		unsigned slot = (unsigned)cqe->user_data;
		struct fi_cq_err_entry e = { 0 };
		struct lfi_cq *cq = rx ? ep->rx_cq : ep->tx_cq;
		struct lfi_op *op;

		if (cqe->user_data & LFI_UD_CM) {
			if (!rx)
				ep->cm_tx_busy = false;
			refused = lfi_ep_cm_done(ep, cqe);
			lchan_cqe_seen(&ep->chan);
			continue;
		}

		op = slot < (rx ? ep->rx_size : ep->tx_size) ?
		     (rx ? &ep->rx_ops[slot] : &ep->tx_ops[slot]) : NULL;
		/* Not a request in flight: nothing to report or free. */
		if (!op || !op->busy) {
			LFI_WARN(FI_LOG_CQ, "completion for no request: 0x%llx\n",
				 (unsigned long long)cqe->user_data);
			lchan_cqe_seen(&ep->chan);
			continue;
		}
		e.op_context = op->context;
		e.flags = op->flags;
		if (rx) {
			e.len = cqe->byte_len;
			e.buf = op->buf;
			if (cqe->opcode == LCHAN_CQE_RECV_WRITE_IMM) {
				e.flags = FI_RMA | FI_REMOTE_WRITE;
				e.buf = NULL;
				e.len = 0;
			}
			if (cqe->flags & LCHAN_CQE_F_IMM) {
				e.flags |= FI_REMOTE_CQ_DATA;
				e.data = cqe->imm_data;
			}
		}
		if (cqe->status != LCHAN_CQE_OK) {
			e.err = lfi_ep_status_err(cqe->status);
			e.prov_errno = (int)cqe->status;
			e.olen = 0;
		}
		/*
		 * An inject call has no context to name in an error entry,
		 * and a reader following op_context would follow NULL: there
		 * is none.  A transfer that fails puts the channel in error:
		 * the EQ reports FI_SHUTDOWN, and the operations after it
		 * complete in error with their contexts.
		 */
		if (e.err && op->inject_call) {
			if (cqe->status != LCHAN_CQE_WR_FLUSH_ERR)
				LFI_WARN(FI_LOG_CQ, "inject failed: %s\n",
					 lchan_cqe_status_str(cqe->status));
		} else if (cq && (op->report || e.err)) {
			if (lfi_cq_push(cq, &e))
				LFI_WARN(FI_LOG_CQ, "completion lost: no memory\n");
			else if (cq != reader)
				lfi_cq_kick(cq);
		}
		op->busy = false;
		if (rx)
			ep->rx_busy--;
		else
			ep->tx_busy--;
		lchan_cqe_seen(&ep->chan);
	}
	if (refused)
		lfi_ep_close_chan(ep);
}

/*
 * Wait up to @timeout_ms for the ACCEPT in flight to complete (lock
 * held): closing the channel at once flushes it, and the peer would
 * never see the answer it waits for.  Before the connection is up there
 * is nothing to wait for.
 */
void lfi_ep_cm_flush(struct lfi_ep *ep, int timeout_ms)
{
	long long end = lfi_wait_deadline(timeout_ms);
	struct lchan_cqe *cqe;
	int left;

	while (ep->state == LFI_EP_CONNECTED && ep->cm_tx_busy &&
	       (left = lfi_wait_left(end)) &&
	       !lchan_wait_cqe(&ep->chan, &cqe, left))
		lfi_ep_progress(ep, NULL);
}

/* Put the receives posted before the channel into its RQ (lock held). */
void lfi_ep_post_pending_rx(struct lfi_ep *ep)
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

/*
 * @ep takes over @chan (lock held): register what the domain has through
 * it, watch it for the CQs and post the waiting receives, after the one
 * for the peer's first CM message when @cm_rx.
 */
int lfi_ep_adopt(struct lfi_ep *ep, struct lchan_chan *chan, bool cm_rx)
{
	int ret;

	ep->chan = *chan;
	ep->state = LFI_EP_ACCEPTING;
	ret = lfi_domain_attach(ep->dom, &ep->chan);
	if (!ret && ep->tx_cq)
		ret = lfi_cq_watch(ep->tx_cq, ep);
	if (!ret && ep->rx_cq && ep->rx_cq != ep->tx_cq)
		ret = lfi_cq_watch(ep->rx_cq, ep);
	if (!ret && cm_rx)
		ret = lfi_ep_cm_post_rx(ep);
	if (ret) {
		lfi_ep_close_chan(ep);
		ep->state = LFI_EP_IDLE;
		return ret;
	}
	lfi_ep_post_pending_rx(ep);
	return 0;
}

/* Close the channel (lock held); what was in flight is gone with it. */
void lfi_ep_close_chan(struct lfi_ep *ep)
{
	if (!lfi_ep_has_chan(ep))
		return;
	if (ep->tx_cq)
		lfi_cq_unwatch(ep->tx_cq, ep);
	if (ep->rx_cq && ep->rx_cq != ep->tx_cq)
		lfi_cq_unwatch(ep->rx_cq, ep);
	if (ep->eq)
		lfi_eq_unwatch(ep->eq, ep->chan.fd);
	lfi_domain_detach(ep->dom, &ep->chan);
	lchan_chan_close(&ep->chan);
	ep->state = LFI_EP_SHUTDOWN;
}

static int lfi_ep_close(struct fid *fid)
{
	struct lfi_ep *ep = container_of(fid, struct lfi_ep, ep_fid.fid);
	struct lfi_domain *dom = ep->dom;
	struct lfi_ep **p;

	pthread_mutex_lock(&dom->fabric->lock);
	if (ep->state == LFI_EP_CONNECTING) {
		pthread_mutex_unlock(&dom->fabric->lock);
		return -FI_EBUSY;
	}
	lfi_ep_cm_flush(ep, 1000);
	lfi_ep_close_chan(ep);
	if (ep->tx_cq)
		lfi_cq_del_ep(ep->tx_cq, ep);
	if (ep->rx_cq)
		lfi_cq_del_ep(ep->rx_cq, ep);
	if (ep->eq) {
		lfi_eq_forget(ep->eq, &ep->ep_fid.fid);
		ep->eq->refs--;
	}
	for (p = &dom->eps; *p; p = &(*p)->next)
		if (*p == ep) {
			*p = ep->next;
			break;
		}
	dom->refs--;
	pthread_mutex_unlock(&dom->fabric->lock);
	if (ep->inject_mr)
		fi_close(&ep->inject_mr->mr_fid.fid);
	free(ep->inject_buf);
	free(ep->tx_ops);
	free(ep->rx_ops);
	free(ep->rx_pending);
	fi_freeinfo(ep->info);
	free(ep);
	return 0;
}

static int lfi_ep_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	struct lfi_ep *ep = container_of(fid, struct lfi_ep, ep_fid.fid);
	struct lfi_fabric *fab = ep->dom->fabric;
	int ret = 0;

	pthread_mutex_lock(&fab->lock);
	if (ep->enabled) {
		ret = -FI_EOPBADSTATE;
		goto out;
	}
	switch (bfid->fclass) {
	case FI_CLASS_EQ:
		if (ep->eq) {
			ret = -FI_EINVAL;
			break;
		}
		ep->eq = container_of(bfid, struct lfi_eq, eq_fid.fid);
		ep->eq->refs++;
		break;
	case FI_CLASS_CQ: {
		struct lfi_cq *cq = container_of(bfid, struct lfi_cq,
						 cq_fid.fid);

		if (!(flags & (FI_TRANSMIT | FI_RECV)) ||
		    (flags & ~(FI_TRANSMIT | FI_RECV | FI_SELECTIVE_COMPLETION)) ||
		    cq->dom != ep->dom) {
			ret = -FI_EINVAL;
			break;
		}
		if (((flags & FI_TRANSMIT) && ep->tx_cq) ||
		    ((flags & FI_RECV) && ep->rx_cq)) {
			ret = -FI_EINVAL;
			break;
		}
		ret = lfi_cq_add_ep(cq, ep);
		if (ret)
			break;
		if (flags & FI_TRANSMIT) {
			ep->tx_cq = cq;
			ep->tx_flags = flags & FI_SELECTIVE_COMPLETION;
		}
		if (flags & FI_RECV) {
			ep->rx_cq = cq;
			ep->rx_flags = flags & FI_SELECTIVE_COMPLETION;
		}
		if (lfi_ep_has_chan(ep))
			ret = lfi_cq_watch(cq, ep);
		break;
	}
	default:
		ret = -FI_ENOSYS;
	}
out:
	pthread_mutex_unlock(&fab->lock);
	return ret;
}

static int lfi_ep_control(struct fid *fid, int command, void *arg)
{
	struct lfi_ep *ep = container_of(fid, struct lfi_ep, ep_fid.fid);
	uint64_t *flags;

	switch (command) {
	case FI_ENABLE:
		if (!ep->tx_cq || !ep->rx_cq)
			return -FI_ENOCQ;
		if (!ep->eq)
			return -FI_ENOEQ;
		ep->enabled = true;
		return 0;
	case FI_GETOPSFLAG:
		flags = arg;
		if (*flags & FI_TRANSMIT)
			*flags = ep->tx_op_flags;
		else if (*flags & FI_RECV)
			*flags = ep->rx_op_flags;
		else
			return -FI_EINVAL;
		return 0;
	case FI_SETOPSFLAG:
		flags = arg;
		if (*flags & FI_TRANSMIT)
			ep->tx_op_flags = *flags & ~FI_TRANSMIT;
		else if (*flags & FI_RECV)
			ep->rx_op_flags = *flags & ~FI_RECV;
		else
			return -FI_EINVAL;
		return 0;
	}
	return -FI_ENOSYS;
}

static struct fi_ops lfi_ep_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = lfi_ep_close,
	.bind = lfi_ep_bind,
	.control = lfi_ep_control,
	.ops_open = lfi_unsupported_ops_open,
	.tostr = lfi_unsupported_tostr,
	.ops_set = lfi_unsupported_ops_set,
};

int lfi_ep_getopt(fid_t fid, int level, int optname, void *optval,
			 size_t *optlen)
{
	(void)fid;
	if (level != FI_OPT_ENDPOINT)
		return -FI_ENOPROTOOPT;
	if (optname == FI_OPT_CM_DATA_SIZE) {
		if (*optlen < sizeof(size_t))
			return -FI_ETOOSMALL;
		*(size_t *)optval = LFI_CM_DATA_MAX;
		*optlen = sizeof(size_t);
		return 0;
	}
	return -FI_ENOPROTOOPT;
}

static ssize_t lfi_ep_rx_size_left(struct fid_ep *ep_fid)
{
	struct lfi_ep *ep = to_lfi_ep(ep_fid);

	return (ssize_t)(ep->rx_size - ep->rx_busy);
}

static ssize_t lfi_ep_tx_size_left(struct fid_ep *ep_fid)
{
	struct lfi_ep *ep = to_lfi_ep(ep_fid);

	return (ssize_t)(ep->tx_size - ep->tx_busy);
}

static struct fi_ops_ep lfi_ep_ops = {
	.size = sizeof(struct fi_ops_ep),
	.cancel = lfi_unsupported_cancel,
	.getopt = lfi_ep_getopt,
	.setopt = lfi_unsupported_setopt,
	.tx_ctx = lfi_unsupported_tx_ctx,
	.rx_ctx = lfi_unsupported_rx_ctx,
	.rx_size_left = lfi_ep_rx_size_left,
	.tx_size_left = lfi_ep_tx_size_left,
};

/* The application's queue size; each ring holds one CM entry more. */
static unsigned lfi_ep_queue_size(size_t asked)
{
	if (!asked)
		return LFI_DEF_QUEUE;
	return asked > LFI_MAX_QUEUE - 1 ? LFI_MAX_QUEUE - 1 : (unsigned)asked;
}

int lfi_ep_open(struct fid_domain *domain, struct fi_info *info,
		struct fid_ep **ep_fid, void *context)
{
	struct lfi_domain *dom = to_lfi_domain(domain);
	struct lfi_connreq *req = NULL;
	struct lfi_pep *pep = NULL;
	struct lfi_ep *ep;
	int ret;

	if (!info || !info->ep_attr || info->ep_attr->type != FI_EP_MSG)
		return -FI_EINVAL;
	if (info->handle) {
		/* A request's channel, or a passive endpoint's address. */
		if (info->handle->fclass == FI_CLASS_CONNREQ)
			req = container_of(info->handle, struct lfi_connreq,
					   fid);
		else if (!(pep = lfi_pep_from_fid(info->handle)))
			return -FI_EINVAL;
	}
	ep = calloc(1, sizeof(*ep));
	if (!ep)
		return -FI_ENOMEM;
	ep->dom = dom;
	ep->info = fi_dupinfo(info);
	ep->tx_size = lfi_ep_queue_size(info->tx_attr ? info->tx_attr->size : 0);
	ep->rx_size = lfi_ep_queue_size(info->rx_attr ? info->rx_attr->size : 0);
	ep->tx_ops = calloc(ep->tx_size, sizeof(*ep->tx_ops));
	ep->rx_ops = calloc(ep->rx_size, sizeof(*ep->rx_ops));
	ep->rx_pending = calloc(ep->rx_size, sizeof(*ep->rx_pending));
	/* Inject slots, then the CM message out and the one in. */
	ep->inject_buf = aligned_alloc(4096, (((size_t)ep->tx_size + 2) *
					      LFI_INJECT_SIZE + 4095) & ~4095ul);
	if (!ep->info || !ep->tx_ops || !ep->rx_ops || !ep->rx_pending ||
	    !ep->inject_buf) {
		ret = -FI_ENOMEM;
		goto err_free;
	}
	if (info->tx_attr)
		ep->tx_op_flags = info->tx_attr->op_flags;
	if (info->rx_attr)
		ep->rx_op_flags = info->rx_attr->op_flags;
	/* 0 where the device has none or the application posts no receive. */
	ep->cq_data = !dom->iwarp && info->domain_attr &&
		      info->domain_attr->cq_data_size;
	if (info->src_addr && info->src_addrlen <= sizeof(ep->src))
		memcpy(&ep->src, info->src_addr, info->src_addrlen);
	ret = fi_mr_reg(domain, ep->inject_buf,
			((size_t)ep->tx_size + 2) * LFI_INJECT_SIZE,
			FI_SEND | FI_RECV, 0, 0, 0,
			(struct fid_mr **)&ep->inject_mr, NULL);
	if (ret)
		goto err_free;

	ep->ep_fid.fid.fclass = FI_CLASS_EP;
	ep->ep_fid.fid.context = context;
	ep->ep_fid.fid.ops = &lfi_ep_fi_ops;
	ep->ep_fid.ops = &lfi_ep_ops;
	ep->ep_fid.cm = &lfi_cm_ep_ops;
	ep->ep_fid.msg = &lfi_msg_ops;
	ep->ep_fid.rma = &lfi_rma_ops;
	ep->ep_fid.tagged = &lfi_unsupported_tagged_ops;
	ep->ep_fid.atomic = &lfi_unsupported_atomic_ops;
	ep->ep_fid.collective = &lfi_unsupported_collective_ops;

	pthread_mutex_lock(&dom->fabric->lock);
	ep->next = dom->eps;
	dom->eps = ep;
	dom->refs++;
	if (pep) {
		/* fi_endpoint(3): the passive endpoint is not used after. */
		struct sockaddr_storage ss;

		if (lfi_pep_name(pep, &ss))
			ep->src = ss;
		ep->info->handle = NULL;
	}
	if (req) {
		/* The request is used up either way. */
		ret = lfi_ep_adopt(ep, &req->chan, false);
		lchan_mr_dereg(&dom->fabric->ctx, &req->mr);
		free(req->msg);
		free(req);
		info->handle = NULL;
		ep->info->handle = NULL;
		if (ret) {
			pthread_mutex_unlock(&dom->fabric->lock);
			lfi_ep_close(&ep->ep_fid.fid);
			return ret;
		}
	}
	pthread_mutex_unlock(&dom->fabric->lock);
	*ep_fid = &ep->ep_fid;
	return 0;

err_free:
	free(ep->inject_buf);
	free(ep->tx_ops);
	free(ep->rx_ops);
	free(ep->rx_pending);
	fi_freeinfo(ep->info);
	free(ep);
	return ret;
}
