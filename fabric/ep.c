// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * FI_EP_MSG endpoints: one lchan channel each (chan.c).  The operation
 * slots say what each SQE and RQE in flight was (user_data is the slot,
 * with LFI_UD_RX for receives): msg.c fills them, progress.c files their
 * completions into the endpoint's CQs.  Receives posted before the
 * channel exists wait in rx_pending and go into its RQ before it is
 * established.  Here: the endpoint's making, binding and closing.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lfi.h"

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
	lfi_progress_cm_flush(ep, 1000);
	lfi_chan_close(ep);
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
	.getopt = lfi_cm_getopt,
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
		ret = lfi_chan_adopt(ep, &req->chan, false);
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
