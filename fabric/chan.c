// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * An endpoint's channel: taken over when fi_connect makes it or a
 * connection request brings it, the provider's CM messages posted on it,
 * closed.  What completes on it is read by progress.c.
 */
#include <string.h>

#include "lfi.h"

/* Send a CM message (lock held); its completion is dropped. */
int lfi_chan_cm_send(struct lfi_ep *ep, uint8_t type, const void *data,
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

static int lfi_chan_cm_post_rx(struct lfi_ep *ep)
{
	struct lchan_rqe *rqe = lchan_get_rqe(&ep->chan);

	if (!rqe)
		return -FI_EAGAIN;
	lchan_prep_recv(rqe, &ep->inject_mr->lmr, lfi_ep_cm_buf(ep, true),
			sizeof(struct lfi_cm_msg), LFI_UD_CM | LFI_UD_RX);
	return 0;
}

/*
 * @ep takes over @chan (lock held): register what the domain has through
 * it, watch it for the CQs and post the waiting receives, after the one
 * for the peer's first CM message when @cm_rx.
 */
int lfi_chan_adopt(struct lfi_ep *ep, struct lchan_chan *chan, bool cm_rx)
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
		ret = lfi_chan_cm_post_rx(ep);
	if (ret) {
		lfi_chan_close(ep);
		ep->state = LFI_EP_IDLE;
		return ret;
	}
	lfi_msg_post_pending_rx(ep);
	return 0;
}

/* Close the channel (lock held); what was in flight is gone with it. */
void lfi_chan_close(struct lfi_ep *ep)
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
