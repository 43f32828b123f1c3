// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * Passive endpoints: an lchan listener, non-blocking, watched by the
 * bound EQ.  Reading the EQ takes each waiting request: the channel is
 * accepted with its establishment deferred, so the receive for the peer's
 * CONNECT goes in first, then established; the CONNECT's data comes with
 * FI_CONNREQ.  The channel waits in the request handle until fi_endpoint
 * takes it (and fi_accept answers ACCEPT), or fi_reject answers REJECT
 * and closes it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <sys/epoll.h>

#include "lfi.h"

static int lfi_pep_close(struct fid *fid)
{
	struct lfi_pep *pep = container_of(fid, struct lfi_pep, pep_fid.fid);
	struct lfi_fabric *fab = pep->fabric;

	pthread_mutex_lock(&fab->lock);
	if (pep->lst.fd >= 0) {
		if (pep->eq)
			lfi_eq_unwatch(pep->eq, pep->lst.fd);
		lchan_listener_close(&pep->lst);
	}
	if (pep->eq)
		pep->eq->refs--;
	fab->refs--;
	pthread_mutex_unlock(&fab->lock);
	fi_freeinfo(pep->info);
	free(pep);
	return 0;
}

static int lfi_pep_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	struct lfi_pep *pep = container_of(fid, struct lfi_pep, pep_fid.fid);
	int ret = 0;

	(void)flags;
	if (bfid->fclass != FI_CLASS_EQ)
		return -FI_EINVAL;
	pthread_mutex_lock(&pep->fabric->lock);
	if (pep->eq || pep->lst.fd >= 0)
		ret = -FI_EINVAL;
	else {
		pep->eq = container_of(bfid, struct lfi_eq, eq_fid.fid);
		pep->eq->refs++;
	}
	pthread_mutex_unlock(&pep->fabric->lock);
	return ret;
}

static struct fi_ops lfi_pep_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = lfi_pep_close,
	.bind = lfi_pep_bind,
	.control = lfi_unsupported_control,
	.ops_open = lfi_unsupported_ops_open,
	.tostr = lfi_unsupported_tostr,
	.ops_set = lfi_unsupported_ops_set,
};

/* @fid as this provider's passive endpoint, or NULL. */
struct lfi_pep *lfi_pep_from_fid(struct fid *fid)
{
	if (!fid || fid->fclass != FI_CLASS_PEP || fid->ops != &lfi_pep_fi_ops)
		return NULL;
	return container_of(fid, struct lfi_pep, pep_fid.fid);
}

/*
 * The address of @pep (lock held): the listener's once it listens (the
 * port it got), else the one fi_getinfo or fi_setname gave it.  Its
 * length, 0 when there is none.
 */
size_t lfi_pep_name(const struct lfi_pep *pep, struct sockaddr_storage *ss)
{
	size_t len;

	if (pep->lst.fd >= 0)
		return lfi_addr_from_lchan(&pep->lst.addr, ss);
	len = lfi_addr_len((const struct sockaddr *)&pep->src);
	memcpy(ss, &pep->src, len);
	return len;
}

/* Drop a request (lock held): its region, buffer and channel. */
static void lfi_pep_req_free(struct lfi_connreq *req)
{
	if (req->mr.handle)
		lchan_mr_dereg(&req->fabric->ctx, &req->mr);
	if (req->chan.fd >= 0)
		lchan_chan_close(&req->chan);
	free(req->msg);
	free(req);
}

static int lfi_pep_connreq_close(struct fid *fid)
{
	struct lfi_connreq *req = container_of(fid, struct lfi_connreq, fid);
	struct lfi_fabric *fab = req->fabric;

	pthread_mutex_lock(&fab->lock);
	lfi_pep_req_free(req);
	pthread_mutex_unlock(&fab->lock);
	return 0;
}

static struct fi_ops lfi_pep_connreq_ops = {
	.size = sizeof(struct fi_ops),
	.close = lfi_pep_connreq_close,
	.bind = lfi_unsupported_bind,
	.control = lfi_unsupported_control,
	.ops_open = lfi_unsupported_ops_open,
	.tostr = lfi_unsupported_tostr,
	.ops_set = lfi_unsupported_ops_set,
};

/* The next CQE of @req's channel, waiting until @deadline (ms). */
static int lfi_pep_req_cqe(struct lfi_connreq *req, long long deadline_ms,
			   struct lchan_cqe **cqe)
{
	int left = lfi_wait_left(deadline_ms);

	if (!left)
		return -FI_ETIMEDOUT;
	return lchan_wait_cqe(&req->chan, cqe, left);
}

/*
 * fi_reject (lock held): REJECT with @data, sent before the channel
 * closes (its completion says it left), then the request is gone.
 */
