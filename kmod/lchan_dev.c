// SPDX-License-Identifier: GPL-2.0
/*
 * The RDMA devices lchan sees (ib_core tells lchan_main.c as they come
 * and go): the struct lchan_dev that channels, listeners and PDs hold.
 */
#include <linux/slab.h>

#include "lchan.h"

/* Every device lchan has seen and not yet been told is gone. */
static LIST_HEAD(lchan_devices);
static DEFINE_MUTEX(lchan_devices_lock);

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

/* Add @node to @list, one of @dev's, unless the device is going (-ENODEV). */
int lchan_dev_join(struct lchan_dev *dev, struct list_head *node,
		   struct list_head *list)
{
	int ret = 0;

	mutex_lock(&dev->lock);
	if (dev->dying)
		ret = -ENODEV;
	else
		list_add_tail(node, list);
	mutex_unlock(&dev->lock);
	return ret;
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

/* The largest message of each of @dev's ports. */
static int lchan_dev_query_ports(struct lchan_dev *dev)
{
	struct ib_port_attr attr;
	u32 port;
	int ret;

	rdma_for_each_port(dev->ibdev, port) {
		ret = ib_query_port(dev->ibdev, port, &attr);
		if (ret)
			return ret;
		dev->port_max_msg[port] = attr.max_msg_sz;
	}
	return 0;
}

/* The lchan view of @ibdev, not yet seen by anyone. */
struct lchan_dev *lchan_dev_alloc(struct ib_device *ibdev)
{
	struct lchan_dev *dev;
	int ret;

	dev = kzalloc(struct_size(dev, port_max_msg, rdma_end_port(ibdev) + 1),
		      GFP_KERNEL);
	if (!dev)
		return ERR_PTR(-ENOMEM);
	dev->ibdev = ibdev;
	ret = lchan_dev_query_ports(dev);
	if (ret) {
		kfree(dev);
		return ERR_PTR(ret);
	}
	dev->quirk = lchan_quirk_get(ibdev);
	dev->post_bh_off = lchan_compat_post_bh_off(ibdev);
	mutex_init(&dev->lock);
	INIT_LIST_HEAD(&dev->chans);
	INIT_LIST_HEAD(&dev->lsts);
	INIT_LIST_HEAD(&dev->pds);
	INIT_LIST_HEAD(&dev->links);
	kobject_init(&dev->kobj, &lchan_dev_ktype);
	return dev;
}

/* lchan_dev_get() finds @dev from now on. */
void lchan_dev_publish(struct lchan_dev *dev)
{
	mutex_lock(&lchan_devices_lock);
	list_add_tail(&dev->node, &lchan_devices);
	mutex_unlock(&lchan_devices_lock);
}

/* The device is going: not found any more, and no new users. */
void lchan_dev_retire(struct lchan_dev *dev)
{
	mutex_lock(&lchan_devices_lock);
	list_del(&dev->node);
	mutex_unlock(&lchan_devices_lock);

	mutex_lock(&dev->lock);
	dev->dying = true;
	mutex_unlock(&dev->lock);
}
