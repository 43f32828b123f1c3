// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * The provider entry point (fi_prov_ini), its parameters and fi_getinfo:
 * one fi_info per RDMA device lchan serves, with what that device can do
 * (iWARP carries no immediate data, so no FI_REMOTE_CQ_DATA there).
 * Remote CQ data consumes a posted receive at the target, an RDMA write's
 * too: it is offered only to applications that post one (FI_RX_CQ_DATA).
 */
#include <errno.h>
#include <netdb.h>
#include <stdlib.h>
#include <string.h>

#include "lfi.h"

#define LFI_TX_CAPS	(FI_MSG | FI_RMA | FI_SEND | FI_READ | FI_WRITE)
#define LFI_RX_CAPS	(FI_MSG | FI_RMA | FI_RECV | FI_REMOTE_READ | \
			 FI_REMOTE_WRITE)
#define LFI_CAPS	(LFI_TX_CAPS | LFI_RX_CAPS | FI_LOCAL_COMM | \
			 FI_REMOTE_COMM)
#define LFI_MR_MODE	(FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | \
			 FI_MR_PROV_KEY)
#define LFI_MSG_ORDER	(FI_ORDER_SAS | FI_ORDER_RAR | FI_ORDER_RAW | \
			 FI_ORDER_WAR | FI_ORDER_WAW | FI_ORDER_WAS | \
			 FI_ORDER_SAW | FI_ORDER_SAR | FI_ORDER_RAS)

static void lfi_info_cleanup(void)
{
}

struct fi_provider lfi_prov = {
	.name = LFI_PROV_NAME,
	.version = LFI_VERSION,
	.fi_version = FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION),
	.getinfo = lfi_info_get,
	.fabric = lfi_fabric_open,
	.cleanup = lfi_info_cleanup,
};

FI_EXT_INI
{
	fi_param_define(&lfi_prov, "poller", FI_PARAM_BOOL,
			"Submit through a kernel thread that polls the rings "
			"(lchan's poller mode) instead of one system call per "
			"batch (doorbell mode, the default)");
	fi_param_define(&lfi_prov, "direct", FI_PARAM_BOOL,
			"InfiniBand and RoCE: direct polling, the device's "
			"completions taken in the reads of a CQ (one system "
			"call each) with no interrupt or hand-off; for "
			"programs that busy-poll fi_cq_read (default off)");
	fi_param_define(&lfi_prov, "poller_idle_ms", FI_PARAM_INT,
			"Poller mode: milliseconds without work before the "
			"thread sleeps (default 1000)");
	fi_param_define(&lfi_prov, "connect_timeout_ms", FI_PARAM_INT,
			"Milliseconds fi_connect may take to resolve the "
			"peer, and an EQ read waits for a connecting peer's "
			"first message (default 30000)");
	fi_param_define(&lfi_prov, "device", FI_PARAM_STRING,
			"Offer only this RDMA device (default: every device); "
			"for programs that take the first entry fi_getinfo "
			"returns and cannot name a domain");
	return &lfi_prov;
}

static int lfi_info_parse(const char *node, const char *service,
			  struct sockaddr_storage *ss)
{
	struct addrinfo hints = {
		.ai_socktype = SOCK_STREAM,
		.ai_flags = AI_NUMERICSERV | (node ? 0 : AI_PASSIVE),
	};
	struct addrinfo *res;
	int ret;

	ret = getaddrinfo(node, service ? service : "0", &hints, &res);
	if (ret) {
		LFI_WARN(FI_LOG_FABRIC, "node %s service %s: %s\n",
			 node ? node : "(none)", service ? service : "(none)",
			 gai_strerror(ret));
		return -FI_ENODATA;
	}
	if (res->ai_addrlen > sizeof(*ss) ||
	    (res->ai_family != AF_INET && res->ai_family != AF_INET6)) {
		LFI_WARN(FI_LOG_FABRIC, "node %s: not an IPv4 or IPv6 address\n",
			 node ? node : "(none)");
		freeaddrinfo(res);
		return -FI_ENODATA;
	}
	memset(ss, 0, sizeof(*ss));
	memcpy(ss, res->ai_addr, res->ai_addrlen);
	freeaddrinfo(res);
	return 0;
}

