// SPDX-License-Identifier: GPL-2.0
/*
 * Freeing a completion queue that ib_core polls in softirq.
 *
 * ib_core's softirq poll marks itself done (irq_poll_complete()) before
 * it re-arms the CQ at the driver, and ib_free_cq() waits for that mark
 * only: a CQ freed just after its last completion can be re-armed after
 * its driver freed it (rxe reads its freed queue).  The re-arm runs in
 * softirq, an RCU read-side section on every kernel, PREEMPT_RT's too.
 * So such a CQ is freed in two steps: its poll is disabled at once (no
 * poll starts after), and the CQ is freed a grace period later, when the
 * last poll has returned, by a work of lchan_cq_wq.  Device removal waits
 * for those works alone (lchan_cq_wait_frees()).
 */
#include "lchan.h"

static struct workqueue_struct *lchan_cq_wq;

struct lchan_cq_free {
	struct rcu_work rwork;
	struct ib_cq *cq;
};

/* The poll is disabled and quiet: ib_free_cq() disables it again. */
static void lchan_cq_free_now(struct ib_cq *cq)
{
	irq_poll_enable(&cq->iop);
	ib_free_cq(cq);
}

static void lchan_cq_free_work(struct work_struct *work)
{
	struct lchan_cq_free *f = container_of(to_rcu_work(work),
					       struct lchan_cq_free, rwork);

	lchan_cq_free_now(f->cq);
	kfree(f);
}

/*
 * Free @cq, which no QP uses any more, so that no completion can come.
 * Sleeps.  A softirq-polled CQ goes a grace period later.
 */
void lchan_cq_free(struct ib_cq *cq)
{
	struct lchan_cq_free *f;

	if (cq->poll_ctx != IB_POLL_SOFTIRQ) {
		ib_free_cq(cq);
		return;
	}
	/* We hold the poll's scheduled bit: no poll starts after this. */
	irq_poll_disable(&cq->iop);
	f = kmalloc(sizeof(*f), GFP_KERNEL);
	if (!f) {
		synchronize_rcu();
		lchan_cq_free_now(cq);
		return;
	}
	f->cq = cq;
	INIT_RCU_WORK(&f->rwork, lchan_cq_free_work);
	queue_rcu_work(lchan_cq_wq, &f->rwork);
}

/* Every CQ given to lchan_cq_free() before this call is freed after it. */
void lchan_cq_wait_frees(void)
{
	rcu_barrier();		/* each grace period's work is queued */
	flush_workqueue(lchan_cq_wq);
}

int lchan_cq_init(void)
{
	lchan_cq_wq = alloc_workqueue("lchan_cq", WQ_UNBOUND, 0);
	return lchan_cq_wq ? 0 : -ENOMEM;
}

/* After every device's removal, which waited for the frees. */
void lchan_cq_exit(void)
{
	destroy_workqueue(lchan_cq_wq);
}
