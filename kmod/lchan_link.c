// SPDX-License-Identifier: GPL-2.0
/*
 * Links (Documentation/link.md): the link object, the table of links,
 * a link's life, and the module parameters that govern them.  A link's
 * connection is lchan_link_cm.c's business, its messages
 * lchan_link_msg.c's.
 *
 * A link enters the table (is published) when it is made: an active one
 * by lchan_link_get() on first need, a passive one by a peer's request;
 * the table holds a reference until the link leaves it.  The link's
 * work runs every step that needs link->mutex: resolve, connect, accept,
 * and the teardown of a link that was refused or went down.  A link
 * ends once (lchan_link_end()): its pending requests fail at once and
 * its work releases its resources, then takes it out of the table; a
 * refused link stays in the table for link_idle_ms, so that connects to
 * that peer do not try again, and then goes down.  The look, a delayed
 * work every LCHAN_LINK_LOOK_MS, keeps an up link alive, ends it when it
 * stops answering or stays unused, and expires a refused one.  The look
 * never takes link->mutex: teardown cancels it with the mutex held.
 */
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <net/net_namespace.h>

#include "lchan.h"

/* Links by id (the sysfs name), each counted by the table. */
static DEFINE_XARRAY_ALLOC1(lchan_links);
static DEFINE_MUTEX(lchan_links_lock);

static bool lchan_links_on;
static ushort lchan_link_port = LCHAN_LINK_PORT_DEFAULT;
static unsigned int lchan_link_idle_ms = LCHAN_LINK_IDLE_MS_DEFAULT;

static void lchan_link_drop_all(int err);
static void lchan_link_work(struct work_struct *work);
static void lchan_link_look(struct work_struct *work);

static int lchan_link_param_set_links(const char *val,
				      const struct kernel_param *kp)
{
	bool on;
	int ret;

	ret = kstrtobool(val, &on);
	if (ret)
		return ret;
	ret = lchan_link_cm_service(on);
	if (ret)
		return ret;
	WRITE_ONCE(lchan_links_on, on);
	if (!on)
		lchan_link_drop_all(-ESHUTDOWN);
	return 0;
}

static const struct kernel_param_ops lchan_link_links_ops = {
	.set = lchan_link_param_set_links,
	.get = param_get_bool,
};
module_param_cb(links, &lchan_link_links_ops, &lchan_links_on, 0644);
MODULE_PARM_DESC(links, "Links between lchan modules for channel set-up: 1 on, 0 off (default 0, off until set-up over links is tested; with 0 nothing of lchan changes)");

static int lchan_link_param_set_port(const char *val,
				     const struct kernel_param *kp)
{
	u16 port;
	int ret;

	ret = kstrtou16(val, 0, &port);
	if (ret)
		return ret;
	if (!port)
		return -EINVAL;
	lchan_link_port = port;
	return 0;
}

static const struct kernel_param_ops lchan_link_port_ops = {
	.set = lchan_link_param_set_port,
	.get = param_get_ushort,
};
module_param_cb(link_port, &lchan_link_port_ops, &lchan_link_port, 0444);
MODULE_PARM_DESC(link_port, "rdma_cm port (RDMA_PS_IB space) of the link service, the same on every machine (default 7471)");

module_param_named(link_idle_ms, lchan_link_idle_ms, uint, 0644);
MODULE_PARM_DESC(link_idle_ms, "How long a link nothing uses is kept, in ms (default 600000)");

bool lchan_link_enabled(void)
{
	return READ_ONCE(lchan_links_on);
}

u16 lchan_link_service_port(void)
{
	return lchan_link_port;
}

/* The kobject's release: the last reference is gone, and so is all else. */
static void lchan_link_free(struct kobject *kobj)
{
	struct lchan_link *link = to_lchan_link(kobj);

	WARN_ON(link->cm_id || link->qp || link->ring);
	lchan_dev_put(link->dev);
	kfree(link);
}

