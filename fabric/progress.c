// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * Progress: what the channels and listeners did becomes completions and
 * events, driven by the application's reads (fabric lock held), with no
 * thread of its own.  A CQ read files the completions waiting in the CQ
 * rings of its endpoints; the provider's CM messages complete in the same
 * rings and are read here too.  An EQ read turns its ready fds into
 * events: a listener's requests, a channel's end.
 */
#include <errno.h>
#include <string.h>
#include <sys/epoll.h>

#include "lfi.h"

/* lchan's CQE status as a libfabric error. */
static int lfi_progress_status_err(unsigned status)
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

/*
 * Why the connection being made failed (lock held), for the EQ's error
 * event: what the establishment ended with when it says (the peer did
 * not answer, is not reachable), else a refusal (nobody listens there,
 * or the connection went before the ACCEPT came).
 */
static int lfi_progress_connect_err(struct lfi_ep *ep)
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
static bool lfi_progress_cm_done(struct lfi_ep *ep,
				 const struct lchan_cqe *cqe)
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
	lfi_eq_push_err(ep->eq, fid, fid->context, lfi_progress_connect_err(ep),
			(int)cqe->status, NULL, 0);
	return true;
}

/*
 * File the completions waiting in @ep's CQ ring (fabric lock held).
 * @reader is the CQ being read; another CQ that gets entries is kicked.
 */
static void lfi_progress_ep(struct lfi_ep *ep, struct lfi_cq *reader)
{
	struct lchan_cqe *cqe;
	bool refused = false;

	if (!lfi_ep_has_chan(ep))
		return;
	/* A direct channel's ring shows only what an ENTER polled. */
	if ((ep->chan.info.chan_flags & LCHAN_CHAN_DIRECT) &&
	    !lchan_cq_ready(&ep->chan))
		lchan_submit(&ep->chan);
	while (!refused && !lchan_peek_cqe(&ep->chan, &cqe)) {
		bool rx = cqe->user_data & LFI_UD_RX;
		unsigned slot = (unsigned)cqe->user_data;
		struct fi_cq_err_entry e = { 0 };
		struct lfi_cq *cq = rx ? ep->rx_cq : ep->tx_cq;
		struct lfi_op *op;

		if (cqe->user_data & LFI_UD_CM) {
			if (!rx)
				ep->cm_tx_busy = false;
			refused = lfi_progress_cm_done(ep, cqe);
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
			e.err = lfi_progress_status_err(cqe->status);
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
		lfi_chan_close(ep);
}

void lfi_progress_cq(struct lfi_cq *cq)
{
	int i;

	for (i = 0; i < cq->neps; i++)
		lfi_progress_ep(cq->eps[i], cq);
}

/* Turn ready fds into events (fabric lock held). */
void lfi_progress_eq(struct lfi_eq *eq)
{
	struct epoll_event evs[16];
	int n, i;

	n = epoll_wait(eq->wait.epfd, evs, 16, 0);
	for (i = 0; i < n; i++) {
		struct fid *fid = evs[i].data.ptr;

		if (fid->fclass == FI_CLASS_PEP) {
			lfi_pep_take_requests(container_of(fid, struct lfi_pep,
							   pep_fid.fid));
		} else if (fid->fclass == FI_CLASS_EP) {
			struct lfi_ep *ep = container_of(fid, struct lfi_ep,
							 ep_fid.fid);

			/* CM_WAIT: the peer's ACCEPT or REJECT. */
			if (ep->state == LFI_EP_CM_WAIT)
				lfi_progress_ep(ep, NULL);
			if (!(evs[i].events & (EPOLLRDHUP | EPOLLHUP)) ||
			    !lfi_ep_has_chan(ep))
				continue;
			lfi_eq_unwatch(eq, ep->chan.fd);
			if (ep->state == LFI_EP_CM_WAIT) {
				lfi_eq_push_err(eq, fid, fid->context,
						lfi_progress_connect_err(ep), 0,
						NULL, 0);
				lfi_chan_close(ep);
			} else if (!ep->shutdown_reported) {
				ep->shutdown_reported = true;
				lfi_eq_push(eq, FI_SHUTDOWN, fid, NULL, NULL, 0);
			}
		}
	}
}

/*
 * Wait up to @timeout_ms for the ACCEPT in flight to complete (lock
 * held): closing the channel at once flushes it, and the peer would
 * never see the answer it waits for.  Before the connection is up there
 * is nothing to wait for.
 */
void lfi_progress_cm_flush(struct lfi_ep *ep, int timeout_ms)
{
	long long end = lfi_wait_deadline(timeout_ms);
	struct lchan_cqe *cqe;
	int left;

	while (ep->state == LFI_EP_CONNECTED && ep->cm_tx_busy &&
	       (left = lfi_wait_left(end)) &&
	       !lchan_wait_cqe(&ep->chan, &cqe, left))
		lfi_progress_ep(ep, NULL);
}
