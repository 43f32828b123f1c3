// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * The operations lchan does not offer: each says so with -FI_ENOSYS (the
 * inline wrappers of libfabric call through every pointer, none may be
 * NULL).
 */
#include "lfi.h"

int lfi_no_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	(void)fid; (void)bfid; (void)flags;
	return -FI_ENOSYS;
}

int lfi_no_control(struct fid *fid, int command, void *arg)
{
	(void)fid; (void)command; (void)arg;
	return -FI_ENOSYS;
}

int lfi_no_ops_open(struct fid *fid, const char *name, uint64_t flags,
		    void **ops, void *context)
{
	(void)fid; (void)name; (void)flags; (void)ops; (void)context;
	return -FI_ENOSYS;
}

int lfi_no_tostr(const struct fid *fid, char *buf, size_t len)
{
	(void)fid; (void)buf; (void)len;
	return -FI_ENOSYS;
}

int lfi_no_ops_set(struct fid *fid, const char *name, uint64_t flags,
		   void *ops, void *context)
{
	(void)fid; (void)name; (void)flags; (void)ops; (void)context;
	return -FI_ENOSYS;
}

/* Each slot has its own type, so each gets its own stub. */
static ssize_t lfi_no_cancel(fid_t fid, void *context)
{
	(void)fid; (void)context;
	return -FI_ENOSYS;
}

static int lfi_no_getopt(fid_t fid, int level, int optname, void *optval,
			 size_t *optlen)
{
	(void)fid; (void)level; (void)optname; (void)optval; (void)optlen;
	return -FI_ENOPROTOOPT;
}

static int lfi_no_setopt(fid_t fid, int level, int optname,
			 const void *optval, size_t optlen)
{
	(void)fid; (void)level; (void)optname; (void)optval; (void)optlen;
	return -FI_ENOPROTOOPT;
}

static int lfi_no_tx_ctx(struct fid_ep *sep, int index, struct fi_tx_attr *attr,
			 struct fid_ep **tx_ep, void *context)
{
	(void)sep; (void)index; (void)attr; (void)tx_ep; (void)context;
	return -FI_ENOSYS;
}

static int lfi_no_rx_ctx(struct fid_ep *sep, int index, struct fi_rx_attr *attr,
			 struct fid_ep **rx_ep, void *context)
{
	(void)sep; (void)index; (void)attr; (void)rx_ep; (void)context;
	return -FI_ENOSYS;
}

static ssize_t lfi_no_size_left(struct fid_ep *ep)
{
	(void)ep;
	return -FI_ENOSYS;
}

struct fi_ops_ep lfi_no_ep_ops = {
	.size = sizeof(struct fi_ops_ep),
	.cancel = lfi_no_cancel,
	.getopt = lfi_no_getopt,
	.setopt = lfi_no_setopt,
	.tx_ctx = lfi_no_tx_ctx,
	.rx_ctx = lfi_no_rx_ctx,
	.rx_size_left = lfi_no_size_left,
	.tx_size_left = lfi_no_size_left,
};