/* Its lifetime; sysfs adds the attributes (lchan_sysfs.c). */
static const struct kobj_type lchan_link_ktype = {
	.release = lchan_link_free,
	.sysfs_ops = &kobj_sysfs_ops,
};

void lchan_link_put(struct lchan_link *link)
{
	kobject_put(&link->kobj);
}

/*
 * @addr as a key of the table: family and address only, port 0.
 * -EAFNOSUPPORT for another family.
 */
int lchan_link_addr_key(struct sockaddr_storage *key,
			const struct sockaddr *addr)
{
	memset(key, 0, sizeof(*key));
	if (addr->sa_family == AF_INET) {
		struct sockaddr_in *k = (struct sockaddr_in *)key;

		k->sin_family = AF_INET;
		k->sin_addr = ((const struct sockaddr_in *)addr)->sin_addr;
		return 0;
	}
	if (addr->sa_family == AF_INET6) {
		const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)addr;
		struct sockaddr_in6 *k = (struct sockaddr_in6 *)key;

		k->sin6_family = AF_INET6;
		k->sin6_addr = a->sin6_addr;
		k->sin6_scope_id = a->sin6_scope_id;
		return 0;
	}
	return -EAFNOSUPPORT;
}

/* The port of @addr, host order. */
u16 lchan_link_addr_port(const struct sockaddr_storage *addr)
{
	if (addr->ss_family == AF_INET)
		return ntohs(((const struct sockaddr_in *)addr)->sin_port);
	return ntohs(((const struct sockaddr_in6 *)addr)->sin6_port);
}

static bool lchan_link_addr_eq(const struct sockaddr_storage *a,
			       const struct sockaddr_storage *b)
{
	return !memcmp(a, b, sizeof(*a));
}

static struct lchan_link *lchan_link_alloc(bool active,
					   const struct sockaddr_storage *local,
					   const struct sockaddr_storage *peer)
{
	struct lchan_link *link;

	link = kzalloc(sizeof(*link), GFP_KERNEL);
	if (!link)
		return ERR_PTR(-ENOMEM);
	link->kind = LCHAN_CM_LINK;
	kobject_init(&link->kobj, &lchan_link_ktype);
	link->active = active;
	link->local = *local;
	link->peer = *peer;
	mutex_init(&link->mutex);
	INIT_LIST_HEAD(&link->dev_node);
	spin_lock_init(&link->lock);
	link->state = active ? LCHAN_LINK_RESOLVING : LCHAN_LINK_ACCEPTING;
	link->next_id = 1;
	link->tokens = LCHAN_LINK_BURST;
	link->refilled_ns = ktime_get_ns();
	link->used = jiffies;
	init_waitqueue_head(&link->wq);
	INIT_WORK(&link->work, lchan_link_work);
	INIT_DELAYED_WORK(&link->look, lchan_link_look);
	INIT_LIST_HEAD(&link->inreq_list);
	INIT_WORK(&link->inreq_work, lchan_link_msg_inreq_work);
	return link;
}

/* Into the table, with the table's reference.  lchan_links_lock held. */
static int lchan_link_publish(struct lchan_link *link)
{
	int ret;

	ret = xa_alloc(&lchan_links, &link->id, link,
		       XA_LIMIT(1, LCHAN_LINK_MAX), GFP_KERNEL);
	if (ret)
		return ret == -EBUSY ? -ENOSPC : ret;
	link->published = true;
	return 0;
}

/*
 * Out of the table: no lookup finds it, its directory goes, and the
 * table's reference with it.  Once; process context, no lock held.
 */
static void lchan_link_unpublish(struct lchan_link *link)
{
	bool was;

	mutex_lock(&lchan_links_lock);
	was = link->published;
	link->published = false;
	mutex_unlock(&lchan_links_lock);
	if (!was)
		return;
	mutex_lock(&link->mutex);
	if (link->sysfs == LCHAN_LINK_SYSFS_ADDED)
		lchan_sysfs_del_link(link);
	link->sysfs = LCHAN_LINK_SYSFS_GONE;
	mutex_unlock(&link->mutex);
	/* Its id is free once its directory is gone. */
	mutex_lock(&lchan_links_lock);
	xa_erase(&lchan_links, link->id);
	mutex_unlock(&lchan_links_lock);
	lchan_link_put(link);
}

