// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * FI_RMA: RDMA READ and WRITE as SQEs of the endpoint's channel; WRITE
 * with immediate data where the endpoint has remote CQ data (not on
 * iWARP, and only for an application that posts the receive it consumes:
 * FI_RX_CQ_DATA).  Remote addresses are virtual (FI_MR_VIRT_ADDR), keys
 * are lchan's rkeys.
 */
#include "lfi.h"

static ssize_t lfi_rma_read(struct fid_ep *ep, void *buf, size_t len,
			    void *desc, fi_addr_t src_addr, uint64_t addr,
			    uint64_t key, void *context)
{
	struct iovec iov = { .iov_base = buf, .iov_len = len };

	(void)src_addr;
	return lfi_msg_post_send(to_lfi_ep(ep), LCHAN_OP_READ, &iov, &desc, 1,
				 addr, key, 0, context,
				 to_lfi_ep(ep)->tx_op_flags, FI_RMA | FI_READ);
}

static ssize_t lfi_rma_readv(struct fid_ep *ep, const struct iovec *iov,
			     void **desc, size_t count, fi_addr_t src_addr,
			     uint64_t addr, uint64_t key, void *context)
{
	(void)src_addr;
	return lfi_msg_post_send(to_lfi_ep(ep), LCHAN_OP_READ, iov, desc, count,
				 addr, key, 0, context,
				 to_lfi_ep(ep)->tx_op_flags, FI_RMA | FI_READ);
}

static ssize_t lfi_rma_readmsg(struct fid_ep *ep, const struct fi_msg_rma *msg,
			       uint64_t flags)
{
	if (msg->rma_iov_count != LFI_RMA_IOV_LIMIT)
		return -FI_EINVAL;
	return lfi_msg_post_send(to_lfi_ep(ep), LCHAN_OP_READ, msg->msg_iov,
				 msg->desc, msg->iov_count,
				 msg->rma_iov[0].addr, msg->rma_iov[0].key, 0,
				 msg->context, flags, FI_RMA | FI_READ);
}

static ssize_t lfi_rma_write(struct fid_ep *ep, const void *buf, size_t len,
			     void *desc, fi_addr_t dest_addr, uint64_t addr,
			     uint64_t key, void *context)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };

	(void)dest_addr;
	return lfi_msg_post_send(to_lfi_ep(ep), LCHAN_OP_WRITE, &iov, &desc, 1,
				 addr, key, 0, context,
				 to_lfi_ep(ep)->tx_op_flags, FI_RMA | FI_WRITE);
}

static ssize_t lfi_rma_writev(struct fid_ep *ep, const struct iovec *iov,
			      void **desc, size_t count, fi_addr_t dest_addr,
			      uint64_t addr, uint64_t key, void *context)
{
	(void)dest_addr;
	return lfi_msg_post_send(to_lfi_ep(ep), LCHAN_OP_WRITE, iov, desc,
				 count, addr, key, 0, context,
				 to_lfi_ep(ep)->tx_op_flags, FI_RMA | FI_WRITE);
}

static ssize_t lfi_rma_writemsg(struct fid_ep *ep, const struct fi_msg_rma *msg,
				uint64_t flags)
{
	bool imm = flags & FI_REMOTE_CQ_DATA;

	if (msg->rma_iov_count != LFI_RMA_IOV_LIMIT)
		return -FI_EINVAL;
	if (imm && !to_lfi_ep(ep)->cq_data)
		return -FI_EOPNOTSUPP;
	return lfi_msg_post_send(to_lfi_ep(ep),
				 imm ? LCHAN_OP_WRITE_IMM : LCHAN_OP_WRITE,
				 msg->msg_iov, msg->desc, msg->iov_count,
				 msg->rma_iov[0].addr, msg->rma_iov[0].key,
				 msg->data, msg->context, flags,
				 FI_RMA | FI_WRITE);
}

static ssize_t lfi_rma_inject(struct fid_ep *ep, const void *buf, size_t len,
			      fi_addr_t dest_addr, uint64_t addr, uint64_t key)
{
	(void)dest_addr;
	return lfi_msg_post_inject(to_lfi_ep(ep), LCHAN_OP_WRITE, buf, len,
				   addr, key, 0, FI_RMA | FI_WRITE);
}

static ssize_t lfi_rma_writedata(struct fid_ep *ep, const void *buf,
				 size_t len, void *desc, uint64_t data,
				 fi_addr_t dest_addr, uint64_t addr,
				 uint64_t key, void *context)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };

	(void)dest_addr;
	if (!to_lfi_ep(ep)->cq_data)
		return -FI_EOPNOTSUPP;
	return lfi_msg_post_send(to_lfi_ep(ep), LCHAN_OP_WRITE_IMM, &iov, &desc,
				 1, addr, key, data, context,
				 to_lfi_ep(ep)->tx_op_flags, FI_RMA | FI_WRITE);
}

static ssize_t lfi_rma_injectdata(struct fid_ep *ep, const void *buf,
				  size_t len, uint64_t data,
				  fi_addr_t dest_addr, uint64_t addr,
				  uint64_t key)
{
	(void)dest_addr;
	if (!to_lfi_ep(ep)->cq_data)
		return -FI_EOPNOTSUPP;
	return lfi_msg_post_inject(to_lfi_ep(ep), LCHAN_OP_WRITE_IMM, buf, len,
				   addr, key, data, FI_RMA | FI_WRITE);
}

struct fi_ops_rma lfi_rma_ops = {
	.size = sizeof(struct fi_ops_rma),
	.read = lfi_rma_read,
	.readv = lfi_rma_readv,
	.readmsg = lfi_rma_readmsg,
	.write = lfi_rma_write,
	.writev = lfi_rma_writev,
	.writemsg = lfi_rma_writemsg,
	.inject = lfi_rma_inject,
	.writedata = lfi_rma_writedata,
	.injectdata = lfi_rma_injectdata,
};
