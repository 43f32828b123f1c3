// SPDX-License-Identifier: GPL-2.0
/*
 * /sys/kernel/lchan: the ABI version, the RDMA devices lchan sees, one
 * directory per channel and one per link.  One ASCII value per file.
 */
#include <linux/slab.h>
#include <linux/sysfs.h>
#include <linux/inet.h>

#include "lchan.h"

static struct kobject *lchan_root_kobj;
static struct kobject *lchan_devices_kobj;
static struct kobject *lchan_channels_kobj;
static struct kobject *lchan_links_kobj;

static ssize_t lchan_sysfs_abi_version_show(struct kobject *kobj,
					    struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", LCHAN_ABI_VERSION);
}
static struct kobj_attribute abi_version_attr =
	__ATTR(abi_version, 0444, lchan_sysfs_abi_version_show, NULL);

static ssize_t lchan_sysfs_features_show(struct kobject *kobj,
					 struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "0x%llx\n", (unsigned long long)LCHAN_FEATURES);
}
static struct kobj_attribute features_attr =
	__ATTR(features, 0444, lchan_sysfs_features_show, NULL);

static struct attribute *lchan_root_attrs[] = {
	&abi_version_attr.attr,
	&features_attr.attr,
	NULL,
};

static const struct attribute_group lchan_root_group = {
	.attrs = lchan_root_attrs,
};

static const char * const lchan_sysfs_mode_names[] = {
	[LCHAN_MODE_DOORBELL] = "doorbell",
	[LCHAN_MODE_POLLER] = "poller",
	[LCHAN_MODE_DIRECT] = "direct",
};

/* devices/<name>/ */

static ssize_t lchan_sysfs_transport_show(struct kobject *kobj,
					  struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%s\n",
			  lchan_transport_name(to_lchan_dev(kobj)->ibdev));
}
static struct kobj_attribute transport_attr =
	__ATTR(transport, 0444, lchan_sysfs_transport_show, NULL);

static ssize_t lchan_sysfs_ports_show(struct kobject *kobj,
				      struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n",
			  rdma_end_port(to_lchan_dev(kobj)->ibdev));
}
static struct kobj_attribute ports_attr =
	__ATTR(ports, 0444, lchan_sysfs_ports_show, NULL);

static ssize_t lchan_sysfs_channels_show(struct kobject *kobj,
					 struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", READ_ONCE(to_lchan_dev(kobj)->nr_chans));
}
static struct kobj_attribute channels_attr =
	__ATTR(channels, 0444, lchan_sysfs_channels_show, NULL);

static ssize_t lchan_sysfs_max_qp_wr_show(struct kobject *kobj,
					  struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%d\n",
			  to_lchan_dev(kobj)->ibdev->attrs.max_qp_wr);
}
static struct kobj_attribute max_qp_wr_attr =
	__ATTR(max_qp_wr, 0444, lchan_sysfs_max_qp_wr_show, NULL);

static ssize_t lchan_sysfs_max_send_sge_show(struct kobject *kobj,
					     struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%d\n",
			  to_lchan_dev(kobj)->ibdev->attrs.max_send_sge);
}
static struct kobj_attribute max_send_sge_attr =
	__ATTR(max_send_sge, 0444, lchan_sysfs_max_send_sge_show, NULL);

static struct attribute *lchan_dev_attrs[] = {
	&transport_attr.attr,
	&ports_attr.attr,
	&channels_attr.attr,
	&max_qp_wr_attr.attr,
	&max_send_sge_attr.attr,
	NULL,
};
ATTRIBUTE_GROUPS(lchan_dev);

/*
 * The object's files own their kobject types (lifetime only); the
 * attributes are added here, right after the directory, as a type's
 * default groups would be.
 */
int lchan_sysfs_add_dev(struct lchan_dev *dev)
{
	int ret;

	ret = kobject_add(&dev->kobj, lchan_devices_kobj, "%s",
			  dev_name(&dev->ibdev->dev));
	if (ret)
		return ret;
	ret = sysfs_create_groups(&dev->kobj, lchan_dev_groups);
	if (ret)
		kobject_del(&dev->kobj);
	return ret;
}