static uint16_t lfi_info_port(const struct sockaddr_storage *ss)
{
	return ss->ss_family == AF_INET ?
	       ((const struct sockaddr_in *)ss)->sin_port :
	       ((const struct sockaddr_in6 *)ss)->sin6_port;
}

static void lfi_info_set_port(struct sockaddr_storage *ss, uint16_t port)
{
	if (ss->ss_family == AF_INET)
		((struct sockaddr_in *)ss)->sin_port = port;
	else
		((struct sockaddr_in6 *)ss)->sin6_port = port;
}

static bool lfi_info_dev_ok(const struct lfi_dev *dev,
			    const struct fi_info *hints)
{
	const struct fi_domain_attr *d = hints ? hints->domain_attr : NULL;
	const struct fi_fabric_attr *f = hints ? hints->fabric_attr : NULL;
	char *only = NULL;

	if (d && d->name && strcmp(d->name, dev->name))
		return false;
	if (fi_param_get_str(&lfi_prov, "device", &only) == FI_SUCCESS &&
	    only && *only && strcmp(only, dev->name))
		return false;
	if (f && f->name && strcmp(f->name, LFI_FABRIC_NAME))
		return false;
	return true;
}

/*
 * Does the application post a receive for each transfer carrying remote
 * CQ data (FI_RX_CQ_DATA)?  Without hints it supports every mode.
 */
static bool lfi_info_rx_cq_data(const struct fi_info *hints)
{
	if (!hints)
		return true;
	return (hints->mode & FI_RX_CQ_DATA) ||
	       (hints->rx_attr && (hints->rx_attr->mode & FI_RX_CQ_DATA));
}

/*
 * Resource management: full transmit and receive queues answer
 * -FI_EAGAIN, a CQ grows rather than overflow, and on IB and RoCE a
 * message that finds no receive posted is retried without bound
 * (lchan's RNR retry).  iWARP has no such retry: the sender's message
 * ends the connection.
 */
static bool lfi_info_rm(bool iwarp)
{
	return !iwarp;
}

/* What the hints ask for that lchan cannot give; false: skip. */
static bool lfi_info_hints_ok(uint32_t version, const struct fi_info *hints,
			      bool iwarp)
{
	const struct fi_domain_attr *d;
	int mr_mode;

	if (!hints)
		return true;
	if (hints->caps & ~LFI_CAPS)
		return false;
	if (hints->ep_attr) {
		if (hints->ep_attr->type != FI_EP_UNSPEC &&
		    hints->ep_attr->type != FI_EP_MSG)
			return false;
		if (hints->ep_attr->max_msg_size > LFI_MAX_MSG_SIZE)
			return false;
		if (hints->ep_attr->protocol != FI_PROTO_UNSPEC &&
		    hints->ep_attr->protocol != (iwarp ? FI_PROTO_IWARP :
						 FI_PROTO_RDMA_CM_IB_RC))
			return false;
		/* One context each way, neither shared (FI_SHARED_CONTEXT). */
		if (hints->ep_attr->tx_ctx_cnt > 1 ||
		    hints->ep_attr->rx_ctx_cnt > 1)
			return false;
	}
	if (hints->addr_format != FI_FORMAT_UNSPEC &&
	    hints->addr_format != FI_SOCKADDR &&
	    hints->addr_format != FI_SOCKADDR_IN &&
	    hints->addr_format != FI_SOCKADDR_IN6)
		return false;
	if (hints->tx_attr) {
		if (hints->tx_attr->caps & ~LFI_TX_CAPS & ~(FI_LOCAL_COMM | FI_REMOTE_COMM))
			return false;
		if (hints->tx_attr->size > LFI_MAX_QUEUE - 1 ||
		    hints->tx_attr->iov_limit > LFI_IOV_LIMIT ||
		    hints->tx_attr->rma_iov_limit > LFI_RMA_IOV_LIMIT ||
		    hints->tx_attr->inject_size > LFI_INJECT_SIZE)
			return false;
	}
	if (hints->rx_attr) {
		if (hints->rx_attr->caps & ~LFI_RX_CAPS & ~(FI_LOCAL_COMM | FI_REMOTE_COMM))
			return false;
		if (hints->rx_attr->size > LFI_MAX_QUEUE - 1 ||
		    hints->rx_attr->iov_limit > LFI_IOV_LIMIT)
			return false;
	}
	d = hints->domain_attr;
	if (!d)
		return true;
	if (d->cq_data_size >
	    (iwarp || !lfi_info_rx_cq_data(hints) ? 0u : 4u))
		return false;
	if (d->av_type != FI_AV_UNSPEC)
		return false;
	if (d->max_ep_tx_ctx > 1 || d->max_ep_rx_ctx > 1 ||
	    d->max_ep_stx_ctx || d->max_ep_srx_ctx)
		return false;
	if (d->resource_mgmt == FI_RM_ENABLED && !lfi_info_rm(iwarp))
		return false;
	/* Registration: the application must register local buffers. */
	mr_mode = d->mr_mode;
	if (FI_VERSION_GE(version, FI_VERSION(1, 5))) {
		if (mr_mode & (FI_MR_BASIC | FI_MR_SCALABLE)) {
			if (mr_mode != FI_MR_BASIC)
				return false;
			if (!(hints->mode & FI_LOCAL_MR))
				return false;
		} else if (mr_mode != FI_MR_UNSPEC &&
			   (mr_mode & LFI_MR_MODE) != LFI_MR_MODE) {
			return false;
		}
	} else if (mr_mode == FI_MR_SCALABLE || !(hints->mode & FI_LOCAL_MR)) {
		return false;
	}
	return true;
}

