// SPDX-License-Identifier: GPL-2.0
/*
 * The /dev/lchan file: a context that owns protection domains (one per RDMA
 * device it uses) and the table of memory regions.
 */
#include <linux/fs.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/cpumask.h>

#include "lchan.h"

static int lchan_ctx_file_open(struct inode *inode, struct file *file)
{
	struct lchan_context *ctx;

	ctx = kzalloc(sizeof(*ctx), LCHAN_GFP_USER);
	if (!ctx)
		return -ENOMEM;
	kref_init(&ctx->ref);
	mutex_init(&ctx->lock);
	INIT_LIST_HEAD(&ctx->pds);
	xa_init_flags(&ctx->mrs, XA_FLAGS_ALLOC1);
	/* Only the identity of the owner's mm is kept, for checks. */
	ctx->mm = current->mm;
	mmgrab(ctx->mm);
	ctx->tgid = task_tgid_vnr(current);
	file->private_data = ctx;
	return 0;
}

static void lchan_ctx_release_ref(struct kref *ref)
{
	struct lchan_context *ctx = container_of(ref, struct lchan_context, ref);
	struct lchan_pd *pd, *next;

	lchan_mr_drop_all(ctx);
	xa_destroy(&ctx->mrs);

	mutex_lock(&ctx->lock);
	list_for_each_entry_safe(pd, next, &ctx->pds, ctx_node) {
		list_del_init(&pd->ctx_node);
		lchan_ctx_put_pd(pd);
	}
	mutex_unlock(&ctx->lock);

	mmdrop(ctx->mm);
	kfree(ctx);
}

void lchan_ctx_put(struct lchan_context *ctx)
{
	kref_put(&ctx->ref, lchan_ctx_release_ref);
}

/*
 * Whether the caller is the process that opened the context: every file
 * made from it (context, listener, channel) serves that process only, so
 * a child that inherits one, or a process it is passed to, cannot act on
 * the owner's channels or memory.
 */
bool lchan_ctx_owned(const struct lchan_context *ctx)
{
	return current->mm == ctx->mm;
}

static int lchan_ctx_release(struct inode *inode, struct file *file)
{
	lchan_ctx_put(file->private_data);
	return 0;
}

static void lchan_ctx_pd_release(struct kref *ref)
{
	struct lchan_pd *pd = container_of(ref, struct lchan_pd, ref);
	struct lchan_dev *dev = pd->dev;

	mutex_lock(&dev->lock);
	list_del(&pd->dev_node);
	if (pd->ibpd)
		ib_dealloc_pd(pd->ibpd);
	mutex_unlock(&dev->lock);
	lchan_dev_put(dev);
	kfree(pd);
}

/* Called in process context only: the last put deallocates the PD. */
void lchan_ctx_put_pd(struct lchan_pd *pd)
{
	if (pd)
		kref_put(&pd->ref, lchan_ctx_pd_release);
}

/* The context's PD on @dev, allocated on first use; returns a reference. */
struct lchan_pd *lchan_ctx_get_pd(struct lchan_context *ctx, struct lchan_dev *dev)
{
	struct lchan_pd *pd;
	struct ib_pd *ibpd;
	int ret;

	mutex_lock(&ctx->lock);
	list_for_each_entry(pd, &ctx->pds, ctx_node) {
		if (pd->dev == dev && READ_ONCE(pd->ibpd)) {
			kref_get(&pd->ref);
			goto out_unlock;
		}
	}

	pd = kzalloc(sizeof(*pd), LCHAN_GFP_USER);
	if (!pd) {
		pd = ERR_PTR(-ENOMEM);
		goto out_unlock;
	}
	kref_init(&pd->ref);
	INIT_LIST_HEAD(&pd->mrs);
	pd->ctx = ctx;

	/* No unsafe global rkey: every remote access goes through an MR. */
	ibpd = ib_alloc_pd(dev->ibdev, 0);
	if (IS_ERR(ibpd)) {
		ret = PTR_ERR(ibpd);
		goto err_free_pd;
	}

	mutex_lock(&dev->lock);
	if (dev->dying) {
		mutex_unlock(&dev->lock);
		ret = -ENODEV;
		goto err_dealloc_pd;
	}
	pd->ibpd = ibpd;
	pd->dev = to_lchan_dev(kobject_get(&dev->kobj));
	list_add_tail(&pd->dev_node, &dev->pds);
	mutex_unlock(&dev->lock);

	list_add_tail(&pd->ctx_node, &ctx->pds);
	kref_get(&pd->ref);	/* one for the ctx list, one for the caller */
	goto out_unlock;

err_dealloc_pd:
	ib_dealloc_pd(ibpd);
err_free_pd:
	kfree(pd);
	pd = ERR_PTR(ret);
out_unlock:
	mutex_unlock(&ctx->lock);
	return pd;
}

/*
 * The device is going: release every MR and PD on it now.  Channels on the
 * device were destroyed first, so no work is in flight.  The lchan_pd and
 * lchan_region objects stay until their users drop them, with NULL verbs
 * objects.
 */
void lchan_ctx_revoke_pds(struct lchan_dev *dev)
{
	struct lchan_pd *pd;

	mutex_lock(&dev->lock);
	list_for_each_entry(pd, &dev->pds, dev_node) {
		lchan_mr_revoke_pd(pd);
		if (pd->ibpd) {
			ib_dealloc_pd(pd->ibpd);
			WRITE_ONCE(pd->ibpd, NULL);
		}
	}
	mutex_unlock(&dev->lock);
}

