// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * The RDMA devices lchan serves (/sys/kernel/lchan/devices), the netdev of
 * each (RDMA netlink, as `rdma link` shows it) and that netdev's addresses,
 * so that an address names a device the way rdma_cm routes it.
 */
#include <dirent.h>
#include <errno.h>
#include <ifaddrs.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <linux/netlink.h>
#include <rdma/rdma_netlink.h>

#include "lfi.h"

#define LFI_SYSFS_DEVICES "/sys/kernel/lchan/devices"

static int lfi_dev_read_line(const char *dev, const char *attr, char *buf,
			     size_t len)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), LFI_SYSFS_DEVICES "/%s/%s", dev, attr);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	if (!fgets(buf, (int)len, f)) {
		fclose(f);
		return -EIO;
	}
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

/* One RDMA netlink request; calls @cb on every attribute of each answer. */
static int lfi_dev_nl(int sk, uint16_t op, bool dump, uint32_t dev_index,
		      void (*cb)(struct nlattr *a, void *arg), void *arg)
{
	struct {
		struct nlmsghdr h;
		char attrs[32];
	} req;
	char buf[16384];
	struct nlattr *a;
	size_t len;
	ssize_t n;

	memset(&req, 0, sizeof(req));
	len = NLMSG_LENGTH(0);
	if (!dump) {
		uint32_t vals[2] = { dev_index, 1 };
		uint16_t types[2] = { RDMA_NLDEV_ATTR_DEV_INDEX,
				      RDMA_NLDEV_ATTR_PORT_INDEX };
		int i;

		for (i = 0; i < 2; i++) {
			a = (struct nlattr *)((char *)&req + len);
			a->nla_type = types[i];
			a->nla_len = NLA_HDRLEN + sizeof(uint32_t);
			memcpy((char *)a + NLA_HDRLEN, &vals[i], sizeof(uint32_t));
			len += NLA_ALIGN(a->nla_len);
		}
	}
	req.h.nlmsg_len = (uint32_t)len;
	req.h.nlmsg_type = RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, op);
	req.h.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | (dump ? NLM_F_DUMP : 0);
	req.h.nlmsg_seq = 1;
	if (send(sk, &req, len, 0) < 0)
		return -errno;
	for (;;) {
		struct nlmsghdr *h;

		n = recv(sk, buf, sizeof(buf), 0);
		if (n < 0)
			return -errno;
		for (h = (struct nlmsghdr *)buf; NLMSG_OK(h, (size_t)n);
		     h = NLMSG_NEXT(h, n)) {
			size_t rem;

			if (h->nlmsg_type == NLMSG_DONE)
				return 0;
			if (h->nlmsg_type == NLMSG_ERROR) {
				struct nlmsgerr *e = NLMSG_DATA(h);

				return e->error;
			}
			rem = h->nlmsg_len - NLMSG_HDRLEN;
			a = NLMSG_DATA(h);
			while (rem >= NLA_HDRLEN && a->nla_len >= NLA_HDRLEN &&
			       a->nla_len <= rem) {
				size_t step = NLA_ALIGN(a->nla_len);

				cb(a, arg);
				if (step >= rem)
					break;
				rem -= step;
				a = (struct nlattr *)((char *)a + step);
			}
		}
	}
}

struct lfi_dev_nl_dev {
	uint32_t index[LFI_MAX_DEVS];
	char name[LFI_MAX_DEVS][64];
	int n;
	uint32_t cur_index;
};

static void lfi_dev_nl_dev_cb(struct nlattr *a, void *arg)
{
	struct lfi_dev_nl_dev *d = arg;
	const char *p = (const char *)a + NLA_HDRLEN;
	size_t plen = a->nla_len - NLA_HDRLEN;

	if (a->nla_type == RDMA_NLDEV_ATTR_DEV_INDEX && plen >= 4) {
		memcpy(&d->cur_index, p, 4);
	} else if (a->nla_type == RDMA_NLDEV_ATTR_DEV_NAME && d->n < LFI_MAX_DEVS) {
		d->index[d->n] = d->cur_index;
		snprintf(d->name[d->n], sizeof(d->name[0]), "%.*s", (int)plen, p);
		d->n++;
	}
}

static void lfi_dev_nl_port_cb(struct nlattr *a, void *arg)
{
	char *netdev = arg;
	size_t plen = a->nla_len - NLA_HDRLEN;

	if (a->nla_type == RDMA_NLDEV_ATTR_NDEV_NAME)
		snprintf(netdev, IF_NAMESIZE, "%.*s", (int)plen,
			 (const char *)a + NLA_HDRLEN);
}

static void lfi_dev_add_addrs(struct lfi_dev *dev, struct ifaddrs *ifa)
{
	for (; ifa; ifa = ifa->ifa_next) {
		if (!ifa->ifa_addr || strcmp(ifa->ifa_name, dev->netdev))
			continue;
		if (ifa->ifa_addr->sa_family != AF_INET &&
		    ifa->ifa_addr->sa_family != AF_INET6)
			continue;
		if ((size_t)dev->naddrs >= sizeof(dev->addrs) / sizeof(dev->addrs[0]))
			return;
		memcpy(&dev->addrs[dev->naddrs++], ifa->ifa_addr,
		       lfi_addr_len(ifa->ifa_addr));
	}
}

