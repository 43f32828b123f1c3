// SPDX-License-Identifier: GPL-2.0
/*
 * lchan: module entry and exit, the ib_client that tells lchan of RDMA
 * devices as they come and go, the /dev/lchan misc device and the ABI
 * layout checks.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/miscdevice.h>
#include <linux/slab.h>

#include "lchan.h"

#define CREATE_TRACE_POINTS
#include "lchan_trace.h"

static struct ib_client lchan_main_client;

static int lchan_main_dev_add(struct ib_device *ibdev)
{
	struct lchan_dev *dev;
	int ret;

	dev = lchan_dev_alloc(ibdev);
	if (IS_ERR(dev))
		return PTR_ERR(dev);
	ret = lchan_sysfs_add_dev(dev);
	if (ret)
		goto err_put;

	lchan_dev_publish(dev);
	ib_set_client_data(ibdev, &lchan_main_client, dev);
	pr_debug("device %s added\n", dev_name(&ibdev->dev));
	return 0;

err_put:
	lchan_dev_put(dev);
	return ret;
}

/*
 * ib_core calls this before rdma_cm's own removal (clients go in LIFO
 * order), so every channel, listener and link on the device still has
 * its cm_id, QP and CQ, and lchan releases them itself.  Links go first:
 * their pending set-ups fail, and no channel is set up over them after.
 * Nothing here may wait for user space.
 */
static void lchan_main_dev_remove(struct ib_device *ibdev, void *client_data)
{
	struct lchan_dev *dev = client_data;

	lchan_dev_retire(dev);

	lchan_link_kill_dev(dev);
	lchan_qp_kill_dev(dev);
	lchan_listen_kill_dev(dev);
	/* The driver's CQs must be gone before it is. */
	lchan_cq_wait_frees();
	lchan_ctx_revoke_pds(dev);

	lchan_sysfs_del_dev(dev);
	pr_debug("device %s removed\n", dev_name(&ibdev->dev));
	lchan_dev_put(dev);
}

static void lchan_main_dev_rename(struct ib_device *ibdev, void *client_data)
{
	struct lchan_dev *dev = client_data;

	if (kobject_rename(&dev->kobj, dev_name(&ibdev->dev)))
		pr_warn("cannot rename sysfs entry of %s\n",
			dev_name(&ibdev->dev));
}

static struct ib_client lchan_main_client = {
	.name = "lchan",
	.add = lchan_main_dev_add,
	.remove = lchan_main_dev_remove,
	.rename = lchan_main_dev_rename,
};

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

	ret = lchan_wq_init();
	if (ret)
		return ret;

	ret = lchan_cq_init();
	if (ret)
		goto err_destroy_wq;

	ret = lchan_sysfs_init();
	if (ret)
		goto err_cq;

	ret = lchan_poller_init();
	if (ret)
		goto err_sysfs;

	ret = lchan_stream_init();
	if (ret)
		goto err_poller;

	ret = lchan_stream_listen_init();
	if (ret)
		goto err_stream;

	ret = ib_register_client(&lchan_main_client);
	if (ret)
		goto err_stream_listen;

	ret = misc_register(&lchan_miscdev);
	if (ret)
		goto err_unregister_client;

	/* Links are off unless asked for; a service that fails leaves them off. */
	lchan_link_init();
	return 0;

err_unregister_client:
	ib_unregister_client(&lchan_main_client);
err_stream_listen:
	lchan_stream_listen_exit();
err_stream:
	lchan_stream_exit();
err_poller:
	lchan_poller_exit();
err_sysfs:
	lchan_sysfs_exit();
err_cq:
	lchan_cq_exit();
err_destroy_wq:
	lchan_wq_exit();
	return ret;
}

/*
 * Every file holds a module reference, so nothing of a user is left here;
 * links are the module's own, and end first.
 */
static void __exit lchan_main_exit(void)
{
	misc_deregister(&lchan_miscdev);
	lchan_link_exit();
	/* MR releases, links' last works, the ends of closed streams */
	flush_workqueue(lchan_wq);
	ib_unregister_client(&lchan_main_client);
	lchan_stream_timewait_exit();
	lchan_stream_listen_exit();
	lchan_stream_exit();
	lchan_poller_exit();
	lchan_cq_exit();
	lchan_wq_exit();
	lchan_sysfs_exit();
}

module_init(lchan_main_init);
module_exit(lchan_main_exit);

MODULE_AUTHOR("The lchan developers");
MODULE_DESCRIPTION("Kernel-assisted RDMA channels with user-mapped rings");
MODULE_LICENSE("GPL");
MODULE_VERSION(LCHAN_VERSION);