/* Run the link's work for @ev; a queued work holds a reference. */
void lchan_link_queue(struct lchan_link *link, int ev)
{
	set_bit(ev, &link->events);
	kobject_get(&link->kobj);
	if (!queue_work(lchan_wq, &link->work))
		lchan_link_put(link);
}

/* The look in @ms; a queued look holds a reference. */
static void lchan_link_arm_look(struct lchan_link *link, unsigned int ms)
{
	kobject_get(&link->kobj);
	if (!queue_delayed_work(lchan_wq, &link->look, msecs_to_jiffies(ms)))
		lchan_link_put(link);
}

/*
 * @link ends for @err: refused if @refused and it was an active link not
 * yet up, else down.  Its pending requests fail with @err at once,
 * waiters wake, and its work releases it.  False if it had ended so
 * already.  Any context.
 */
bool lchan_link_end(struct lchan_link *link, int err, bool refused)
{
	int old, new;

	spin_lock_bh(&link->lock);
	old = link->state;
	new = refused && link->active && old < LCHAN_LINK_UP ?
	      LCHAN_LINK_REFUSED : LCHAN_LINK_DOWN;
	if (old == LCHAN_LINK_DOWN || old == new) {
		spin_unlock_bh(&link->lock);
		return false;
	}
	WRITE_ONCE(link->state, new);
	if (!link->error)
		link->error = err;
	if (new == LCHAN_LINK_REFUSED)
		link->refused_at = jiffies;
	lchan_link_msg_fail(link, err);
	spin_unlock_bh(&link->lock);
	lchan_dbg_link(link, "%s: %d\n", new == LCHAN_LINK_DOWN ? "down" :
		       "refused", err);
	wake_up_all(&link->wq);
	lchan_link_queue(link, LCHAN_LINK_EV_END);
	return true;
}

void lchan_link_down(struct lchan_link *link, int err)
{
	lchan_link_end(link, err, false);
}

void lchan_link_refuse(struct lchan_link *link, int err)
{
	lchan_link_end(link, err, true);
}

/*
 * The link's connection is up at @version (cm handler): the peer's path
 * is kept for the checks of its requests, and the look starts, at once
 * on the active side (its first echo gives the round trip).
 */
void lchan_link_established(struct lchan_link *link, struct rdma_cm_id *id,
			    u8 version)
{
	struct sa_path_rec *path = id->route.num_pri_alt_paths > 0 ?
				   id->route.path_rec : NULL;
	unsigned long now = jiffies;
	bool up = false;

	spin_lock_bh(&link->lock);
	if (link->state == LCHAN_LINK_CONNECTING ||
	    link->state == LCHAN_LINK_ACCEPTING) {
		if (path) {
			memcpy(link->peer_gid, path->dgid.raw,
			       sizeof(link->peer_gid));
			link->peer_lid = be32_to_cpu(sa_path_get_dlid(path));
		}
		WRITE_ONCE(link->version, version);
		WRITE_ONCE(link->heard, now);
		WRITE_ONCE(link->used, now);
		link->up_at = now;
		link->looked = now;
		WRITE_ONCE(link->state, LCHAN_LINK_UP);
		up = true;
	}
	spin_unlock_bh(&link->lock);
	if (!up)
		return;
	lchan_dbg_link(link, "up, version %u\n", version);
	wake_up_all(&link->wq);
	lchan_link_arm_look(link, link->active ? 0 : LCHAN_LINK_LOOK_MS);
}

/*
 * Count @link among @ibdev's links, which device removal ends, unless the
 * device is going (-ENODEV) or cannot serve one (-EOPNOTSUPP: a CQ that
 * may lose events).  mutex held.
 */
