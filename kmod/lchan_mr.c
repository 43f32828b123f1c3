// SPDX-License-Identifier: GPL-2.0
/*
 * Memory regions: user memory pinned and registered on one RDMA device,
 * named by a per-context handle.  The device's own user-MR path pins the
 * pages (long-term) and charges them to the owner's pinned memory, checked
 * against RLIMIT_MEMLOCK.  The lkey stays here; only the rkey is returned.
 */
#include <linux/sched/signal.h>
#include <linux/sched/mm.h>
#include <linux/capability.h>
#include <linux/slab.h>

#include "lchan.h"
#include "lchan_trace.h"

static int lchan_mr_access_to_ib(u32 access)
{
	int ib = 0;

	if (access & LCHAN_ACCESS_LOCAL_WRITE)
		ib |= IB_ACCESS_LOCAL_WRITE;
	if (access & LCHAN_ACCESS_REMOTE_WRITE)
		ib |= IB_ACCESS_REMOTE_WRITE;
	if (access & LCHAN_ACCESS_REMOTE_READ)
		ib |= IB_ACCESS_REMOTE_READ;
	if (access & LCHAN_ACCESS_REMOTE_ATOMIC)
		ib |= IB_ACCESS_REMOTE_ATOMIC;
	return ib;
}

/* Refuse early what the limit will refuse anyway, with a clear errno. */
static int lchan_mr_check_memlock(u64 addr, u64 length)
{
	unsigned long npages, limit;

	if (capable(CAP_IPC_LOCK))
		return 0;
	npages = (PAGE_ALIGN(addr + length) - (addr & PAGE_MASK)) >> PAGE_SHIFT;
	limit = rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT;
	if (npages + atomic64_read(&current->mm->pinned_vm) > limit)
		return -ENOMEM;
	return 0;
}

/*
 * No MR over a channel's ring mapping: a peer's RDMA WRITE would land in
 * the rings, and the pin would hold ring pages past the channel's life.
 * This check gives the clear error; the guarantee is the mapping's
 * (lchan_ring.c): the device's pin refuses ring pages with -EFAULT even
 * when the ring is mapped at the address after this check.
 */
static int lchan_mr_check_vmas(u64 addr, u64 length)
{
	VMA_ITERATOR(vmi, current->mm, addr);
	struct vm_area_struct *vma;
	int ret = 0;

	mmap_read_lock(current->mm);
	for_each_vma_range(vmi, vma, addr + length) {
		if (lchan_ring_is_mapping(vma)) {
			ret = -EINVAL;
			break;
		}
	}
	mmap_read_unlock(current->mm);
	return ret;
}

int lchan_ioctl_mr_reg_check(const struct lchan_ucmd *ucmd)
{
	const struct lchan_mr_reg_args *req = ucmd->cmd;

	if (req->flags || (req->access & ~LCHAN_ACCESS_ALL))
		return -EINVAL;
	/* Remote write and atomics need local write, as in the IB spec. */
	if ((req->access & (LCHAN_ACCESS_REMOTE_WRITE |
			    LCHAN_ACCESS_REMOTE_ATOMIC)) &&
	    !(req->access & LCHAN_ACCESS_LOCAL_WRITE))
		return -EINVAL;
	if (!req->length || req->addr + req->length < req->addr ||
	    req->addr + req->length > TASK_SIZE)
		return -EINVAL;
	return 0;
}

