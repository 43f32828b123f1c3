// SPDX-License-Identifier: GPL-2.0
/*
 * lchan: module entry, RDMA device tracking (ib_client) and /dev/lchan.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/miscdevice.h>
#include <linux/uaccess.h>
#include <linux/slab.h>

#include "lchan.h"

#define CREATE_TRACE_POINTS
#include "lchan_trace.h"

struct workqueue_struct *lchan_wq;

/* Every device lchan has seen and not yet been told is gone. */
static LIST_HEAD(lchan_devices);
static DEFINE_MUTEX(lchan_devices_lock);

static struct ib_client lchan_client;

/*
 * Copy an ioctl argument that starts with { __u32 size; __u32 flags; }.
 * A size below the first released layout is EINVAL; a larger one must have a
 * zero tail (E2BIG), which copy_struct_from_user() checks.
 */
long lchan_copy_arg(void *karg, size_t ksize, size_t min_size,
		    void __user *uarg)
{
	u32 usize;

	if (!uarg)
		return -EFAULT;
	if (get_user(usize, (u32 __user *)uarg))
		return -EFAULT;
	if (usize < min_size)
		return -EINVAL;
	if (usize > PAGE_SIZE)
		return -E2BIG;
	return copy_struct_from_user(karg, ksize, uarg, usize);
}

/* Write results back, never more than the caller said it has. */
long lchan_copy_out(void __user *uarg, const void *karg, size_t ksize)
{
	u32 usize;

	if (get_user(usize, (u32 __user *)uarg))
		return -EFAULT;
	if (copy_to_user(uarg, karg, min_t(size_t, usize, ksize)))
		return -EFAULT;
	return 0;
}

/* A counted reference to the lchan view of @ibdev, or NULL if it is going. */
struct lchan_dev *lchan_dev_get(struct ib_device *ibdev)
{
	struct lchan_dev *dev, *found = NULL;

	mutex_lock(&lchan_devices_lock);
	list_for_each_entry(dev, &lchan_devices, node) {
		if (dev->ibdev != ibdev)
			continue;
		mutex_lock(&dev->lock);
		if (!dev->dying)
			found = to_lchan_dev(kobject_get(&dev->kobj));
		mutex_unlock(&dev->lock);
		break;
	}
	mutex_unlock(&lchan_devices_lock);
	return found;
}

void lchan_dev_put(struct lchan_dev *dev)
{
	if (dev)
		kobject_put(&dev->kobj);
}

static int lchan_add_one(struct ib_device *ibdev)
{
	struct lchan_dev *dev;
	int ret;

	dev = kzalloc(sizeof(*dev), GFP_KERNEL);
	if (!dev)
		return -ENOMEM;
	dev->ibdev = ibdev;
	dev->cq_recheck = ibdev->ops.driver_id == RDMA_DRIVER_SIW;
	mutex_init(&dev->lock);
	INIT_LIST_HEAD(&dev->chans);
	INIT_LIST_HEAD(&dev->lsts);
	INIT_LIST_HEAD(&dev->pds);
	kobject_init(&dev->kobj, &lchan_dev_ktype);

	ret = lchan_sysfs_add_dev(dev);
	if (ret)
		goto err_put;

	mutex_lock(&lchan_devices_lock);
	list_add_tail(&dev->node, &lchan_devices);
	mutex_unlock(&lchan_devices_lock);
	ib_set_client_data(ibdev, &lchan_client, dev);
	pr_debug("device %s added\n", dev_name(&ibdev->dev));
	return 0;

err_put:
	kobject_put(&dev->kobj);
	return ret;
}

/*
 * ib_core calls this before rdma_cm's own removal (clients go in LIFO
 * order), so every channel and listener on the device still has its
 * cm_id, QP and CQ, and lchan releases them itself.  Nothing here may wait
 * for user space.
 */
static void lchan_remove_one(struct ib_device *ibdev, void *client_data)
{
	struct lchan_dev *dev = client_data;

	mutex_lock(&lchan_devices_lock);
	list_del(&dev->node);
	mutex_unlock(&lchan_devices_lock);

	mutex_lock(&dev->lock);
	dev->dying = true;
	mutex_unlock(&dev->lock);

	lchan_dev_kill_chans(dev);
	lchan_dev_kill_listeners(dev);
	lchan_dev_revoke_pds(dev);

	lchan_sysfs_del_dev(dev);
	pr_debug("device %s removed\n", dev_name(&ibdev->dev));
	kobject_put(&dev->kobj);
}