void lchan_sysfs_del_dev(struct lchan_dev *dev)
{
	kobject_del(&dev->kobj);
}

/* channels/<id>/ */

const char *lchan_sysfs_state_name(int state)
{
	switch (state) {
	case LCHAN_STATE_CONNECTING:
		return "connecting";
	case LCHAN_STATE_CONNECTED:
		return "connected";
	case LCHAN_STATE_DISCONNECTED:
		return "disconnected";
	case LCHAN_STATE_ERROR:
		return "error";
	}
	return "unknown";
}

/*
 * lchan's own kernel memory for @chan: the object and its rings.  The
 * device's QP and CQ and rdma_cm's id are not counted: their size is the
 * driver's business.
 */
static size_t lchan_sysfs_kmem_bytes(const struct lchan_channel *chan)
{
	return sizeof(*chan) + lchan_ring_kmem_bytes(&chan->ring);
}

#define LCHAN_CHAN_ATTR(_name, _fmt, _expr)				\
static ssize_t lchan_sysfs_chan_##_name##_show(struct kobject *kobj,	\
					       struct kobj_attribute *attr,	\
					       char *buf)			\
{									\
	struct lchan_channel *chan = to_lchan_channel(kobj);		\
									\
	return sysfs_emit(buf, _fmt "\n", _expr);			\
}									\
static struct kobj_attribute chan_##_name##_attr =			\
	__ATTR(_name, 0444, lchan_sysfs_chan_##_name##_show, NULL)

static ssize_t lchan_sysfs_show_addr(const struct sockaddr_storage *ss,
				     char *buf)
{
	if (ss->ss_family != AF_INET && ss->ss_family != AF_INET6)
		return sysfs_emit(buf, "none\n");
	return sysfs_emit(buf, "%pISc\n", ss);
}

static u16 lchan_sysfs_port_of(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET)
		return ntohs(((struct sockaddr_in *)ss)->sin_port);
	if (ss->ss_family == AF_INET6)
		return ntohs(((struct sockaddr_in6 *)ss)->sin6_port);
	return 0;
}

static ssize_t lchan_sysfs_chan_local_addr_show(struct kobject *kobj,
						struct kobj_attribute *attr, char *buf)
{
	return lchan_sysfs_show_addr(&to_lchan_channel(kobj)->conn.local, buf);
}
static struct kobj_attribute chan_local_addr_attr =
	__ATTR(local_addr, 0444, lchan_sysfs_chan_local_addr_show, NULL);

static ssize_t lchan_sysfs_chan_remote_addr_show(struct kobject *kobj,
						 struct kobj_attribute *attr, char *buf)
{
	return lchan_sysfs_show_addr(&to_lchan_channel(kobj)->conn.remote, buf);
}
static struct kobj_attribute chan_remote_addr_attr =
	__ATTR(remote_addr, 0444, lchan_sysfs_chan_remote_addr_show, NULL);

static ssize_t lchan_sysfs_chan_device_show(struct kobject *kobj,
					    struct kobj_attribute *attr, char *buf)
{
	struct lchan_channel *chan = to_lchan_channel(kobj);

	/* dev is set once, before the directory appears; the name is ours. */
	return sysfs_emit(buf, "%s\n", chan->dev ? kobject_name(&chan->dev->kobj)
						 : "none");
}
static struct kobj_attribute chan_device_attr =
	__ATTR(device, 0444, lchan_sysfs_chan_device_show, NULL);