int lchan_link_bind(struct lchan_link *link, struct ib_device *ibdev,
		    u32 port_num)
{
	struct lchan_dev *dev;
	int ret;

	if (link->dev)
		return -EINVAL;
	dev = lchan_dev_get(ibdev);
	if (!dev)
		return -ENODEV;
	ret = dev->quirk->cq_recheck ? -EOPNOTSUPP :
	      lchan_dev_join(dev, &link->dev_node, &dev->links);
	if (ret) {
		lchan_dev_put(dev);
		return ret;
	}
	WRITE_ONCE(link->port_num, port_num);
	WRITE_ONCE(link->dev, dev);	/* counted till the link's release */
	return 0;
}

/* Out of its device's links, unless device removal took it.  mutex held. */
static void lchan_link_unbind(struct lchan_link *link)
{
	struct lchan_dev *dev = link->dev;

	if (!dev)
		return;
	mutex_lock(&dev->lock);
	list_del_init(&link->dev_node);
	mutex_unlock(&dev->lock);
}

/*
 * Release what the link holds of the device and of rdma_cm: tell the
 * peer, flush and free the QP, CQ, buffers and PD, destroy the cm id
 * (no handler of it runs after), and stop the look.  The link has ended,
 * so nothing is posted any more.  Idempotent; mutex held.
 */
static void lchan_link_teardown(struct lchan_link *link)
{
	lchan_link_cm_disconnect(link);
	lchan_link_msg_destroy(link);
	lchan_link_cm_destroy(link);
	lchan_link_unbind(link);
	if (cancel_delayed_work_sync(&link->look))
		lchan_link_put(link);
}

/* The step the link is at.  mutex held. */
static void lchan_link_step(struct lchan_link *link)
{
	int state = READ_ONCE(link->state);

	if (state != LCHAN_LINK_DOWN && link->sysfs == LCHAN_LINK_SYSFS_NONE) {
		if (lchan_sysfs_add_link(link))
			lchan_dbg_link(link, "no sysfs directory\n");
		else
			link->sysfs = LCHAN_LINK_SYSFS_ADDED;
	}
	if (state >= LCHAN_LINK_REFUSED) {
		lchan_link_teardown(link);
		/* A refused link expires by its look, armed after teardown. */
		if (state == LCHAN_LINK_REFUSED)
			lchan_link_arm_look(link, 0);
		return;
	}
	if (test_and_clear_bit(LCHAN_LINK_EV_START, &link->events))
		lchan_link_cm_start(link);
	if (test_and_clear_bit(LCHAN_LINK_EV_ROUTE, &link->events))
		lchan_link_cm_connect(link);
	if (test_and_clear_bit(LCHAN_LINK_EV_ACCEPT, &link->events))
		lchan_link_cm_accept(link);
}

static void lchan_link_work(struct work_struct *work)
{
	struct lchan_link *link = container_of(work, struct lchan_link, work);
	bool gone;

	clear_bit(LCHAN_LINK_EV_END, &link->events);
	mutex_lock(&link->mutex);
	lchan_link_step(link);
	gone = READ_ONCE(link->state) == LCHAN_LINK_DOWN;
	mutex_unlock(&link->mutex);
	if (gone)
		lchan_link_unpublish(link);
	lchan_link_put(link);
}

/*
 * An up link's look: 0 to look again later, else it has ended.  Its
 * echo unanswered since the last look is a peer gone; an active link
 * without a request for link_idle_ms is closed; a passive link whose
 * peer never spoke within two looks is dropped; a link that heard
 * nothing since the last look sends an echo, and one that cannot (every
 * send buffer held while nothing comes back) is a peer gone too.  The
 * passive side sends no request before the peer has spoken, so the
 * active side never receives a message before it knows the version.
 */