static void lchan_rename_one(struct ib_device *ibdev, void *client_data)
{
	struct lchan_dev *dev = client_data;

	if (kobject_rename(&dev->kobj, dev_name(&ibdev->dev)))
		pr_warn("cannot rename sysfs entry of %s\n",
			dev_name(&ibdev->dev));
}

static struct ib_client lchan_client = {
	.name = "lchan",
	.add = lchan_add_one,
	.remove = lchan_remove_one,
	.rename = lchan_rename_one,
};

static struct miscdevice lchan_miscdev = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "lchan",
	.fops = &lchan_ctx_fops,
	.mode = 0666,
};

static void lchan_check_abi(void)
{
	BUILD_BUG_ON(sizeof(struct lchan_info) != 24);
	BUILD_BUG_ON(sizeof(struct lchan_mr_reg) != 40);
	BUILD_BUG_ON(sizeof(struct lchan_mr_dereg) != 16);
	BUILD_BUG_ON(sizeof(struct lchan_addr) != 24);
	BUILD_BUG_ON(sizeof(struct lchan_listen) != 40);
	BUILD_BUG_ON(sizeof(struct lchan_ring_sizes) != 16);
	BUILD_BUG_ON(sizeof(struct lchan_connect) != 80);
	BUILD_BUG_ON(sizeof(struct lchan_accept) != 48);
	BUILD_BUG_ON(sizeof(struct lchan_establish) != 16);
	BUILD_BUG_ON(sizeof(struct lchan_ring_offsets) != 32);
	BUILD_BUG_ON(sizeof(struct lchan_chan_info) != 200);
	BUILD_BUG_ON(sizeof(struct lchan_ctx_setup) != 24);
	BUILD_BUG_ON(sizeof(struct lchan_sge) != 16);
	BUILD_BUG_ON(LCHAN_SQE_SGES * sizeof(struct lchan_sge) !=
		     sizeof(struct lchan_sqe));
	BUILD_BUG_ON(LCHAN_RQE_SGES * sizeof(struct lchan_sge) !=
		     sizeof(struct lchan_rqe));
	BUILD_BUG_ON(sizeof(struct lchan_enter) != 40);
	BUILD_BUG_ON(sizeof(struct lchan_sqe) != 64);
	BUILD_BUG_ON(sizeof(struct lchan_rqe) != 32);
	BUILD_BUG_ON(sizeof(struct lchan_cqe) != 32);
	BUILD_BUG_ON(offsetof(struct lchan_sqe, user_data) != 24);
	BUILD_BUG_ON(offsetof(struct lchan_cqe, status) != 20);
}

static int __init lchan_init(void)
{
	int ret;

	lchan_check_abi();

	lchan_wq = alloc_workqueue("lchan", WQ_UNBOUND, 0);
	if (!lchan_wq)
		return -ENOMEM;

	ret = lchan_sysfs_init();
	if (ret)
		goto err_destroy_wq;

	ret = ib_register_client(&lchan_client);
	if (ret)
		goto err_sysfs;

	ret = misc_register(&lchan_miscdev);
	if (ret)
		goto err_unregister_client;

	return 0;

err_unregister_client:
	ib_unregister_client(&lchan_client);
err_sysfs:
	lchan_sysfs_exit();
err_destroy_wq:
	destroy_workqueue(lchan_wq);
	return ret;
}

/* Every file holds a module reference, so nothing of a user is left here. */
static void __exit lchan_exit(void)
{
	misc_deregister(&lchan_miscdev);
	flush_workqueue(lchan_wq);	/* MR releases still queued */
	ib_unregister_client(&lchan_client);
	destroy_workqueue(lchan_wq);
	lchan_sysfs_exit();
}

module_init(lchan_init);
module_exit(lchan_exit);

MODULE_AUTHOR("The lchan developers");
MODULE_DESCRIPTION("Kernel-assisted RDMA channels with user-mapped rings");
MODULE_LICENSE("GPL");