long lchan_ioctl_mr_reg(struct lchan_ucmd *ucmd)
{
	struct lchan_context *ctx = ucmd->file->private_data;
	struct lchan_mr_reg_args *req = ucmd->cmd;
	struct lchan_channel *chan;
	struct lchan_pd *pd;
	struct lchan_region *mr;
	struct ib_mr *ibmr;
	struct fd f;
	u32 handle;
	long ret;

	chan = lchan_file_chan(req->chan_fd, &f);
	if (!chan)
		return -EBADF;
	if (chan->ctx != ctx) {
		ret = -EINVAL;
		goto err_fdput;
	}
	mutex_lock(&chan->lock);
	pd = chan->pd;
	if (pd)
		kref_get(&pd->ref);
	mutex_unlock(&chan->lock);
	if (!pd) {
		ret = -ENOTCONN;
		goto err_fdput;
	}

	ret = lchan_mr_check_memlock(req->addr, req->length);
	if (ret)
		goto err_put_pd;
	ret = lchan_mr_check_vmas(req->addr, req->length);
	if (ret)
		goto err_put_pd;

	mr = kzalloc(sizeof(*mr), LCHAN_GFP_USER);
	if (!mr) {
		ret = -ENOMEM;
		goto err_put_pd;
	}
	kref_init(&mr->ref);
	mr->addr = req->addr;
	mr->length = req->length;
	mr->access = req->access;

	mutex_lock(&pd->dev->lock);
	if (!pd->ibpd) {
		ret = -ENODEV;
		goto err_unlock;
	}
	ibmr = ib_reg_user_mr(pd->ibpd, req->addr, req->length, req->addr,
			      lchan_mr_access_to_ib(req->access));
	if (IS_ERR(ibmr)) {
		ret = PTR_ERR(ibmr);
		goto err_unlock;
	}
	mr->ibmr = ibmr;
	mr->lkey = ibmr->lkey;
	mr->pd = pd;		/* takes over the reference */
	list_add_tail(&mr->pd_node, &pd->mrs);
	mutex_unlock(&pd->dev->lock);

	req->rkey = req->access & (LCHAN_ACCESS_REMOTE_WRITE |
				   LCHAN_ACCESS_REMOTE_READ |
				   LCHAN_ACCESS_REMOTE_ATOMIC) ? ibmr->rkey : 0;

	/*
	 * Publish only the fully built MR.  From here another thread may
	 * deregister it at any time, so only locals are used below.
	 */
	ret = xa_alloc(&ctx->mrs, &handle, mr, xa_limit_31b, LCHAN_GFP_USER);
	if (ret)
		goto err_put_mr;

	req->handle = handle;
	ret = lchan_ioctl_respond(ucmd);
	if (ret)
		goto err_unpublish;
	fdput(f);
	return 0;

err_unpublish:
	/* The table's reference is ours again unless a dereg took it. */
	if (xa_cmpxchg(&ctx->mrs, handle, mr, NULL, 0) != mr)
		goto err_fdput;
err_put_mr:
	lchan_region_put(mr);	/* and with it the PD */
	goto err_fdput;
err_unlock:
	mutex_unlock(&pd->dev->lock);
	kfree(mr);
err_put_pd:
	lchan_ctx_put_pd(pd);
err_fdput:
	fdput(f);
	return ret;
}

/* Every registration that got past the argument copy is traced. */
void lchan_ioctl_mr_reg_done(const struct lchan_ucmd *ucmd, long ret)
{
	const struct lchan_context *ctx = ucmd->file->private_data;
	const struct lchan_mr_reg_args *req = ucmd->cmd;

	trace_lchan_mr_reg(ctx->tgid, ret ? 0 : req->handle, req->length,
			   req->access, ret);
}

int lchan_ioctl_mr_dereg_check(const struct lchan_ucmd *ucmd)
{
	const struct lchan_mr_dereg_args *req = ucmd->cmd;

	return req->flags || req->resv ? -EINVAL : 0;
}

long lchan_ioctl_mr_dereg(struct lchan_ucmd *ucmd)
{
	struct lchan_context *ctx = ucmd->file->private_data;
	const struct lchan_mr_dereg_args *req = ucmd->cmd;
	struct lchan_region *mr;

	mr = xa_erase(&ctx->mrs, req->handle);
	trace_lchan_mr_dereg(ctx->tgid, req->handle, mr ? 0 : -ENOENT);
	if (!mr)
		return -ENOENT;
	/* Work in flight holds its own references. */
	lchan_region_put(mr);
	return 0;
}
