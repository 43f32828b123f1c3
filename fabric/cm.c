// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * Connection management.  lchan's connect carries no private data, so
 * the provider exchanges the application's as the channel's first
 * messages (lfi.h, "Connection data"): the connecting side's CONNECT,
 * the accepting side's ACCEPT or REJECT.  fi_connect returns once the
 * request is out, and the EQ reports how it ends; the listening side's
 * EQ read waits for the CONNECT (pep.c), which the connecting side's
 * kernel sends as soon as the channel is up.
 */
#include <errno.h>
#include <string.h>
#include <sys/epoll.h>

#include "lfi.h"

/*
 * The application's side of the connection is up (fabric lock held):
 * watch for its end and tell the EQ.
 */
static int lfi_cm_connected(struct lfi_ep *ep)
{
	int ret;

	ep->state = LFI_EP_CONNECTED;
	ret = lfi_eq_watch(ep->eq, ep->chan.fd, EPOLLRDHUP, &ep->ep_fid.fid);
	if (ret)
		return ret;
	return lfi_eq_push(ep->eq, FI_CONNECTED, &ep->ep_fid.fid, NULL, NULL,
			   0);
}

/*
 * fi_connect: the channel, its receive for the peer's answer and the
 * receives posted before, CONNECT with @param queued behind them, then
 * the establishment, which returns once the request is out (the
 * channel's fd is non-blocking).  The kernel posts the CONNECT when the
 * connection is up, without this process, so two sides connecting to
 * each other at once do not wait for each other.  The EQ watches the
 * channel from then on: FI_CONNECTED when it reads the ACCEPT, an
 * FI_ECONNREFUSED error event whose err_data is the peer's for a
 * REJECT, an error event when the connection fails.  Only the address
 * and route resolution wait here.
 */
static int lfi_cm_connect(struct fid_ep *ep_fid, const void *addr,
			  const void *param, size_t paramlen)
{
	struct lfi_ep *ep = to_lfi_ep(ep_fid);
	struct lfi_fabric *fab = ep->dom->fabric;
	struct lchan_opts opts = {
		.sq_entries = ep->tx_size + 1,
		.rq_entries = ep->rx_size + 1,
		.timeout_ms = (unsigned)fab->params.connect_timeout_ms,
		/* The peer is this provider: either side may send first. */
		.flags = LCHAN_DEFER_ESTABLISH | LCHAN_OPEN_EXCHANGE |
			 LCHAN_FD_NONBLOCK,
	};
	struct lchan_addr dst;
	struct lchan_chan chan;
	int ret;

	if (paramlen > LFI_CM_DATA_MAX || (paramlen && !param))
		return -FI_EINVAL;
	opts.flags |= lfi_fabric_chan_flags(fab, ep->info);
	if (!addr)
		addr = ep->info->dest_addr;
	if (!addr || lchan_addr_from_sockaddr(addr, &dst))
		return -FI_EINVAL;
	pthread_mutex_lock(&fab->lock);
	if (!ep->enabled)
		ret = -FI_EOPBADSTATE;
	else if (ep->state != LFI_EP_IDLE)
		ret = -FI_EISCONN;
	else
		ret = 0;
	if (!ret)
		ep->state = LFI_EP_CONNECTING;
	pthread_mutex_unlock(&fab->lock);
	if (ret)
		return ret;

	ret = lchan_connect_addr(&fab->ctx, &dst, &opts, &chan);
	pthread_mutex_lock(&fab->lock);
	if (ret) {
		ep->state = LFI_EP_IDLE;
		pthread_mutex_unlock(&fab->lock);
		return ret;
	}
	ret = lfi_chan_adopt(ep, &chan, true);
	if (ret) {
		pthread_mutex_unlock(&fab->lock);
		return ret;
	}
	ret = lfi_chan_cm_send(ep, LFI_CM_CONNECT, param, paramlen);
	if (!ret) {
		ret = lchan_establish(&ep->chan,
				      (unsigned)fab->params.connect_timeout_ms);
		if (ret == -EINPROGRESS)
			ret = 0;
	}
	if (!ret) {
		ep->state = LFI_EP_CM_WAIT;
		ret = lfi_eq_watch(ep->eq, ep->chan.fd, EPOLLIN | EPOLLRDHUP,
				   &ep->ep_fid.fid);
	}
	if (ret)
		lfi_chan_close(ep);
	pthread_mutex_unlock(&fab->lock);
	return ret;
}

