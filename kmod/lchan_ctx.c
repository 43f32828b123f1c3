// SPDX-License-Identifier: GPL-2.0
/*
 * The context: what a process opened /dev/lchan for (lchan_ctl.c), owner
 * of protection domains (one per RDMA device it uses), of the table of
 * memory regions and of its channels' submission mode.
 */
#include <linux/sched/mm.h>
#include <linux/slab.h>

#include "lchan.h"

/* A context for the calling process, its owner. */
struct lchan_context *lchan_ctx_new(void)
{
	struct lchan_context *ctx;

	ctx = kzalloc(sizeof(*ctx), LCHAN_GFP_USER);
	if (!ctx)
		return ERR_PTR(-ENOMEM);
	kref_init(&ctx->ref);
	mutex_init(&ctx->lock);
	INIT_LIST_HEAD(&ctx->pds);
	xa_init_flags(&ctx->mrs, XA_FLAGS_ALLOC1);
	/* Only the identity of the owner's mm is kept, for checks. */
	ctx->mm = current->mm;
	mmgrab(ctx->mm);
	ctx->tgid = task_tgid_vnr(current);
	get_task_comm(ctx->comm, current);
	return ctx;
}

static void lchan_ctx_release_ref(struct kref *ref)
{
	struct lchan_context *ctx = container_of(ref, struct lchan_context, ref);
	struct lchan_pd *pd, *next;

	lchan_region_drop_all(ctx);
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

/*
 * The submission mode of @ctx's channels and, in poller mode, how long
 * the pool spins after work.
 */
void lchan_ctx_mode(struct lchan_context *ctx, enum lchan_mode *mode,
		    u32 *idle_ms)
{
	mutex_lock(&ctx->lock);
	*mode = ctx->mode;
	*idle_ms = ctx->poll_idle_ms;
	mutex_unlock(&ctx->lock);
}

/* Set the mode, once and before the first channel; else -EBUSY. */
int lchan_ctx_set_mode(struct lchan_context *ctx, enum lchan_mode mode,
		       u32 idle_ms)
{
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

/* A channel is made: the mode is fixed from now on.  Returns it. */
enum lchan_mode lchan_ctx_fix_mode(struct lchan_context *ctx)
{
	enum lchan_mode mode;

	mutex_lock(&ctx->lock);
	ctx->has_chans = true;
	mode = ctx->mode;
	mutex_unlock(&ctx->lock);
	return mode;
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
struct lchan_pd *lchan_ctx_get_pd(struct lchan_context *ctx,
				  struct lchan_dev *dev)
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
		lchan_region_revoke_pd(pd);
		if (pd->ibpd) {
			ib_dealloc_pd(pd->ibpd);
			WRITE_ONCE(pd->ibpd, NULL);
		}
	}
	mutex_unlock(&dev->lock);
}