LCHAN_CHAN_ATTR(state, "%s", lchan_sysfs_state_name(READ_ONCE(chan->state)));
LCHAN_CHAN_ATTR(port, "%u", chan->conn.port_num);
LCHAN_CHAN_ATTR(local_port, "%u", lchan_sysfs_port_of(&chan->conn.local));
LCHAN_CHAN_ATTR(remote_port, "%u", lchan_sysfs_port_of(&chan->conn.remote));
LCHAN_CHAN_ATTR(local_qpn, "%u", chan->ring.info.local_qpn);
LCHAN_CHAN_ATTR(remote_qpn, "%u", READ_ONCE(chan->conn.remote_qpn));
LCHAN_CHAN_ATTR(sq_entries, "%u", chan->ring.sq.entries);
LCHAN_CHAN_ATTR(rq_entries, "%u", chan->ring.rq.entries);
LCHAN_CHAN_ATTR(cq_entries, "%u", chan->ring.cq_entries);
LCHAN_CHAN_ATTR(sq_outstanding, "%u", lchan_flow_outstanding(&chan->ring.sq));
LCHAN_CHAN_ATTR(rq_outstanding, "%u", lchan_flow_outstanding(&chan->ring.rq));
LCHAN_CHAN_ATTR(sq_held, "%u", lchan_ring_held(&chan->ring, &chan->ring.sq));
LCHAN_CHAN_ATTR(rq_held, "%u", lchan_ring_held(&chan->ring, &chan->ring.rq));
LCHAN_CHAN_ATTR(sq_starved, "%d", READ_ONCE(chan->ring.sq.starved));
LCHAN_CHAN_ATTR(rq_starved, "%d", READ_ONCE(chan->ring.rq.starved));
LCHAN_CHAN_ATTR(open_exchange, "%d", chan->iw.exchange);
LCHAN_CHAN_ATTR(peer_first_wait, "%d", READ_ONCE(chan->iw.sq_held));
LCHAN_CHAN_ATTR(peer_first_reads, "%u", READ_ONCE(chan->iw.reads));
LCHAN_CHAN_ATTR(cq_recovered, "%llu", READ_ONCE(chan->stats.cq_recovered));
LCHAN_CHAN_ATTR(cq_inflight, "%u", READ_ONCE(chan->ring.inflight));
LCHAN_CHAN_ATTR(send_ops, "%llu", READ_ONCE(chan->stats.send_ops));
LCHAN_CHAN_ATTR(send_bytes, "%llu", READ_ONCE(chan->stats.send_bytes));
LCHAN_CHAN_ATTR(recv_ops, "%llu", READ_ONCE(chan->stats.recv_ops));
LCHAN_CHAN_ATTR(recv_bytes, "%llu", READ_ONCE(chan->stats.recv_bytes));
LCHAN_CHAN_ATTR(errors, "%llu", READ_ONCE(chan->stats.err_cqes));
LCHAN_CHAN_ATTR(enters, "%llu", READ_ONCE(chan->stats.enters));
LCHAN_CHAN_ATTR(pid, "%d", chan->tgid);
LCHAN_CHAN_ATTR(comm, "%s", chan->comm);
LCHAN_CHAN_ATTR(kind, "%s", READ_ONCE(chan->stream) ? "stream" : "channel");
LCHAN_CHAN_ATTR(ack_timeout, "%u", READ_ONCE(chan->conn.ack_timeout));
LCHAN_CHAN_ATTR(retry_count, "%u", READ_ONCE(chan->conn.retry_count));
LCHAN_CHAN_ATTR(keepalive_ms, "%u", READ_ONCE(chan->ka.ms));
LCHAN_CHAN_ATTR(keepalive_probes, "%llu", READ_ONCE(chan->ka.probes));
LCHAN_CHAN_ATTR(mode, "%s", lchan_sysfs_mode_names[chan->mode]);
LCHAN_CHAN_ATTR(poller_ns, "%llu", READ_ONCE(chan->pool.ns));
LCHAN_CHAN_ATTR(poller, "%d", lchan_poller_index(chan));
LCHAN_CHAN_ATTR(features, "0x%llx", (unsigned long long)chan->caps.features);
LCHAN_CHAN_ATTR(kmem_bytes, "%zu", lchan_sysfs_kmem_bytes(chan));
LCHAN_CHAN_ATTR(setup, "%s", READ_ONCE(chan->conn.over_link) ? "link" : "cm");