int lfi_pep_reject(struct lfi_connreq *req, const void *data, size_t len)
{
	struct lchan_sqe *sqe = lchan_get_sqe(&req->chan);
	struct lchan_cqe *cqe;

	if (sqe) {
		memset(req->msg, 0, sizeof(*req->msg));
		req->msg->magic = LFI_CM_MAGIC;
		req->msg->type = LFI_CM_REJECT;
		req->msg->len = (uint8_t)len;
		if (len)
			memcpy(req->msg->data, data, len);
		lchan_prep_send(sqe, &req->mr, req->msg, sizeof(*req->msg),
				LFI_UD_CM);
		if (lchan_submit(&req->chan) >= 0)
			lfi_pep_req_cqe(req, lfi_wait_deadline(1000), &cqe);
	}
	lfi_pep_req_free(req);
	return 0;
}

/* The fi_info of a request: the pep's, with both ends and the handle. */
static struct fi_info *lfi_pep_req_info(struct lfi_pep *pep,
					struct lfi_connreq *req)
{
	struct sockaddr_storage local, remote;
	struct fi_info *fi = fi_dupinfo(pep->info);
	size_t llen, rlen;

	if (!fi)
		return NULL;
	llen = lfi_addr_from_lchan(&req->chan.info.local, &local);
	rlen = lfi_addr_from_lchan(&req->chan.info.remote, &remote);
	free(fi->src_addr);
	free(fi->dest_addr);
	fi->src_addr = malloc(llen);
	fi->dest_addr = malloc(rlen);
	if (!fi->src_addr || !fi->dest_addr) {
		fi_freeinfo(fi);
		return NULL;
	}
	memcpy(fi->src_addr, &local, llen);
	memcpy(fi->dest_addr, &remote, rlen);
	fi->src_addrlen = llen;
	fi->dest_addrlen = rlen;
	fi->addr_format = local.ss_family == AF_INET6 ? FI_SOCKADDR_IN6 :
			  FI_SOCKADDR_IN;
	if (!fi->domain_attr->name) {
		struct lfi_dev devs[LFI_MAX_DEVS];
		const struct lfi_dev *dev;
		int n = lfi_dev_scan(devs, LFI_MAX_DEVS);

		dev = lfi_dev_by_ip(devs, n, (struct sockaddr *)&local);
		fi->domain_attr->name = dev ? strdup(dev->name) : NULL;
	}
	fi->handle = &req->fid;
	return fi;
}

/*
 * One request off the listener (lock held): its channel, a receive for
 * the CONNECT, the establishment, the CONNECT.  The connecting side sends
 * it as soon as the channel is up, so the wait is short; it is bounded by
 * FI_LCHAN_CONNECT_TIMEOUT_MS.  Returns -EAGAIN when none waits.
 */
static int lfi_pep_take_one(struct lfi_pep *pep, struct lfi_connreq **out)
{
	struct lfi_fabric *fab = pep->fabric;
	struct lchan_opts opts = {
		.sq_entries = (unsigned)pep->info->tx_attr->size + 1,
		.rq_entries = (unsigned)pep->info->rx_attr->size + 1,
		.flags = LCHAN_DEFER_ESTABLISH,
	};
	struct lfi_connreq *req;
	struct lchan_rqe *rqe;
	struct lchan_cqe *cqe;
	int ret;

	opts.flags |= lfi_fabric_chan_flags(fab, pep->info);
	/* fi_getinfo caps the sizes one below lchan's largest ring. */
	if (opts.sq_entries > LFI_MAX_QUEUE)
		opts.sq_entries = LFI_MAX_QUEUE;
	if (opts.rq_entries > LFI_MAX_QUEUE)
		opts.rq_entries = LFI_MAX_QUEUE;
	req = calloc(1, sizeof(*req));
	if (!req)
		return -FI_ENOMEM;
	req->fabric = fab;
	req->chan.fd = -1;
	req->msg = aligned_alloc(4096, 4096);
	if (!req->msg) {
		free(req);
		return -FI_ENOMEM;
	}
	ret = lchan_accept(&pep->lst, &opts, &req->chan);
	if (ret) {
		req->chan.fd = -1;
		goto err;
	}
	ret = lchan_mr_reg(&fab->ctx, &req->chan, req->msg, 4096,
			   LCHAN_ACCESS_LOCAL_WRITE, &req->mr);
	if (ret) {
		req->mr.handle = 0;
		goto err;
	}
	rqe = lchan_get_rqe(&req->chan);
	if (!rqe) {
		ret = -FI_EAGAIN;
		goto err;
	}
	lchan_prep_recv(rqe, &req->mr, req->msg, sizeof(*req->msg),
			LFI_UD_CM | LFI_UD_RX);
	ret = lchan_submit(&req->chan);
	if (ret >= 0)
		ret = lchan_establish(&req->chan,
				      (unsigned)fab->params.connect_timeout_ms);
	if (ret < 0)
		goto err;
	ret = lfi_pep_req_cqe(req,
			      lfi_wait_deadline(fab->params.connect_timeout_ms),
			      &cqe);
	if (ret)
		goto err;
	if (cqe->status != LCHAN_CQE_OK || cqe->byte_len != sizeof(*req->msg) ||
	    req->msg->magic != LFI_CM_MAGIC ||
	    req->msg->type != LFI_CM_CONNECT ||
	    req->msg->len > LFI_CM_DATA_MAX)
		ret = -FI_EOTHER;	/* not lchan's CONNECT */
	lchan_cqe_seen(&req->chan);
	if (ret)
		goto err;
	req->fid.fclass = FI_CLASS_CONNREQ;
	req->fid.ops = &lfi_pep_connreq_ops;
	*out = req;
	return 0;

err:
	lfi_pep_req_free(req);
	return ret;
}