static int lchan_link_keep(struct lchan_link *link, unsigned long now)
{
	unsigned long idle = msecs_to_jiffies(READ_ONCE(lchan_link_idle_ms));
	bool echo_lost, unused;

	spin_lock_bh(&link->lock);
	echo_lost = link->echo_out;
	unused = link->active && !link->users &&
		 time_after_eq(now, READ_ONCE(link->used) + idle);
	spin_unlock_bh(&link->lock);
	if (echo_lost)
		return -ETIMEDOUT;
	if (unused)
		return -ECONNABORTED;
	if (!link->active && !READ_ONCE(link->heard_once))
		return time_after_eq(now, link->up_at +
				     2 * msecs_to_jiffies(LCHAN_LINK_LOOK_MS)) ?
		       -ETIMEDOUT : 0;
	if (!time_after(READ_ONCE(link->heard), link->looked) &&
	    lchan_link_echo(link) == -ENOBUFS)
		return -ETIMEDOUT;
	return 0;
}

static void lchan_link_look(struct work_struct *work)
{
	struct lchan_link *link = container_of(to_delayed_work(work),
					       struct lchan_link, look);
	unsigned long now = jiffies, end;
	unsigned int next = LCHAN_LINK_LOOK_MS;
	int state = READ_ONCE(link->state);
	int ret;

	if (state == LCHAN_LINK_REFUSED) {
		spin_lock_bh(&link->lock);
		end = link->refused_at +
		      msecs_to_jiffies(READ_ONCE(lchan_link_idle_ms));
		ret = link->error;
		spin_unlock_bh(&link->lock);
		if (time_after_eq(now, end)) {
			lchan_link_down(link, ret);
			goto out;
		}
		next = min_t(unsigned int, next, jiffies_to_msecs(end - now));
		lchan_link_arm_look(link, next);
		goto out;
	}
	if (state != LCHAN_LINK_UP)
		goto out;
	ret = lchan_link_keep(link, now);
	if (ret) {
		lchan_link_down(link, ret);
		goto out;
	}
	link->looked = now;
	lchan_link_arm_look(link, next);
out:
	lchan_link_put(link);
}

/*
 * The active link from @src to @dst (their ports aside), made if there is
 * none: a counted reference, whatever its state (a new one is resolving;
 * its work goes on), or -ENOSPC when the table is full.  The link counts
 * as used now.  Process context.
 */
struct lchan_link *lchan_link_get(const struct sockaddr *src,
				  const struct sockaddr *dst)
{
	struct sockaddr_storage local, peer;
	struct lchan_link *link;
	unsigned long index;
	int ret;

	ret = lchan_link_addr_key(&local, src);
	if (!ret)
		ret = lchan_link_addr_key(&peer, dst);
	if (ret)
		return ERR_PTR(ret);
	mutex_lock(&lchan_links_lock);
	xa_for_each(&lchan_links, index, link) {
		if (link->active && link->published &&
		    READ_ONCE(link->state) != LCHAN_LINK_DOWN &&
		    lchan_link_addr_eq(&link->local, &local) &&
		    lchan_link_addr_eq(&link->peer, &peer)) {
			kobject_get(&link->kobj);
			mutex_unlock(&lchan_links_lock);
			WRITE_ONCE(link->used, jiffies);
			return link;
		}
	}
	link = lchan_link_alloc(true, &local, &peer);
	if (IS_ERR(link))
		goto out_unlock;
	ret = lchan_link_publish(link);
	if (ret) {
		lchan_link_put(link);
		link = ERR_PTR(ret);
		goto out_unlock;
	}
	kobject_get(&link->kobj);	/* the caller's */
	mutex_unlock(&lchan_links_lock);
	lchan_link_queue(link, LCHAN_LINK_EV_START);
	return link;

out_unlock:
	mutex_unlock(&lchan_links_lock);
	return link;
}

/*
 * A peer's link request on @id, accepted at @version (lchan_link_cm.c's
 * handler of it): a passive link in the table, which replaces the one
 * before from the same peer to the same address (the peer gave that
 * one up).  The table's reference is the only one.
 */
struct lchan_link *lchan_link_accepted(struct rdma_cm_id *id, u8 version)
{
	struct sockaddr_storage local, peer;
	struct lchan_link *link, *old;
	unsigned long index;
	int ret;