static struct fi_info *lfi_info_make(const struct lfi_dev *dev,
				     const struct fi_info *hints,
				     const struct sockaddr_storage *src,
				     const struct sockaddr_storage *dst)
{
	bool cq_data = !dev->iwarp && lfi_info_rx_cq_data(hints);
	struct fi_info *fi;

	fi = fi_allocinfo();
	if (!fi)
		return NULL;
	fi->caps = hints && hints->caps ? hints->caps & LFI_CAPS : LFI_CAPS;
	fi->mode = 0;
	fi->addr_format = src->ss_family == AF_INET6 ? FI_SOCKADDR_IN6 :
			  FI_SOCKADDR_IN;
	fi->src_addrlen = lfi_addr_len((const struct sockaddr *)src);
	fi->src_addr = malloc(fi->src_addrlen);
	if (!fi->src_addr)
		goto err;
	memcpy(fi->src_addr, src, fi->src_addrlen);
	if (dst) {
		fi->dest_addrlen = lfi_addr_len((const struct sockaddr *)dst);
		fi->dest_addr = malloc(fi->dest_addrlen);
		if (!fi->dest_addr)
			goto err;
		memcpy(fi->dest_addr, dst, fi->dest_addrlen);
	}

	fi->tx_attr->caps = LFI_TX_CAPS & (fi->caps | FI_SEND | FI_READ | FI_WRITE);
	fi->tx_attr->op_flags = hints && hints->tx_attr ?
				hints->tx_attr->op_flags : 0;
	fi->tx_attr->msg_order = LFI_MSG_ORDER;
	fi->tx_attr->comp_order = FI_ORDER_NONE;
	fi->tx_attr->inject_size = LFI_INJECT_SIZE;
	fi->tx_attr->size = hints && hints->tx_attr && hints->tx_attr->size ?
			    hints->tx_attr->size : LFI_DEF_QUEUE;
	fi->tx_attr->iov_limit = LFI_IOV_LIMIT;
	fi->tx_attr->rma_iov_limit = LFI_RMA_IOV_LIMIT;

	fi->rx_attr->caps = LFI_RX_CAPS & (fi->caps | FI_RECV | FI_REMOTE_READ |
					   FI_REMOTE_WRITE);
	fi->rx_attr->op_flags = hints && hints->rx_attr ?
				hints->rx_attr->op_flags : 0;
	fi->rx_attr->msg_order = LFI_MSG_ORDER;
	fi->rx_attr->comp_order = FI_ORDER_NONE;
	fi->rx_attr->size = hints && hints->rx_attr && hints->rx_attr->size ?
			    hints->rx_attr->size : LFI_DEF_QUEUE;
	fi->rx_attr->iov_limit = LFI_IOV_LIMIT;
	if (cq_data) {
		fi->rx_attr->mode |= FI_RX_CQ_DATA;
		if (!hints || (hints->mode & FI_RX_CQ_DATA))
			fi->mode |= FI_RX_CQ_DATA;
	}

	fi->ep_attr->type = FI_EP_MSG;
	fi->ep_attr->protocol = dev->iwarp ? FI_PROTO_IWARP :
			       FI_PROTO_RDMA_CM_IB_RC;
	fi->ep_attr->protocol_version = 1;
	fi->ep_attr->max_msg_size = LFI_MAX_MSG_SIZE;
	fi->ep_attr->tx_ctx_cnt = 1;
	fi->ep_attr->rx_ctx_cnt = 1;
	fi->ep_attr->max_order_raw_size = LFI_MAX_MSG_SIZE;
	fi->ep_attr->max_order_war_size = LFI_MAX_MSG_SIZE;
	fi->ep_attr->max_order_waw_size = LFI_MAX_MSG_SIZE;

	fi->domain_attr->name = strdup(dev->name);
	if (!fi->domain_attr->name)
		goto err;
	fi->domain_attr->threading = FI_THREAD_SAFE;
	fi->domain_attr->control_progress = FI_PROGRESS_MANUAL;
	fi->domain_attr->data_progress = FI_PROGRESS_AUTO;
	fi->domain_attr->resource_mgmt = lfi_info_rm(dev->iwarp) &&
		(!hints || !hints->domain_attr ||
		 hints->domain_attr->resource_mgmt != FI_RM_DISABLED) ?
		FI_RM_ENABLED : FI_RM_DISABLED;
	fi->domain_attr->av_type = FI_AV_UNSPEC;
	fi->domain_attr->mr_mode = LFI_MR_MODE;
	if (hints && hints->domain_attr &&
	    (hints->domain_attr->mr_mode & FI_MR_BASIC))
		fi->domain_attr->mr_mode = FI_MR_BASIC;
	fi->domain_attr->mr_key_size = sizeof(uint32_t);
	fi->domain_attr->cq_data_size = cq_data ? sizeof(uint32_t) : 0;
	fi->domain_attr->cq_cnt = 1024;
	fi->domain_attr->ep_cnt = 1024;
	fi->domain_attr->tx_ctx_cnt = 1024;
	fi->domain_attr->rx_ctx_cnt = 1024;
	fi->domain_attr->max_ep_tx_ctx = 1;
	fi->domain_attr->max_ep_rx_ctx = 1;
	fi->domain_attr->mr_iov_limit = 1;
	fi->domain_attr->mr_cnt = 65536;
	fi->domain_attr->caps = FI_LOCAL_COMM | FI_REMOTE_COMM;
	if (hints && hints->mode & FI_LOCAL_MR)
		fi->mode |= FI_LOCAL_MR;

	fi->fabric_attr->name = strdup(LFI_FABRIC_NAME);
	if (!fi->fabric_attr->name)
		goto err;
	return fi;

err:
	fi_freeinfo(fi);
	return NULL;
}

