// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * The fabric: one lchan context (an open of /dev/lchan) shared by every
 * domain, passive endpoint and EQ made from it, and the provider's
 * parameters as they stood when it was opened.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lfi.h"

static int lfi_fabric_close(struct fid *fid)
{
	struct lfi_fabric *fab = container_of(fid, struct lfi_fabric,
					      fabric_fid.fid);

	if (fab->refs)
		return -FI_EBUSY;
	lchan_ctx_close(&fab->ctx);
	pthread_mutex_destroy(&fab->lock);
	free(fab);
	return 0;
}

/*
 * The close of an object made from @fab: -FI_EBUSY while @refs (what is
 * opened under it or bound to it) is not zero, else it leaves its
 * parent's @parent_refs.  Takes the fabric lock.
 */
int lfi_fabric_release(struct lfi_fabric *fab, const int *refs,
		       int *parent_refs)
{
	int ret = 0;

	pthread_mutex_lock(&fab->lock);
	if (*refs)
		ret = -FI_EBUSY;
	else
		(*parent_refs)--;
	pthread_mutex_unlock(&fab->lock);
	return ret;
}

static struct fi_ops lfi_fabric_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = lfi_fabric_close,
	.bind = lfi_unsupported_bind,
	.control = lfi_unsupported_control,
	.ops_open = lfi_unsupported_ops_open,
	.tostr = lfi_unsupported_tostr,
	.ops_set = lfi_unsupported_ops_set,
};

/* Nothing to arm: every wait object is an epoll fd over level events. */
static int lfi_fabric_trywait(struct fid_fabric *fabric, struct fid **fids,
			      int count)
{
	(void)fabric; (void)fids; (void)count;
	return 0;
}

static int lfi_fabric_domain2(struct fid_fabric *fabric, struct fi_info *info,
			      struct fid_domain **dom, uint64_t flags,
			      void *context)
{
	if (flags)
		return -FI_EINVAL;
	return lfi_domain_open(fabric, info, dom, context);
}

static struct fi_ops_fabric lfi_fabric_ops = {
	.size = sizeof(struct fi_ops_fabric),
	.domain = lfi_domain_open,
	.passive_ep = lfi_pep_open,
	.eq_open = lfi_eq_open,
	.wait_open = lfi_unsupported_wait_open,
	.trywait = lfi_fabric_trywait,
	.domain2 = lfi_fabric_domain2,
};

static void lfi_fabric_read_params(struct lfi_params *p)
{
	p->poller = 0;
	p->direct = 0;
	p->poller_idle_ms = 0;
	p->connect_timeout_ms = 30000;
	fi_param_get_bool(&lfi_prov, "poller", &p->poller);
	fi_param_get_bool(&lfi_prov, "direct", &p->direct);
	fi_param_get_int(&lfi_prov, "poller_idle_ms", &p->poller_idle_ms);
	fi_param_get_int(&lfi_prov, "connect_timeout_ms",
			 &p->connect_timeout_ms);
	if (p->poller_idle_ms < 0)
		p->poller_idle_ms = 0;
	if (p->connect_timeout_ms <= 0)
		p->connect_timeout_ms = 30000;
}

unsigned lfi_fabric_chan_flags(const struct lfi_fabric *fab,
			       const struct fi_info *info)
{
	/* iWARP has no direct polling: its channels keep the default. */
	if (fab->params.direct && info->ep_attr &&
	    info->ep_attr->protocol != FI_PROTO_IWARP)
		return LCHAN_DIRECT_POLL;
	return 0;
}

int lfi_fabric_open(struct fi_fabric_attr *attr, struct fid_fabric **fabric,
		    void *context)
{
	struct lfi_fabric *fab;
	int ret;

	if (!attr || !attr->name || strcmp(attr->name, LFI_FABRIC_NAME))
		return -FI_EINVAL;
	fab = calloc(1, sizeof(*fab));
	if (!fab)
		return -FI_ENOMEM;
	lfi_fabric_read_params(&fab->params);
	if (fab->params.poller && fab->params.direct) {
		/* The device is polled by the caller or by the pool, not both. */
		LFI_WARN(FI_LOG_FABRIC, "FI_LCHAN_POLLER and FI_LCHAN_DIRECT exclude each other\n");
		free(fab);
		return -FI_EINVAL;
	}
	ret = lchan_ctx_open(&fab->ctx);
	if (ret) {
		lfi_dev_open_failed(ret);
		goto err_free;
	}
	if (fab->params.poller) {
		ret = lchan_ctx_setup_poller(&fab->ctx,
					     (unsigned)fab->params.poller_idle_ms,
					     -1, NULL);
		if (ret) {
			LFI_WARN(FI_LOG_FABRIC, "FI_LCHAN_POLLER: poller mode: %s\n",
				 strerror(-ret));
			goto err_close;
		}
	}
	pthread_mutex_init(&fab->lock, NULL);
	fab->fabric_fid.fid.fclass = FI_CLASS_FABRIC;
	fab->fabric_fid.fid.context = context;
	fab->fabric_fid.fid.ops = &lfi_fabric_fi_ops;
	fab->fabric_fid.ops = &lfi_fabric_ops;
	*fabric = &fab->fabric_fid;
	return 0;

err_close:
	lchan_ctx_close(&fab->ctx);
err_free:
	free(fab);
	return ret;
}
