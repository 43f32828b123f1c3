// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * The domain: one RDMA device of the fabric's lchan context.  It keeps the
 * list of its memory regions and endpoints, and one of its channels as the
 * anchor that lchan registers memory through.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lfi.h"

static int lfi_domain_close(struct fid *fid)
{
	struct lfi_domain *dom = container_of(fid, struct lfi_domain,
					      domain_fid.fid);
	int ret = lfi_fabric_release(dom->fabric, &dom->refs,
				     &dom->fabric->refs);

	if (ret)
		return ret;
	fi_freeinfo(dom->info);
	free(dom);
	return 0;
}

static struct fi_ops lfi_domain_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = lfi_domain_close,
	.bind = lfi_unsupported_bind,
	.control = lfi_unsupported_control,
	.ops_open = lfi_unsupported_ops_open,
	.tostr = lfi_unsupported_tostr,
	.ops_set = lfi_unsupported_ops_set,
};

static int lfi_domain_endpoint2(struct fid_domain *d, struct fi_info *info,
				struct fid_ep **ep, uint64_t flags,
				void *context)
{
	if (flags)
		return -FI_EINVAL;
	return lfi_ep_open(d, info, ep, context);
}

static struct fi_ops_domain lfi_domain_ops = {
	.size = sizeof(struct fi_ops_domain),
	.av_open = lfi_unsupported_av_open,
	.cq_open = lfi_cq_open,
	.endpoint = lfi_ep_open,
	.scalable_ep = lfi_unsupported_scalable_ep,
	.cntr_open = lfi_unsupported_cntr_open,
	.poll_open = lfi_unsupported_poll_open,
	.stx_ctx = lfi_unsupported_stx_ctx,
	.srx_ctx = lfi_unsupported_srx_ctx,
	.query_atomic = lfi_unsupported_query_atomic,
	.query_collective = lfi_unsupported_query_collective,
	.endpoint2 = lfi_domain_endpoint2,
};

int lfi_domain_open(struct fid_fabric *fabric, struct fi_info *info,
		    struct fid_domain **domain, void *context)
{
	struct lfi_fabric *fab = to_lfi_fabric(fabric);
	struct lfi_dev devs[LFI_MAX_DEVS];
	struct lfi_domain *dom;
	int i, n;

	if (!info || !info->domain_attr || !info->domain_attr->name)
		return -FI_EINVAL;
	n = lfi_dev_scan(devs, LFI_MAX_DEVS);
	for (i = 0; i < n; i++)
		if (!strcmp(devs[i].name, info->domain_attr->name))
			break;
	if (i == n)
		return -FI_ENODEV;
	dom = calloc(1, sizeof(*dom));
	if (!dom)
		return -FI_ENOMEM;
	dom->info = fi_dupinfo(info);
	if (!dom->info) {
		free(dom);
		return -FI_ENOMEM;
	}
	snprintf(dom->name, sizeof(dom->name), "%s", devs[i].name);
	dom->iwarp = devs[i].iwarp;
	dom->fabric = fab;
	dom->domain_fid.fid.fclass = FI_CLASS_DOMAIN;
	dom->domain_fid.fid.context = context;
	dom->domain_fid.fid.ops = &lfi_domain_fi_ops;
	dom->domain_fid.ops = &lfi_domain_ops;
	dom->domain_fid.mr = &lfi_mr_ops;
	pthread_mutex_lock(&fab->lock);
	fab->refs++;
	pthread_mutex_unlock(&fab->lock);
	*domain = &dom->domain_fid;
	return 0;
}

/*
 * A channel of the domain exists (fabric lock held): the first one
 * becomes the anchor and registers the regions made before it.
 */
int lfi_domain_attach(struct lfi_domain *dom, struct lchan_chan *chan)
{
	struct lfi_mr *mr;
	int ret;

	if (dom->anchor)
		return 0;
	for (mr = dom->mrs; mr; mr = mr->next) {
		if (mr->lmr.handle)
			continue;
		ret = lfi_mr_register(mr, chan);
		if (ret)
			return ret;
	}
	dom->anchor = chan;
	return 0;
}

/* @chan goes away (fabric lock held): another channel anchors, if any. */
void lfi_domain_detach(struct lfi_domain *dom, struct lchan_chan *chan)
{
	struct lfi_ep *ep;

	if (dom->anchor != chan)
		return;
	dom->anchor = NULL;
	for (ep = dom->eps; ep; ep = ep->next)
		if (&ep->chan != chan && lfi_ep_has_chan(ep)) {
			dom->anchor = &ep->chan;
			return;
		}
}