	ret = lchan_link_addr_key(&local,
				  (struct sockaddr *)&id->route.addr.src_addr);
	if (!ret)
		ret = lchan_link_addr_key(&peer, (struct sockaddr *)
					  &id->route.addr.dst_addr);
	if (ret)
		return ERR_PTR(ret);
	link = lchan_link_alloc(false, &local, &peer);
	if (IS_ERR(link))
		return link;
	link->version = version;
	mutex_lock(&lchan_links_lock);
	xa_for_each(&lchan_links, index, old)
		if (!old->active && old->published &&
		    lchan_link_addr_eq(&old->local, &local) &&
		    lchan_link_addr_eq(&old->peer, &peer))
			lchan_link_down(old, -ECONNRESET);
	ret = lchan_link_publish(link);
	if (!ret)
		link->cm_id = id;	/* before anyone can reach it */
	mutex_unlock(&lchan_links_lock);
	if (ret) {
		lchan_link_put(link);
		return ERR_PTR(ret);
	}
	return link;
}

/*
 * The source GID and LID of @link's path, which a set-up message names
 * as its sender's (LID 0 but on InfiniBand).  -ENOTCONN once the link
 * has no cm id.
 */
int lchan_link_path_src(struct lchan_link *link, u8 *gid, u16 *lid)
{
	struct sa_path_rec *path;
	struct rdma_cm_id *id;
	int ret = 0;

	mutex_lock(&link->mutex);
	id = link->cm_id;
	path = id && id->route.num_pri_alt_paths > 0 ? id->route.path_rec :
	       NULL;
	if (path) {
		memcpy(gid, path->sgid.raw, 16);
		*lid = rdma_protocol_ib(id->device, id->port_num) ?
		       be32_to_cpu(sa_path_get_slid(path)) : 0;
	} else {
		ret = -ENOTCONN;
	}
	mutex_unlock(&link->mutex);
	return ret;
}

/* End @link for @err and release it now.  Process context, no lock held. */
static void lchan_link_finish(struct lchan_link *link, int err)
{
	lchan_link_down(link, err);
	mutex_lock(&link->mutex);
	lchan_link_teardown(link);
	mutex_unlock(&link->mutex);
	lchan_link_unpublish(link);
}

/*
 * Device removal: every link on @dev goes down with -ENODEV, its pending
 * requests fail, and what it holds of the device is released now.
 */
void lchan_link_kill_dev(struct lchan_dev *dev)
{
	struct lchan_link *link;

	for (;;) {
		mutex_lock(&dev->lock);
		link = list_first_entry_or_null(&dev->links, struct lchan_link,
						dev_node);
		if (link) {
			list_del_init(&link->dev_node);
			kobject_get(&link->kobj);
		}
		mutex_unlock(&dev->lock);
		if (!link)
			break;
		lchan_link_finish(link, -ENODEV);
		lchan_link_put(link);
	}
}

/* Every link ends with @err and is released, its work done. */
static void lchan_link_drop_all(int err)
{
	struct lchan_link *link;
	unsigned long index;

	for (;;) {
		mutex_lock(&lchan_links_lock);
		xa_for_each(&lchan_links, index, link)
			if (link->published)
				break;
		if (link)
			kobject_get(&link->kobj);
		mutex_unlock(&lchan_links_lock);
		if (!link)
			break;
		lchan_link_finish(link, err);
		if (cancel_work_sync(&link->work))
			lchan_link_put(link);
		lchan_link_put(link);
	}
}

/* Module init: the service listens if links were asked for at load. */
void lchan_link_init(void)
{
	int ret;

	ret = lchan_link_cm_init(READ_ONCE(lchan_links_on));
	if (ret) {
		pr_warn("lchan: link service on port %u: %d; links are off\n",
			lchan_link_port, ret);
		WRITE_ONCE(lchan_links_on, false);
	}
}

/* Module exit: no service, no link, nothing of theirs queued. */
void lchan_link_exit(void)
{
	lchan_link_cm_exit();
	lchan_link_drop_all(-ESHUTDOWN);
}
