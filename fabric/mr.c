// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * Memory regions.  lchan pins and registers memory on the device of a
 * channel; a region made while its domain has no channel yet is registered
 * when the first one appears (lfi_domain_attach).  Its descriptor is the
 * region itself, its key the rkey once registered.
 */
#include <errno.h>
#include <stdlib.h>

#include "lfi.h"

static unsigned lfi_mr_access(uint64_t access)
{
	unsigned a = 0;

	if (!(access & (FI_SEND | FI_RECV | FI_READ | FI_WRITE |
			FI_REMOTE_READ | FI_REMOTE_WRITE)))
		access |= FI_SEND | FI_RECV | FI_READ | FI_WRITE;
	/* Receives and READ results are written by the device. */
	if (access & (FI_RECV | FI_READ | FI_REMOTE_WRITE))
		a |= LCHAN_ACCESS_LOCAL_WRITE;
	if (access & FI_REMOTE_WRITE)
		a |= LCHAN_ACCESS_REMOTE_WRITE;
	if (access & FI_REMOTE_READ)
		a |= LCHAN_ACCESS_REMOTE_READ;
	return a;
}

/* Register @mr through @chan (fabric lock held). */
int lfi_mr_register(struct lfi_mr *mr, struct lchan_chan *chan)
{
	int ret;

	ret = lchan_mr_reg(&mr->dom->fabric->ctx, chan, mr->buf, mr->len,
			   mr->access, &mr->lmr);
	if (ret) {
		LFI_WARN(FI_LOG_MR, "lchan_mr_reg of %zu bytes: %d\n", mr->len,
			 ret);
		mr->lmr.handle = 0;
		return ret;
	}
	mr->mr_fid.key = mr->lmr.rkey;
	return 0;
}

static int lfi_mr_close(struct fid *fid)
{
	struct lfi_mr *mr = container_of(fid, struct lfi_mr, mr_fid.fid);
	struct lfi_domain *dom = mr->dom;
	struct lfi_mr **p;
	int ret = 0;

	pthread_mutex_lock(&dom->fabric->lock);
	if (mr->lmr.handle)
		ret = lchan_mr_dereg(&dom->fabric->ctx, &mr->lmr);
	for (p = &dom->mrs; *p; p = &(*p)->next)
		if (*p == mr) {
			*p = mr->next;
			break;
		}
	dom->refs--;
	pthread_mutex_unlock(&dom->fabric->lock);
	free(mr);
	return ret;
}

static struct fi_ops lfi_mr_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = lfi_mr_close,
	.bind = lfi_unsupported_bind,
	.control = lfi_unsupported_control,
	.ops_open = lfi_unsupported_ops_open,
	.tostr = lfi_unsupported_tostr,
	.ops_set = lfi_unsupported_ops_set,
};

static int lfi_mr_reg(struct fid *fid, const void *buf, size_t len,
		      uint64_t access, uint64_t offset, uint64_t requested_key,
		      uint64_t flags, struct fid_mr **mr_fid, void *context)
{
	struct lfi_domain *dom = container_of(fid, struct lfi_domain,
					      domain_fid.fid);
	struct lfi_mr *mr;
	int ret = 0;

	/*
	 * FI_MR_PROV_KEY: the key is lchan's; FI_MR_VIRT_ADDR: no offset.
	 * @flags: utility providers pass their own (no caching); none
	 * changes what lchan does.
	 */
	(void)requested_key;
	(void)offset;
	(void)flags;
	if (fid->fclass != FI_CLASS_DOMAIN || !len)
		return -FI_EINVAL;
	mr = calloc(1, sizeof(*mr));
	if (!mr)
		return -FI_ENOMEM;
	mr->dom = dom;
	mr->buf = (void *)buf;
	mr->len = len;
	mr->access = lfi_mr_access(access);
	mr->mr_fid.fid.fclass = FI_CLASS_MR;
	mr->mr_fid.fid.context = context;
	mr->mr_fid.fid.ops = &lfi_mr_fi_ops;
	mr->mr_fid.mem_desc = mr;
	mr->mr_fid.key = FI_KEY_NOTAVAIL;

	pthread_mutex_lock(&dom->fabric->lock);
	if (dom->anchor)
		ret = lfi_mr_register(mr, dom->anchor);
	if (!ret) {
		mr->next = dom->mrs;
		dom->mrs = mr;
		dom->refs++;
	}
	pthread_mutex_unlock(&dom->fabric->lock);
	if (ret) {
		free(mr);
		return ret;
	}
	*mr_fid = &mr->mr_fid;
	return 0;
}

static int lfi_mr_regv(struct fid *fid, const struct iovec *iov, size_t count,
		       uint64_t access, uint64_t offset, uint64_t requested_key,
		       uint64_t flags, struct fid_mr **mr, void *context)
{
	if (count != 1)
		return -FI_EINVAL;
	return lfi_mr_reg(fid, iov->iov_base, iov->iov_len, access, offset,
			  requested_key, flags, mr, context);
}

static int lfi_mr_regattr(struct fid *fid, const struct fi_mr_attr *attr,
			  uint64_t flags, struct fid_mr **mr)
{
	if (attr->iface != FI_HMEM_SYSTEM)
		return -FI_EINVAL;
	return lfi_mr_regv(fid, attr->mr_iov, attr->iov_count, attr->access,
			   attr->offset, attr->requested_key, flags, mr,
			   attr->context);
}

struct fi_ops_mr lfi_mr_ops = {
	.size = sizeof(struct fi_ops_mr),
	.reg = lfi_mr_reg,
	.regv = lfi_mr_regv,
	.regattr = lfi_mr_regattr,
};