static struct attribute *lchan_chan_attrs[] = {
	&chan_state_attr.attr,
	&chan_device_attr.attr,
	&chan_port_attr.attr,
	&chan_local_addr_attr.attr,
	&chan_local_port_attr.attr,
	&chan_remote_addr_attr.attr,
	&chan_remote_port_attr.attr,
	&chan_local_qpn_attr.attr,
	&chan_remote_qpn_attr.attr,
	&chan_sq_entries_attr.attr,
	&chan_rq_entries_attr.attr,
	&chan_cq_entries_attr.attr,
	&chan_sq_outstanding_attr.attr,
	&chan_rq_outstanding_attr.attr,
	&chan_sq_held_attr.attr,
	&chan_rq_held_attr.attr,
	&chan_sq_starved_attr.attr,
	&chan_rq_starved_attr.attr,
	&chan_open_exchange_attr.attr,
	&chan_peer_first_wait_attr.attr,
	&chan_peer_first_reads_attr.attr,
	&chan_cq_inflight_attr.attr,
	&chan_cq_recovered_attr.attr,
	&chan_send_ops_attr.attr,
	&chan_send_bytes_attr.attr,
	&chan_recv_ops_attr.attr,
	&chan_recv_bytes_attr.attr,
	&chan_errors_attr.attr,
	&chan_enters_attr.attr,
	&chan_pid_attr.attr,
	&chan_comm_attr.attr,
	&chan_kind_attr.attr,
	&chan_ack_timeout_attr.attr,
	&chan_retry_count_attr.attr,
	&chan_keepalive_ms_attr.attr,
	&chan_keepalive_probes_attr.attr,
	&chan_mode_attr.attr,
	&chan_poller_ns_attr.attr,
	&chan_poller_attr.attr,
	&chan_features_attr.attr,
	&chan_kmem_bytes_attr.attr,
	&chan_setup_attr.attr,
	NULL,
};
ATTRIBUTE_GROUPS(lchan_chan);

/* The connect pipeline's publish stage (lchan_connect.c). */
int lchan_sysfs_add_chan(struct lchan_channel *chan)
{
	int ret;

	ret = kobject_add(&chan->kobj, lchan_channels_kobj, "%u", chan->id);
	if (ret)
		return ret;
	ret = sysfs_create_groups(&chan->kobj, lchan_chan_groups);
	if (ret) {
		kobject_del(&chan->kobj);
		return ret;
	}
	chan->sysfs_added = true;
	return 0;
}

void lchan_sysfs_del_chan(struct lchan_channel *chan)
{
	if (chan->sysfs_added)
		kobject_del(&chan->kobj);
	chan->sysfs_added = false;
}

/* links/<id>/ */

static const char * const lchan_sysfs_link_states[] = {
	[LCHAN_LINK_RESOLVING] = "resolving",
	[LCHAN_LINK_CONNECTING] = "connecting",
	[LCHAN_LINK_ACCEPTING] = "accepting",
	[LCHAN_LINK_UP] = "up",
	[LCHAN_LINK_REFUSED] = "refused",
	[LCHAN_LINK_DOWN] = "down",
};

static const char *lchan_sysfs_link_state(const struct lchan_link *link)
{
	int state = READ_ONCE(link->state);

	if (state < 0 || state >= ARRAY_SIZE(lchan_sysfs_link_states) ||
	    !lchan_sysfs_link_states[state])
		return "unknown";
	return lchan_sysfs_link_states[state];
}

