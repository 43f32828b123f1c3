// SPDX-License-Identifier: GPL-2.0
/*
 * The next channel's rings and completion queue, made before it is asked
 * for.  While a connect or accept waits for its peer, the calling thread
 * has nothing to do; it makes a spare of the same sizes on the same
 * device, and the next connect or accept of the context there only takes
 * it, off its critical path.  One spare per protection domain (context
 * and device), charged like any ring to the process that made it, and
 * kept only while the context has a channel on the device: a context
 * that closes its last channel there holds nothing for it.
 *
 * spare_lock is held while a spare is made: device removal closes every
 * PD's spare under it (lchan_spare_close()), so no CQ is made or left on
 * a device that lchan has let go of.
 */
#include <linux/moduleparam.h>
#include <linux/slab.h>

#include "lchan.h"

static bool lchan_spare_enabled = true;
module_param_named(spare, lchan_spare_enabled, bool, 0644);
MODULE_PARM_DESC(spare, "Make the next channel's rings and CQ while a connect waits for its peer (default on)");

struct ib_cq *lchan_spare_alloc_cq(struct lchan_dev *dev,
				   const struct lchan_ring *ring)
{
	return ib_alloc_cq(dev->ibdev, NULL, ring->sq.entries +
			   ring->rq.entries + LCHAN_CQ_OWN, 0, dev->cq_poll);
}

/* spare_lock held (a CQ is freed only while the device is ours). */
static void lchan_spare_free(struct lchan_spare *spare)
{
	if (!spare)
		return;
	ib_free_cq(spare->cq);
	lchan_ring_free(&spare->ring);
	kfree(spare);
}

static bool lchan_spare_fits(const struct lchan_spare *spare,
			     const struct lchan_ring *ring)
{
	return spare->ring.sq.entries == ring->sq.entries &&
	       spare->ring.rq.entries == ring->rq.entries &&
	       spare->ring.cq_entries == ring->cq_entries;
}

/*
 * Move the spare into @ring when it has @ring's sizes: its CQ.  NULL when
 * there is none that fits, or one is being made: the caller makes its own.
 */
struct ib_cq *lchan_spare_take(struct lchan_pd *pd, struct lchan_ring *ring)
{
	struct lchan_spare *spare = NULL;
	struct ib_cq *cq;

	if (!mutex_trylock(&pd->spare_lock))
		return NULL;
	if (pd->spare && lchan_spare_fits(pd->spare, ring)) {
		spare = pd->spare;
		pd->spare = NULL;
	}
	mutex_unlock(&pd->spare_lock);
	if (!spare)
		return NULL;
	*ring = spare->ring;
	cq = spare->cq;
	kfree(spare);
	return cq;
}

/*
 * While @chan's connect or accept waits for the peer: a spare like its
 * rings, unless one is there.  A failure costs only the next channel's
 * time.  The caller is the process that owns the context, so the memory
 * is charged to it.
 */
void lchan_spare_prepare(struct lchan_chan *chan)
{
	struct lchan_pd *pd = chan->pd;
	struct lchan_spare *spare;

	/* One is being made or taken: leave it to that thread. */
	if (!READ_ONCE(lchan_spare_enabled) || !mutex_trylock(&pd->spare_lock))
		return;
	if (pd->spare_closed ||
	    (pd->spare && lchan_spare_fits(pd->spare, &chan->ring)))
		goto out_unlock;
	spare = kzalloc(sizeof(*spare), LCHAN_GFP_USER);
	if (!spare)
		goto out_unlock;
	spare->ring.sq.entries = chan->ring.sq.entries;
	spare->ring.rq.entries = chan->ring.rq.entries;
	spare->ring.cq_entries = chan->ring.cq_entries;
	spare->ring.size = chan->ring.size;
	if (lchan_ring_alloc(&spare->ring))
		goto err_free;
	spare->cq = lchan_spare_alloc_cq(chan->dev, &spare->ring);
	if (IS_ERR(spare->cq))
		goto err_free_ring;
	/* Sizes differ: the newest channel's are the likelier next. */
	lchan_spare_free(pd->spare);
	pd->spare = spare;
	goto out_unlock;

err_free_ring:
	lchan_ring_free(&spare->ring);
err_free:
	kfree(spare);
out_unlock:
	mutex_unlock(&pd->spare_lock);
}

void lchan_spare_chan_added(struct lchan_pd *pd)
{
	mutex_lock(&pd->spare_lock);
	pd->nr_chans++;
	mutex_unlock(&pd->spare_lock);
}

/* A channel bound to @pd is destroyed; the last one takes the spare. */
void lchan_spare_chan_gone(struct lchan_pd *pd)
{
	mutex_lock(&pd->spare_lock);
	if (!--pd->nr_chans) {
		lchan_spare_free(pd->spare);
		pd->spare = NULL;
	}
	mutex_unlock(&pd->spare_lock);
}

/* Device removal or the PD's release: free the spare, make no more. */
void lchan_spare_close(struct lchan_pd *pd)
{
	mutex_lock(&pd->spare_lock);
	pd->spare_closed = true;
	lchan_spare_free(pd->spare);
	pd->spare = NULL;
	mutex_unlock(&pd->spare_lock);
}

/* How many contexts hold a spare on @dev (sysfs). */
u32 lchan_spare_count(struct lchan_dev *dev)
{
	struct lchan_pd *pd;
	u32 n = 0;

	mutex_lock(&dev->lock);
	list_for_each_entry(pd, &dev->pds, dev_node) {
		mutex_lock(&pd->spare_lock);
		n += !!pd->spare;
		mutex_unlock(&pd->spare_lock);
	}
	mutex_unlock(&dev->lock);
	return n;
}