/* fi_accept: ACCEPT with @param on the request's established channel. */
static int lfi_cm_accept(struct fid_ep *ep_fid, const void *param,
			 size_t paramlen)
{
	struct lfi_ep *ep = to_lfi_ep(ep_fid);
	struct lfi_fabric *fab = ep->dom->fabric;
	int ret;

	if (paramlen > LFI_CM_DATA_MAX || (paramlen && !param))
		return -FI_EINVAL;
	pthread_mutex_lock(&fab->lock);
	if (!ep->enabled)
		ret = -FI_EOPBADSTATE;
	else if (ep->state != LFI_EP_ACCEPTING)
		ret = -FI_EINVAL;
	else
		ret = lfi_chan_cm_send(ep, LFI_CM_ACCEPT, param, paramlen);
	if (!ret)
		ret = lfi_cm_connected(ep);
	pthread_mutex_unlock(&fab->lock);
	return ret;
}

static int lfi_cm_getname(fid_t fid, void *addr, size_t *addrlen)
{
	struct sockaddr_storage ss;
	size_t len;

	if (fid->fclass == FI_CLASS_PEP) {
		len = lfi_pep_name(container_of(fid, struct lfi_pep,
						pep_fid.fid), &ss);
	} else {
		struct lfi_ep *ep = container_of(fid, struct lfi_ep,
						 ep_fid.fid);

		if (lfi_ep_has_chan(ep))
			len = lfi_addr_from_lchan(&ep->chan.info.local, &ss);
		else
			memcpy(&ss, &ep->src, len = lfi_addr_len(
				(struct sockaddr *)&ep->src));
	}
	if (!len)
		return -FI_EADDRNOTAVAIL;
	return lfi_addr_copy_out(&ss, len, addr, addrlen);
}

static int lfi_cm_getpeer(struct fid_ep *ep_fid, void *addr, size_t *addrlen)
{
	struct lfi_ep *ep = to_lfi_ep(ep_fid);
	struct sockaddr_storage ss;
	size_t len;

	if (!lfi_ep_has_chan(ep))
		return -FI_ENOTCONN;
	len = lfi_addr_from_lchan(&ep->chan.info.remote, &ss);
	return lfi_addr_copy_out(&ss, len, addr, addrlen);
}

static int lfi_cm_setname(fid_t fid, void *addr, size_t addrlen)
{
	struct sockaddr_storage *dst;

	if (!addr || addrlen > sizeof(*dst) ||
	    lfi_addr_len(addr) != addrlen)
		return -FI_EINVAL;
	if (fid->fclass == FI_CLASS_PEP) {
		struct lfi_pep *pep = container_of(fid, struct lfi_pep,
						   pep_fid.fid);

		if (pep->lst.fd >= 0)
			return -FI_EOPBADSTATE;
		dst = &pep->src;
	} else {
		struct lfi_ep *ep = container_of(fid, struct lfi_ep,
						 ep_fid.fid);

		if (ep->state != LFI_EP_IDLE)
			return -FI_EOPBADSTATE;
		dst = &ep->src;
	}
	memset(dst, 0, sizeof(*dst));
	memcpy(dst, addr, addrlen);
	return 0;
}

/*
 * fi_shutdown: the channel closes, after the ACCEPT this side may just
 * have sent; the peer's EQ reports FI_SHUTDOWN when its channel sees the
 * disconnect, and this side's EQ gets one now, unless the peer's end was
 * reported already: one per connection.
 */