#define LCHAN_LINK_ATTR(_name, _fmt, _expr)				\
static ssize_t lchan_sysfs_link_##_name##_show(struct kobject *kobj,	\
					       struct kobj_attribute *attr,	\
					       char *buf)			\
{									\
	struct lchan_link *link = to_lchan_link(kobj);			\
									\
	return sysfs_emit(buf, _fmt "\n", _expr);			\
}									\
static struct kobj_attribute link_##_name##_attr =			\
	__ATTR(_name, 0444, lchan_sysfs_link_##_name##_show, NULL)

static ssize_t lchan_sysfs_link_peer_show(struct kobject *kobj,
					  struct kobj_attribute *attr, char *buf)
{
	return lchan_sysfs_show_addr(&to_lchan_link(kobj)->peer, buf);
}
static struct kobj_attribute link_peer_attr =
	__ATTR(peer, 0444, lchan_sysfs_link_peer_show, NULL);

static ssize_t lchan_sysfs_link_local_show(struct kobject *kobj,
					   struct kobj_attribute *attr, char *buf)
{
	return lchan_sysfs_show_addr(&to_lchan_link(kobj)->local, buf);
}
static struct kobj_attribute link_local_attr =
	__ATTR(local, 0444, lchan_sysfs_link_local_show, NULL);

static ssize_t lchan_sysfs_link_device_show(struct kobject *kobj,
					    struct kobj_attribute *attr, char *buf)
{
	/* Set once, counted till the link's release; the name is ours. */
	struct lchan_dev *dev = READ_ONCE(to_lchan_link(kobj)->dev);

	return sysfs_emit(buf, "%s\n", dev ? kobject_name(&dev->kobj) : "none");
}
static struct kobj_attribute link_device_attr =
	__ATTR(device, 0444, lchan_sysfs_link_device_show, NULL);

LCHAN_LINK_ATTR(port, "%u", READ_ONCE(link->port_num));
LCHAN_LINK_ATTR(role, "%s", link->active ? "active" : "passive");
LCHAN_LINK_ATTR(state, "%s", lchan_sysfs_link_state(link));
LCHAN_LINK_ATTR(version, "%u", READ_ONCE(link->version));
LCHAN_LINK_ATTR(setups_done, "%llu", READ_ONCE(link->stats.setups_done));
LCHAN_LINK_ATTR(setups_failed, "%llu", READ_ONCE(link->stats.setups_failed));
LCHAN_LINK_ATTR(refused, "%llu", READ_ONCE(link->stats.refused));
LCHAN_LINK_ATTR(stale, "%llu", READ_ONCE(link->stats.stale));
LCHAN_LINK_ATTR(rtt_us, "%u", READ_ONCE(link->rtt_us));
LCHAN_LINK_ATTR(idle_ms, "%u",
		jiffies_to_msecs(jiffies - READ_ONCE(link->used)));

static struct attribute *lchan_link_attrs[] = {
	&link_peer_attr.attr,
	&link_local_attr.attr,
	&link_device_attr.attr,
	&link_port_attr.attr,
	&link_role_attr.attr,
	&link_state_attr.attr,
	&link_version_attr.attr,
	&link_setups_done_attr.attr,
	&link_setups_failed_attr.attr,
	&link_refused_attr.attr,
	&link_stale_attr.attr,
	&link_rtt_us_attr.attr,
	&link_idle_ms_attr.attr,
	NULL,
};
ATTRIBUTE_GROUPS(lchan_link);

/* A link in the table gets its directory (lchan_link.c).  link->mutex. */
int lchan_sysfs_add_link(struct lchan_link *link)
{
	int ret;

	ret = kobject_add(&link->kobj, lchan_links_kobj, "%u", link->id);
	if (ret)
		return ret;
	ret = sysfs_create_groups(&link->kobj, lchan_link_groups);
	if (ret)
		kobject_del(&link->kobj);
	return ret;
}

void lchan_sysfs_del_link(struct lchan_link *link)
{
	kobject_del(&link->kobj);
}

int lchan_sysfs_init(void)
{
	int ret = -ENOMEM;

	lchan_root_kobj = kobject_create_and_add("lchan", kernel_kobj);
	if (!lchan_root_kobj)
		return -ENOMEM;
	lchan_devices_kobj = kobject_create_and_add("devices", lchan_root_kobj);
	if (!lchan_devices_kobj)
		goto err_put_root;
	lchan_channels_kobj = kobject_create_and_add("channels",
						     lchan_root_kobj);
	if (!lchan_channels_kobj)
		goto err_put_devices;
	lchan_links_kobj = kobject_create_and_add("links", lchan_root_kobj);
	if (!lchan_links_kobj)
		goto err_put_channels;
	ret = sysfs_create_group(lchan_root_kobj, &lchan_root_group);
	if (ret)
		goto err_put_links;
	return 0;

err_put_links:
	kobject_put(lchan_links_kobj);
err_put_channels:
	kobject_put(lchan_channels_kobj);
err_put_devices:
	kobject_put(lchan_devices_kobj);
err_put_root:
	kobject_put(lchan_root_kobj);
	return ret;
}

void lchan_sysfs_exit(void)
{
	sysfs_remove_group(lchan_root_kobj, &lchan_root_group);
	kobject_put(lchan_links_kobj);
	kobject_put(lchan_channels_kobj);
	kobject_put(lchan_devices_kobj);
	kobject_put(lchan_root_kobj);
}
