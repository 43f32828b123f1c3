// SPDX-License-Identifier: GPL-2.0
/*
 * The module's workqueue, for the works of channels and their parts and
 * for region releases, which need process context.
 */
#include "lchan.h"

struct workqueue_struct *lchan_wq;

int lchan_wq_init(void)
{
	lchan_wq = alloc_workqueue("lchan", WQ_UNBOUND, 0);
	return lchan_wq ? 0 : -ENOMEM;
}

void lchan_wq_exit(void)
{
	destroy_workqueue(lchan_wq);
}
