// SPDX-License-Identifier: GPL-2.0
/*
 * The RDMA devices lchan sees: an ib_client that tracks them as they come
 * and go, and the struct lchan_dev that channels, listeners and PDs hold.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/slab.h>

#include "lchan.h"

/* Every device lchan has seen and not yet been told is gone. */
static LIST_HEAD(lchan_devices);
static DEFINE_MUTEX(lchan_devices_lock);

static struct ib_client lchan_dev_client;

/* The kobject's release: the last reference to the device is gone. */
static void lchan_dev_free(struct kobject *kobj)
{
	kfree(to_lchan_dev(kobj));
}

/* Its lifetime; sysfs adds the attributes (lchan_sysfs.c). */
static const struct kobj_type lchan_dev_ktype = {
	.release = lchan_dev_free,
	.sysfs_ops = &kobj_sysfs_ops,
};

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

/*
 * Count @chan among @dev's channels, which device removal ends, unless the
 * device is going (-ENODEV).  The channel's PD @pd lives while the device
 * does: dev->lock orders its revoke, so its lkey is read here.
 */
int lchan_dev_add_chan(struct lchan_dev *dev, struct lchan_channel *chan,
		       struct lchan_pd *pd)
{
	mutex_lock(&dev->lock);
	if (dev->dying) {
		mutex_unlock(&dev->lock);
		return -ENODEV;
	}
	chan->caps.empty_lkey = pd->ibpd->local_dma_lkey;
	list_add_tail(&chan->dev_node, &dev->chans);
	dev->nr_chans++;
	mutex_unlock(&dev->lock);
	return 0;
}

/* @chan leaves its device's channels, unless device removal took it. */
void lchan_dev_del_chan(struct lchan_channel *chan)
{
	struct lchan_dev *dev = chan->dev;

	if (!dev)
		return;
	mutex_lock(&dev->lock);
	if (!list_empty(&chan->dev_node)) {
		list_del_init(&chan->dev_node);
		dev->nr_chans--;
	}
	mutex_unlock(&dev->lock);
}

static int lchan_dev_add(struct ib_device *ibdev)
{
	struct lchan_dev *dev;
	int ret;

	dev = kzalloc(sizeof(*dev), GFP_KERNEL);
	if (!dev)
		return -ENOMEM;
	dev->ibdev = ibdev;
	dev->quirk = lchan_quirk_get(ibdev);
	dev->post_bh_off = lchan_compat_post_bh_off(ibdev);
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
	ib_set_client_data(ibdev, &lchan_dev_client, dev);
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
static void lchan_dev_remove(struct ib_device *ibdev, void *client_data)
{
	struct lchan_dev *dev = client_data;

	mutex_lock(&lchan_devices_lock);
	list_del(&dev->node);
	mutex_unlock(&lchan_devices_lock);

	mutex_lock(&dev->lock);
	dev->dying = true;
	mutex_unlock(&dev->lock);

	lchan_qp_kill_dev(dev);
	lchan_listen_kill_dev(dev);
	lchan_ctx_revoke_pds(dev);

	lchan_sysfs_del_dev(dev);
	pr_debug("device %s removed\n", dev_name(&ibdev->dev));
	kobject_put(&dev->kobj);
}

static void lchan_dev_rename(struct ib_device *ibdev, void *client_data)
{
	struct lchan_dev *dev = client_data;

	if (kobject_rename(&dev->kobj, dev_name(&ibdev->dev)))
		pr_warn("cannot rename sysfs entry of %s\n",
			dev_name(&ibdev->dev));
}

static struct ib_client lchan_dev_client = {
	.name = "lchan",
	.add = lchan_dev_add,
	.remove = lchan_dev_remove,
	.rename = lchan_dev_rename,
};

int lchan_dev_init(void)
{
	return ib_register_client(&lchan_dev_client);
}

void lchan_dev_exit(void)
{
	ib_unregister_client(&lchan_dev_client);
}
