// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * Passive endpoints: an lchan listener, non-blocking, watched by the
 * bound EQ.  Reading the EQ takes each waiting request with an accept
 * that defers the establishment: the channel exists (its queue pair, its
 * rings) and waits in a connection-request handle until fi_endpoint takes
 * it and fi_accept establishes it, or fi_reject closes it.
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
	.control = lfi_no_control,
	.ops_open = lfi_no_ops_open,
	.tostr = lfi_no_tostr,
	.ops_set = lfi_no_ops_set,
};

static int lfi_pep_connreq_close(struct fid *fid)
{
	struct lfi_connreq *req = container_of(fid, struct lfi_connreq, fid);

	lchan_chan_close(&req->chan);
	free(req);
	return 0;
}

static struct fi_ops lfi_pep_connreq_ops = {
	.size = sizeof(struct fi_ops),
	.close = lfi_pep_connreq_close,
	.bind = lfi_no_bind,
	.control = lfi_no_control,
	.ops_open = lfi_no_ops_open,
	.tostr = lfi_no_tostr,
	.ops_set = lfi_no_ops_set,
};

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

/* Take every waiting request as an FI_CONNREQ (fabric lock held). */
void lfi_pep_take_requests(struct lfi_pep *pep)
{
	struct lchan_opts opts = {
		.sq_entries = (unsigned)pep->info->tx_attr->size,
		.rq_entries = (unsigned)pep->info->rx_attr->size,
		.flags = LCHAN_DEFER_ESTABLISH,
	};

	for (;;) {
		struct lfi_connreq *req = calloc(1, sizeof(*req));
		struct fi_info *fi;
		int ret;

		if (!req)
			return;
		ret = lchan_accept(&pep->lst, &opts, &req->chan);
		if (ret) {
			free(req);
			if (ret != -EAGAIN && pep->eq)
				lfi_eq_push_err(pep->eq, &pep->pep_fid.fid,
						pep->pep_fid.fid.context, -ret,
						ret);
			return;
		}
		req->fid.fclass = FI_CLASS_CONNREQ;
		req->fid.ops = &lfi_pep_connreq_ops;
		fi = lfi_pep_req_info(pep, req);
		if (!fi || lfi_eq_push(pep->eq, FI_CONNREQ, &pep->pep_fid.fid,
				       fi)) {
			if (fi) {
				fi->handle = NULL;
				fi_freeinfo(fi);
			}
			lfi_pep_connreq_close(&req->fid);
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
	pep->pep_fid.ops = &lfi_no_ep_ops;
	pep->pep_fid.cm = &lfi_cm_pep_ops;
	pthread_mutex_lock(&fab->lock);
	fab->refs++;
	pthread_mutex_unlock(&fab->lock);
	*pep_fid = &pep->pep_fid;
	return 0;
}