void lfi_dev_open_failed(int err)
{
	/* No node (ENOENT), or a node without its driver (ENODEV, ENXIO). */
	if (err == -ENOENT || err == -ENODEV || err == -ENXIO)
		LFI_WARN(FI_LOG_FABRIC, "%s: no such device: is the lchan module loaded? (modprobe lchan)\n",
			 LCHAN_DEVICE_PATH);
	else
		LFI_WARN(FI_LOG_FABRIC, "%s: %s\n", LCHAN_DEVICE_PATH,
			 strerror(-err));
}

/* Append ", NAME (WHY)" to @buf, the list of devices left out. */
static void lfi_dev_left_out(char *buf, size_t len, const char *name,
			     const char *why)
{
	size_t used = strlen(buf);

	LFI_INFO(FI_LOG_FABRIC, "%s: left out: %s\n", name, why);
	if (used < len)
		snprintf(buf + used, len - used, "%s%s (%s)", used ? ", " : "",
			 name, why);
}

/*
 * Fill @devs with the devices lchan serves that have a netdev; returns
 * how many.  With none, why is logged as a warning: lchan not loaded, no
 * RDMA device, or what each device lacks.
 */
int lfi_dev_scan(struct lfi_dev *devs, int max)
{
	struct lfi_dev_nl_dev nl = { .n = 0 };
	struct ifaddrs *ifa = NULL;
	char transport[32], left_out[256] = "";
	int sk, i, n = 0, ret;

	if (access(LCHAN_DEVICE_PATH, F_OK)) {
		lfi_dev_open_failed(-errno);
		return 0;
	}
	sk = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_RDMA);
	if (sk < 0) {
		LFI_WARN(FI_LOG_FABRIC, "RDMA netlink socket: %s\n",
			 strerror(errno));
		return 0;
	}
	ret = lfi_dev_nl(sk, RDMA_NLDEV_CMD_GET, true, 0, lfi_dev_nl_dev_cb, &nl);
	if (ret) {
		LFI_WARN(FI_LOG_FABRIC, "RDMA netlink, the list of devices: %s\n",
			 strerror(-ret));
		nl.n = 0;
	} else if (!nl.n) {
		LFI_WARN(FI_LOG_FABRIC, "no RDMA device: lchan needs one (rdma link show lists none; soft-RoCE: rdma link add rxe0 type rxe netdev NETDEV)\n");
	}
	if (getifaddrs(&ifa))
		ifa = NULL;
	for (i = 0; i < nl.n && n < max; i++) {
		struct lfi_dev *dev = &devs[n];

		memset(dev, 0, sizeof(*dev));
		if (lfi_dev_read_line(nl.name[i], "transport", transport,
				      sizeof(transport))) {
			/* not (yet) lchan's */
			lfi_dev_left_out(left_out, sizeof(left_out), nl.name[i],
					 "not in " LFI_SYSFS_DEVICES);
			continue;
		}
		snprintf(dev->name, sizeof(dev->name), "%s", nl.name[i]);
		dev->iwarp = !strcmp(transport, "iWARP");
		if (lfi_dev_nl(sk, RDMA_NLDEV_CMD_PORT_GET, false, nl.index[i],
			       lfi_dev_nl_port_cb, dev->netdev) ||
		    !dev->netdev[0]) {
			lfi_dev_left_out(left_out, sizeof(left_out), nl.name[i],
					 "no network device to address it by IP");
			continue;
		}
		lfi_dev_add_addrs(dev, ifa);
		n++;
	}
	if (!n && nl.n)
		LFI_WARN(FI_LOG_FABRIC, "no RDMA device lchan can use: %s\n",
			 left_out);
	if (ifa)
		freeifaddrs(ifa);
	close(sk);
	return n;
}

static bool lfi_dev_same_ip(const struct sockaddr *a, const struct sockaddr *b)
{
	if (a->sa_family != b->sa_family)
		return false;
	if (a->sa_family == AF_INET)
		return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
		       ((const struct sockaddr_in *)b)->sin_addr.s_addr;
	return !memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
		       &((const struct sockaddr_in6 *)b)->sin6_addr, 16);
}

/* The device whose netdev holds the IP of @sa, or NULL. */
const struct lfi_dev *lfi_dev_by_ip(const struct lfi_dev *devs, int n,
				    const struct sockaddr *sa)
{
	int i, j;

	for (i = 0; i < n; i++)
		for (j = 0; j < devs[i].naddrs; j++)
			if (lfi_dev_same_ip((const struct sockaddr *)
					    &devs[i].addrs[j], sa))
				return &devs[i];
	return NULL;
}

/* The source address the kernel's routing picks for @dst (port 0). */
int lfi_dev_route(const struct sockaddr *dst, struct sockaddr_storage *src)
{
	socklen_t len = sizeof(*src);
	struct sockaddr_storage to;
	int s, ret = 0;

	/* A datagram socket connects to port 0 no better than to any. */
	memcpy(&to, dst, lfi_addr_len(dst));
	if (to.ss_family == AF_INET)
		((struct sockaddr_in *)&to)->sin_port = htons(9);
	else
		((struct sockaddr_in6 *)&to)->sin6_port = htons(9);
	s = socket(dst->sa_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return -errno;
	if (connect(s, (struct sockaddr *)&to, (socklen_t)lfi_addr_len(dst)) ||
	    getsockname(s, (struct sockaddr *)src, &len))
		ret = -errno;
	close(s);
	if (!ret) {
		if (src->ss_family == AF_INET)
			((struct sockaddr_in *)src)->sin_port = 0;
		else
			((struct sockaddr_in6 *)src)->sin6_port = 0;
	}
	return ret;
}