long lchan_ioctl_info(struct lchan_ucmd *ucmd)
{
	struct lchan_info *info = ucmd->cmd;

	if (info->flags)
		return -EINVAL;
	info->abi_version = LCHAN_ABI_VERSION;
	info->max_entries = LCHAN_MAX_ENTRIES;
	info->features = LCHAN_FEATURES;
	return lchan_ioctl_respond(ucmd);
}

static int lchan_ioctl_ctx_setup_check(const struct lchan_ucmd *ucmd)
{
	const struct lchan_ctx_setup_args *req = ucmd->cmd;

	if ((req->flags & ~LCHAN_CTX_POLLER) || req->resv ||
	    req->idle_ms > LCHAN_MAX_TIMEOUT_MS)
		return -EINVAL;
	/* A CPU the caller may run on; the pool decides where it polls. */
	if (req->cpu < -1 || (req->cpu >= 0 && (req->cpu >= nr_cpu_ids ||
						!cpu_online(req->cpu) ||
						!cpumask_test_cpu(req->cpu,
							current->cpus_ptr))))
		return -EINVAL;
	if (req->attach_fd != -1 && !(req->flags & LCHAN_CTX_POLLER))
		return -EINVAL;
	return 0;
}

/*
 * Poller mode puts the context's channels on the administrator's pool of
 * poller threads (lchan_poller.c): no thread is made or pinned here.
 * idle_ms is capped by the default, the threads being shared; cpu is only
 * checked.
 */
long lchan_ioctl_ctx_setup(struct lchan_ucmd *ucmd)
{
	struct lchan_context *ctx = ucmd->file->private_data;
	const struct lchan_ctx_setup_args *req = ucmd->cmd;
	enum lchan_mode mode = req->flags & LCHAN_CTX_POLLER ?
			       LCHAN_MODE_POLLER : LCHAN_MODE_DOORBELL;
	u32 idle_ms = min_t(u32, req->idle_ms ?: LCHAN_POLLER_IDLE_MS,
			    LCHAN_POLLER_IDLE_MS);

	if (mode == LCHAN_MODE_POLLER && req->attach_fd != -1) {
		struct fd f = fdget(req->attach_fd);
		struct lchan_context *other;

		if (!fd_file(f))
			return -EBADF;
		if (fd_file(f)->f_op != &lchan_ctx_fops) {
			fdput(f);
			return -EINVAL;
		}
		other = fd_file(f)->private_data;
		/* Only the caller's own contexts lend their settings. */
		if (!lchan_ctx_owned(other)) {
			fdput(f);
			return -EPERM;
		}
		mutex_lock(&other->lock);
		mode = other->mode;
		idle_ms = other->poll_idle_ms;
		mutex_unlock(&other->lock);
		fdput(f);
		if (mode != LCHAN_MODE_POLLER)
			return -EINVAL;
	}

	mutex_lock(&ctx->lock);
	if (ctx->setup_done || ctx->has_chans) {
		mutex_unlock(&ctx->lock);
		return -EBUSY;
	}
	ctx->setup_done = true;
	ctx->mode = mode;
	ctx->poll_idle_ms = idle_ms;
	mutex_unlock(&ctx->lock);
	return 0;
}

static const struct lchan_ioctl_op lchan_ctx_ioctl_ops[] = {
	LCHAN_IOCTL_OP(LCHAN_IOC_INFO, lchan_ioctl_info, struct lchan_info,
		       features),
	LCHAN_IOCTL_OWNER_OP(LCHAN_IOC_MR_REG, lchan_ioctl_mr_reg_check,
			     lchan_ioctl_mr_reg, struct lchan_mr_reg_args, rkey,
			     .done = lchan_ioctl_mr_reg_done),
	LCHAN_IOCTL_OWNER_OP(LCHAN_IOC_MR_DEREG, lchan_ioctl_mr_dereg_check,
			     lchan_ioctl_mr_dereg, struct lchan_mr_dereg_args, resv),
	LCHAN_IOCTL_OWNER_OP(LCHAN_IOC_LISTEN, lchan_ioctl_listen_check,
			     lchan_ioctl_listen, struct lchan_listen_args, resv),
	LCHAN_IOCTL_OWNER_OP(LCHAN_IOC_CONNECT, lchan_ioctl_connect_check,
			     lchan_ioctl_connect, struct lchan_connect_args, resv),
	LCHAN_IOCTL_OWNER_OP(LCHAN_IOC_CTX_SETUP, lchan_ioctl_ctx_setup_check,
			     lchan_ioctl_ctx_setup, struct lchan_ctx_setup_args,
			     resv),
};

static long lchan_ctx_ioctl(struct file *file, unsigned int cmd,
			    unsigned long arg)
{
	return lchan_ioctl_dispatch(file, cmd, arg, lchan_ctx_ioctl_ops,
				    ARRAY_SIZE(lchan_ctx_ioctl_ops),
				    file->private_data);
}

const struct file_operations lchan_ctx_fops = {
	.owner = THIS_MODULE,
	.open = lchan_ctx_file_open,
	.release = lchan_ctx_release,
	.unlocked_ioctl = lchan_ctx_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.llseek = noop_llseek,
};
