/* SPDX-License-Identifier: LGPL-2.1-or-later OR MIT */
/*
 * fi_client ADDR PORT: libfabric's API over the lchan provider, the
 * connecting side.  It connects an FI_EP_MSG endpoint to fi_server, sends
 * it 4 KiB and receives them back, every completion read from a CQ.  Exit
 * 0 only when every byte came back as it was sent.
 *
 * Where liblchan-fi.so is not in libfabric's provider directory, name its
 * directory in FI_PROVIDER_PATH.
 */
#define _POSIX_C_SOURCE 200809L	/* strdup */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>

#define EX_LEN 4096
#define EX_WAIT_MS 10000

struct ex {
	struct fi_info *info;
	struct fid_fabric *fabric;
	struct fid_eq *eq;
	struct fid_domain *domain;
	struct fid_cq *cq;
	struct fid_mr *mr;
	struct fid_ep *ep;
	char buf[2 * EX_LEN];	/* what is sent, then what comes back */
};

static int fail(const char *what, int ret)
{
	fprintf(stderr, "fi_client: %s: %s\n", what, fi_strerror(-ret));
	return 1;
}

/* The next completion into @e; a failed operation says why. */
static int reap(struct ex *x, struct fi_cq_msg_entry *e)
{
	struct fi_cq_err_entry err = { 0 };
	ssize_t n = fi_cq_sread(x->cq, e, 1, NULL, EX_WAIT_MS);

	if (n == 1)
		return 0;
	if (n != -FI_EAVAIL || fi_cq_readerr(x->cq, &err, 0) != 1)
		return fail("fi_cq_sread", n ? (int)n : -FI_ETIMEDOUT);
	fprintf(stderr, "fi_client: %s failed: %s (%s)\n",
		err.flags & FI_RECV ? "receive" : "send", fi_strerror(err.err),
		fi_cq_strerror(x->cq, err.prov_errno, err.err_data, NULL, 0));
	return 1;
}

/* Fabric, EQ, domain, CQ, memory and endpoint for x->info. */
static int ex_open(struct ex *x)
{
	struct fi_eq_attr eq_attr = { .wait_obj = FI_WAIT_UNSPEC };
	struct fi_cq_attr cq_attr = {
		.format = FI_CQ_FORMAT_MSG,
		.wait_obj = FI_WAIT_UNSPEC,	/* for fi_cq_sread */
	};
	int ret;

	ret = fi_fabric(x->info->fabric_attr, &x->fabric, NULL);
	if (!ret)
		ret = fi_eq_open(x->fabric, &eq_attr, &x->eq, NULL);
	if (!ret)
		ret = fi_domain(x->fabric, x->info, &x->domain, NULL);
	if (!ret)
		ret = fi_cq_open(x->domain, &cq_attr, &x->cq, NULL);
	/* FI_MR_LOCAL: every buffer an operation names is registered. */
	if (!ret)
		ret = fi_mr_reg(x->domain, x->buf, sizeof(x->buf),
				FI_SEND | FI_RECV, 0, 0, 0, &x->mr, NULL);
	if (!ret)
		ret = fi_endpoint(x->domain, x->info, &x->ep, NULL);
	if (!ret)
		ret = fi_ep_bind(x->ep, &x->eq->fid, 0);
	if (!ret)
		ret = fi_ep_bind(x->ep, &x->cq->fid, FI_TRANSMIT | FI_RECV);
	if (!ret)
		ret = fi_enable(x->ep);
	return ret;
}

static void ex_close(struct ex *x)
{
	struct fid *fids[] = {
		x->ep ? &x->ep->fid : NULL, x->mr ? &x->mr->fid : NULL,
		x->cq ? &x->cq->fid : NULL, x->domain ? &x->domain->fid : NULL,
		x->eq ? &x->eq->fid : NULL, x->fabric ? &x->fabric->fid : NULL,
	};

	/* Children before their parents. */
	for (size_t i = 0; i < sizeof(fids) / sizeof(fids[0]); i++)
		if (fids[i])
			fi_close(fids[i]);
	fi_freeinfo(x->info);
}

static int ex_connect(struct ex *x, const char *addr, const char *port)
{
	struct fi_info *hints = fi_allocinfo();
	struct fi_eq_err_entry err = { 0 };
	struct fi_eq_cm_entry cm;
	uint32_t event;
	ssize_t n;
	int ret;

	if (!hints)
		return fail("fi_allocinfo", -FI_ENOMEM);
	hints->ep_attr->type = FI_EP_MSG;
	hints->caps = FI_MSG;
	hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR |
				      FI_MR_ALLOCATED | FI_MR_PROV_KEY;
	hints->fabric_attr->prov_name = strdup("lchan");
	/* The destination picks the device, as rdma_cm's routing does. */
	ret = fi_getinfo(FI_VERSION(1, 9), addr, port, 0, hints, &x->info);
	fi_freeinfo(hints);
	if (ret)
		return fail("fi_getinfo, provider lchan", ret);
	ret = ex_open(x);
	if (ret)
		return fail("setting up the endpoint", ret);
	/* The receive for the echo may be posted before the connection. */
	ret = (int)fi_recv(x->ep, x->buf + EX_LEN, EX_LEN, fi_mr_desc(x->mr),
			   0, NULL);
	if (ret)
		return fail("fi_recv", ret);
	ret = fi_connect(x->ep, x->info->dest_addr, NULL, 0);
	if (ret)
		return fail("fi_connect", ret);
	n = fi_eq_sread(x->eq, &event, &cm, sizeof(cm), EX_WAIT_MS, 0);
	if (n == -FI_EAVAIL && fi_eq_readerr(x->eq, &err, 0) > 0)
		return fail("connect", -err.err);
	if (n < 0)
		return fail("waiting for the connection", (int)n);
	return event == FI_CONNECTED ? 0 : fail("connect", -FI_EOTHER);
}

int main(int argc, char **argv)
{
	struct fi_cq_msg_entry e[2];
	struct ex *x;
	int ret, i;

	if (argc != 3) {
		fprintf(stderr, "usage: fi_client ADDR PORT\n");
		return 2;
	}
	x = calloc(1, sizeof(*x));
	if (!x)
		return fail("calloc", -FI_ENOMEM);
	for (i = 0; i < EX_LEN; i++)
		x->buf[i] = (char)(i % 251);
	ret = ex_connect(x, argv[1], argv[2]);
	if (!ret) {
		ret = (int)fi_send(x->ep, x->buf, EX_LEN, fi_mr_desc(x->mr), 0,
				   NULL);
		ret = ret ? fail("fi_send", ret) : 0;
	}
	/* Two completions, the send's and the echo's, in either order. */
	if (!ret)
		ret = reap(x, &e[0]) || reap(x, &e[1]);
	if (!ret && !(e[0].flags & FI_RECV && e[0].len == EX_LEN) &&
	    !(e[1].flags & FI_RECV && e[1].len == EX_LEN))
		ret = fail("the echo", -FI_EMSGSIZE);
	if (!ret && memcmp(x->buf, x->buf + EX_LEN, EX_LEN))
		ret = fail("the echo", -FI_EIO);
	ex_close(x);
	free(x);
	if (!ret)
		printf("fi_client: 4 KiB to %s port %s over libfabric's lchan "
		       "provider came back intact\n", argv[1], argv[2]);
	return ret;
}