/* Take every waiting request as an FI_CONNREQ (fabric lock held). */
void lfi_pep_take_requests(struct lfi_pep *pep)
{
	for (;;) {
		struct lfi_connreq *req;
		struct fi_info *fi;
		int ret;

		ret = lfi_pep_take_one(pep, &req);
		if (ret == -EAGAIN)
			return;
		if (ret) {
			/* This request failed; the next may not. */
			LFI_WARN(FI_LOG_EP_CTRL, "connection request: %d\n", ret);
			continue;
		}
		fi = lfi_pep_req_info(pep, req);
		if (!fi || lfi_eq_push(pep->eq, FI_CONNREQ, &pep->pep_fid.fid,
				       fi, req->msg->data, req->msg->len)) {
			if (fi) {
				fi->handle = NULL;
				fi_freeinfo(fi);
			}
			lfi_pep_req_free(req);
			return;
		}
	}
}

int lfi_pep_listen(struct lfi_pep *pep)
{
	char host[INET6_ADDRSTRLEN], port[8];
	const struct sockaddr *sa = (const struct sockaddr *)&pep->src;
	const void *ip;
	int ret;

	if (!pep->eq)
		return -FI_ENOEQ;
	if (pep->lst.fd >= 0)
		return 0;
	ip = sa->sa_family == AF_INET6 ?
	     (const void *)&((const struct sockaddr_in6 *)sa)->sin6_addr :
	     (const void *)&((const struct sockaddr_in *)sa)->sin_addr;
	if (!inet_ntop(sa->sa_family, ip, host, sizeof(host)))
		return -FI_EINVAL;
	snprintf(port, sizeof(port), "%u", ntohs(sa->sa_family == AF_INET6 ?
		 ((const struct sockaddr_in6 *)sa)->sin6_port :
		 ((const struct sockaddr_in *)sa)->sin_port));
	ret = lchan_listen(&pep->fabric->ctx, lfi_addr_is_any(sa) ? NULL : host,
			   port, 0, LCHAN_FD_NONBLOCK, &pep->lst);
	if (ret) {
		pep->lst.fd = -1;
		return ret;
	}
	ret = lfi_eq_watch(pep->eq, pep->lst.fd, EPOLLIN, &pep->pep_fid.fid);
	if (ret) {
		lchan_listener_close(&pep->lst);
		return ret;
	}
	return 0;
}

static struct fi_ops_ep lfi_pep_ops = {
	.size = sizeof(struct fi_ops_ep),
	.cancel = lfi_unsupported_cancel,
	.getopt = lfi_cm_getopt,
	.setopt = lfi_unsupported_setopt,
	.tx_ctx = lfi_unsupported_tx_ctx,
	.rx_ctx = lfi_unsupported_rx_ctx,
	.rx_size_left = lfi_unsupported_size_left,
	.tx_size_left = lfi_unsupported_size_left,
};

int lfi_pep_open(struct fid_fabric *fabric, struct fi_info *info,
		 struct fid_pep **pep_fid, void *context)
{
	struct lfi_fabric *fab = to_lfi_fabric(fabric);
	struct lfi_pep *pep;

	if (!info || !info->ep_attr || info->ep_attr->type != FI_EP_MSG)
		return -FI_EINVAL;
	pep = calloc(1, sizeof(*pep));
	if (!pep)
		return -FI_ENOMEM;
	pep->info = fi_dupinfo(info);
	if (!pep->info) {
		free(pep);
		return -FI_ENOMEM;
	}
	pep->lst.fd = -1;
	pep->fabric = fab;
	if (info->src_addr && info->src_addrlen <= sizeof(pep->src) &&
	    lfi_addr_len(info->src_addr) == info->src_addrlen)
		memcpy(&pep->src, info->src_addr, info->src_addrlen);
	else
		pep->src.ss_family = AF_INET;
	pep->pep_fid.fid.fclass = FI_CLASS_PEP;
	pep->pep_fid.fid.context = context;
	pep->pep_fid.fid.ops = &lfi_pep_fi_ops;
	pep->pep_fid.ops = &lfi_pep_ops;
	pep->pep_fid.cm = &lfi_cm_pep_ops;
	pthread_mutex_lock(&fab->lock);
	fab->refs++;
	pthread_mutex_unlock(&fab->lock);
	*pep_fid = &pep->pep_fid;
	return 0;
}