static const struct sockaddr_storage *
lfi_info_dev_addr(const struct lfi_dev *dev, const struct fi_info *hints)
{
	int want = hints && hints->addr_format == FI_SOCKADDR_IN6 ? AF_INET6 :
		   AF_INET;
	int i;

	for (i = 0; i < dev->naddrs; i++)
		if (dev->addrs[i].ss_family == want)
			return &dev->addrs[i];
	return dev->naddrs ? &dev->addrs[0] : NULL;
}

int lfi_info_get(uint32_t version, const char *node, const char *service,
		 uint64_t flags, const struct fi_info *hints,
		 struct fi_info **info)
{
	struct lfi_dev devs[LFI_MAX_DEVS];
	struct sockaddr_storage src, dst, routed;
	bool have_src = false, have_dst = false;
	struct fi_info *head = NULL, **tail = &head;
	struct lfi_pep *pep;
	uint16_t src_port = 0;
	int ndevs, i, ret;

	if (node || (service && (flags & FI_SOURCE))) {
		ret = lfi_info_parse(node, service, node ? &dst : &src);
		if (ret)
			return ret;
		if (flags & FI_SOURCE) {
			if (node)
				src = dst;
			have_src = true;
			src_port = lfi_info_port(&src);
		} else {
			have_dst = true;
		}
	}
	if (!have_src && hints && hints->src_addr &&
	    hints->src_addrlen <= sizeof(src) &&
	    lfi_addr_len(hints->src_addr) == hints->src_addrlen) {
		memcpy(&src, hints->src_addr, hints->src_addrlen);
		have_src = true;
		src_port = lfi_info_port(&src);
	}
	/* An endpoint opened with a passive one as handle takes its address. */
	pep = hints ? lfi_pep_from_fid(hints->handle) : NULL;
	if (!have_src && pep) {
		pthread_mutex_lock(&pep->fabric->lock);
		have_src = lfi_pep_name(pep, &src) &&
			   !lfi_addr_is_any((struct sockaddr *)&src);
		pthread_mutex_unlock(&pep->fabric->lock);
		if (have_src)
			src_port = lfi_info_port(&src);
	}
	if (!have_dst && hints && hints->dest_addr &&
	    hints->dest_addrlen <= sizeof(dst) &&
	    lfi_addr_len(hints->dest_addr) == hints->dest_addrlen) {
		memcpy(&dst, hints->dest_addr, hints->dest_addrlen);
		have_dst = true;
	}
	if (have_dst && !have_src) {
		ret = lfi_dev_route((const struct sockaddr *)&dst, &routed);
		if (ret) {
			LFI_WARN(FI_LOG_FABRIC, "no route to the destination: %s\n",
				 strerror(-ret));
			return -FI_ENODATA;
		}
	}

