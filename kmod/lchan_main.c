// SPDX-License-Identifier: GPL-2.0
/*
 * lchan: module entry and exit, the /dev/lchan misc device and the ABI
 * layout checks.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/miscdevice.h>
#include <linux/slab.h>

#include "lchan.h"

#define CREATE_TRACE_POINTS
#include "lchan_trace.h"

struct workqueue_struct *lchan_wq;

static struct miscdevice lchan_miscdev = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "lchan",
	.fops = &lchan_ctl_fops,
	.mode = 0666,
};

static void lchan_main_check_abi(void)
{
	BUILD_BUG_ON(sizeof(struct lchan_info) != 24);
	BUILD_BUG_ON(sizeof(struct lchan_mr_reg_args) != 40);
	BUILD_BUG_ON(sizeof(struct lchan_mr_dereg_args) != 16);
	BUILD_BUG_ON(sizeof(struct lchan_addr) != 24);
	BUILD_BUG_ON(sizeof(struct lchan_listen_args) != 40);
	BUILD_BUG_ON(sizeof(struct lchan_ring_sizes) != 16);
	BUILD_BUG_ON(sizeof(struct lchan_rc_params) != 8);
	BUILD_BUG_ON(sizeof(struct lchan_connect_args) != 88);
	BUILD_BUG_ON(sizeof(struct lchan_accept_args) != 56);
	BUILD_BUG_ON(sizeof(struct lchan_establish_args) != 16);
	BUILD_BUG_ON(sizeof(struct lchan_ring_offsets) != 32);
	BUILD_BUG_ON(sizeof(struct lchan_chan_info) != 200);
	BUILD_BUG_ON(sizeof(struct lchan_ctx_setup_args) != 24);
	BUILD_BUG_ON(sizeof(struct lchan_sge) != 16);
	BUILD_BUG_ON(LCHAN_SQE_SGES * sizeof(struct lchan_sge) !=
		     sizeof(struct lchan_sqe));
	BUILD_BUG_ON(LCHAN_RQE_SGES * sizeof(struct lchan_sge) !=
		     sizeof(struct lchan_rqe));
	BUILD_BUG_ON(sizeof(struct lchan_enter_args) != 40);
	BUILD_BUG_ON(sizeof(struct lchan_sqe) != 64);
	BUILD_BUG_ON(sizeof(struct lchan_rqe) != 32);
	BUILD_BUG_ON(sizeof(struct lchan_cqe) != 32);
	BUILD_BUG_ON(offsetof(struct lchan_sqe, user_data) != 24);
	BUILD_BUG_ON(offsetof(struct lchan_cqe, status) != 20);
}

static int __init lchan_main_init(void)
{
	int ret;

	lchan_main_check_abi();

	lchan_wq = alloc_workqueue("lchan", WQ_UNBOUND, 0);
	if (!lchan_wq)
		return -ENOMEM;

	ret = lchan_sysfs_init();
	if (ret)
		goto err_destroy_wq;

	ret = lchan_poller_init();
	if (ret)
		goto err_sysfs;

	ret = lchan_dev_init();
	if (ret)
		goto err_poller;

	ret = misc_register(&lchan_miscdev);
	if (ret)
		goto err_unregister_client;

	return 0;

err_unregister_client:
	lchan_dev_exit();
err_poller:
	lchan_poller_exit();
err_sysfs:
	lchan_sysfs_exit();
err_destroy_wq:
	destroy_workqueue(lchan_wq);
	return ret;
}

/* Every file holds a module reference, so nothing of a user is left here. */
static void __exit lchan_main_exit(void)
{
	misc_deregister(&lchan_miscdev);
	flush_workqueue(lchan_wq);	/* MR releases still queued */
	lchan_dev_exit();
	lchan_poller_exit();
	destroy_workqueue(lchan_wq);
	lchan_sysfs_exit();
}

module_init(lchan_main_init);
module_exit(lchan_main_exit);

MODULE_AUTHOR("The lchan developers");
MODULE_DESCRIPTION("Kernel-assisted RDMA channels with user-mapped rings");
MODULE_LICENSE("GPL");
MODULE_VERSION(LCHAN_VERSION);
