// SPDX-License-Identifier: GPL-2.0
/*
 * A registered memory region as the rest of the module holds it: named by
 * a handle in its context's table, counted by the table and by each work
 * request that uses it, revoked with its device.  Registration is
 * lchan_mr.c's.
 */
#include <linux/slab.h>

#include "lchan.h"

static void lchan_region_free_work(struct work_struct *work)
{
	struct lchan_region *mr = container_of(work, struct lchan_region,
					       free_work);
	struct lchan_pd *pd = mr->pd;

	mutex_lock(&pd->dev->lock);
	list_del(&mr->pd_node);
	if (mr->ibmr)
		ib_dereg_mr(mr->ibmr);
	mutex_unlock(&pd->dev->lock);
	lchan_ctx_put_pd(pd);
	kfree_rcu(mr, rcu);
}

static void lchan_region_release(struct kref *ref)
{
	struct lchan_region *mr = container_of(ref, struct lchan_region, ref);

	/* The last put may come from a completion handler (softirq). */
	INIT_WORK(&mr->free_work, lchan_region_free_work);
	queue_work(lchan_wq, &mr->free_work);
}

void lchan_region_put(struct lchan_region *mr)
{
	if (mr)
		kref_put(&mr->ref, lchan_region_release);
}

/* A counted reference to the MR named @handle in @ctx, or NULL. */
struct lchan_region *lchan_region_lookup(struct lchan_context *ctx,
					 u32 handle)
{
	struct lchan_region *mr;

	rcu_read_lock();
	mr = xa_load(&ctx->mrs, handle);
	if (mr && !kref_get_unless_zero(&mr->ref))
		mr = NULL;
	rcu_read_unlock();
	return mr;
}

void lchan_region_drop_all(struct lchan_context *ctx)
{
	struct lchan_region *mr;
	unsigned long index;

	xa_for_each(&ctx->mrs, index, mr) {
		xa_erase(&ctx->mrs, index);
		lchan_region_put(mr);
	}
}

/* Called with pd->dev->lock held, after the device's QPs are gone. */
void lchan_region_revoke_pd(struct lchan_pd *pd)
{
	struct lchan_region *mr;

	list_for_each_entry(mr, &pd->mrs, pd_node) {
		if (mr->ibmr) {
			ib_dereg_mr(mr->ibmr);
			mr->ibmr = NULL;
		}
	}
}