	ndevs = lfi_dev_scan(devs, LFI_MAX_DEVS);
	for (i = 0; i < ndevs; i++) {
		const struct lfi_dev *dev = &devs[i];
		const struct sockaddr_storage *a;
		struct sockaddr_storage s;
		struct fi_info *fi;

		/* The caller asks for something else: not a warning. */
		if (!lfi_info_dev_ok(dev, hints)) {
			LFI_INFO(FI_LOG_FABRIC, "%s: not the fabric, domain or FI_LCHAN_DEVICE asked for\n",
				 dev->name);
			continue;
		}
		if (!lfi_info_hints_ok(version, hints, dev->iwarp)) {
			LFI_INFO(FI_LOG_FABRIC, "%s: the hints ask for what it cannot do\n",
				 dev->name);
			continue;
		}
		if (have_src && !lfi_addr_is_any((struct sockaddr *)&src)) {
			if (lfi_dev_by_ip(dev, 1, (struct sockaddr *)&src) != dev) {
				LFI_INFO(FI_LOG_FABRIC, "%s: the source address is not on %s\n",
					 dev->name, dev->netdev);
				continue;
			}
			s = src;
		} else if (have_dst) {
			if (lfi_dev_by_ip(dev, 1, (struct sockaddr *)&routed) != dev) {
				LFI_INFO(FI_LOG_FABRIC, "%s: the destination is not routed through %s\n",
					 dev->name, dev->netdev);
				continue;
			}
			s = routed;
		} else {
			a = lfi_info_dev_addr(dev, hints);
			if (!a) {
				LFI_INFO(FI_LOG_FABRIC, "%s: %s has no IP address\n",
					 dev->name, dev->netdev);
				continue;
			}
			s = *a;
			lfi_info_set_port(&s, src_port);
		}
		fi = lfi_info_make(dev, hints, &s, have_dst ? &dst : NULL);
		if (!fi) {
			fi_freeinfo(head);
			return -FI_ENOMEM;
		}
		/* fi_getinfo(3): a passive endpoint as handle is copied. */
		if (hints && hints->handle &&
		    hints->handle->fclass == FI_CLASS_PEP)
			fi->handle = hints->handle;
		*tail = fi;
		tail = &fi->next;
	}
	*info = head;
	return head ? 0 : -FI_ENODATA;
}