static int lfi_cm_shutdown(struct fid_ep *ep_fid, uint64_t flags)
{
	struct lfi_ep *ep = to_lfi_ep(ep_fid);
	struct lfi_fabric *fab = ep->dom->fabric;
	int ret = 0;

	(void)flags;
	pthread_mutex_lock(&fab->lock);
	if (lfi_ep_has_chan(ep)) {
		lfi_progress_cm_flush(ep, 1000);
		lfi_chan_close(ep);
		if (ep->eq && !ep->shutdown_reported) {
			ep->shutdown_reported = true;
			ret = lfi_eq_push(ep->eq, FI_SHUTDOWN, &ep->ep_fid.fid,
					  NULL, NULL, 0);
		}
	}
	pthread_mutex_unlock(&fab->lock);
	return ret;
}

static int lfi_cm_listen(struct fid_pep *pep_fid)
{
	struct lfi_pep *pep = container_of(pep_fid, struct lfi_pep, pep_fid);
	int ret;

	pthread_mutex_lock(&pep->fabric->lock);
	ret = lfi_pep_listen(pep);
	pthread_mutex_unlock(&pep->fabric->lock);
	return ret;
}

static int lfi_cm_reject(struct fid_pep *pep_fid, fid_t handle,
			 const void *param, size_t paramlen)
{
	struct lfi_pep *pep = container_of(pep_fid, struct lfi_pep, pep_fid);
	int ret;

	if (!handle || handle->fclass != FI_CLASS_CONNREQ ||
	    paramlen > LFI_CM_DATA_MAX || (paramlen && !param))
		return -FI_EINVAL;
	pthread_mutex_lock(&pep->fabric->lock);
	ret = lfi_pep_reject(container_of(handle, struct lfi_connreq, fid),
			     param, paramlen);
	pthread_mutex_unlock(&pep->fabric->lock);
	return ret;
}

static int lfi_cm_no_connect(struct fid_ep *ep, const void *addr,
			     const void *param, size_t paramlen)
{
	(void)ep; (void)addr; (void)param; (void)paramlen;
	return -FI_EOPNOTSUPP;
}

static int lfi_cm_no_accept(struct fid_ep *ep, const void *param,
			    size_t paramlen)
{
	(void)ep; (void)param; (void)paramlen;
	return -FI_EOPNOTSUPP;
}

static int lfi_cm_no_listen(struct fid_pep *pep)
{
	(void)pep;
	return -FI_EOPNOTSUPP;
}

static int lfi_cm_no_reject(struct fid_pep *pep, fid_t handle,
			    const void *param, size_t paramlen)
{
	(void)pep; (void)handle; (void)param; (void)paramlen;
	return -FI_EOPNOTSUPP;
}

static int lfi_cm_no_getpeer(struct fid_ep *ep, void *addr, size_t *addrlen)
{
	(void)ep; (void)addr; (void)addrlen;
	return -FI_EOPNOTSUPP;
}

static int lfi_cm_no_shutdown(struct fid_ep *ep, uint64_t flags)
{
	(void)ep; (void)flags;
	return -FI_EOPNOTSUPP;
}

/* fi_getopt of both endpoint kinds: how much connection data goes along. */
int lfi_cm_getopt(fid_t fid, int level, int optname, void *optval,
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

struct fi_ops_cm lfi_cm_ep_ops = {
	.size = sizeof(struct fi_ops_cm),
	.setname = lfi_cm_setname,
	.getname = lfi_cm_getname,
	.getpeer = lfi_cm_getpeer,
	.connect = lfi_cm_connect,
	.listen = lfi_cm_no_listen,
	.accept = lfi_cm_accept,
	.reject = lfi_cm_no_reject,
	.shutdown = lfi_cm_shutdown,
	.join = lfi_unsupported_join,
};

struct fi_ops_cm lfi_cm_pep_ops = {
	.size = sizeof(struct fi_ops_cm),
	.setname = lfi_cm_setname,
	.getname = lfi_cm_getname,
	.getpeer = lfi_cm_no_getpeer,
	.connect = lfi_cm_no_connect,
	.listen = lfi_cm_listen,
	.accept = lfi_cm_no_accept,
	.reject = lfi_cm_reject,
	.shutdown = lfi_cm_no_shutdown,
	.join = lfi_unsupported_join,
};
