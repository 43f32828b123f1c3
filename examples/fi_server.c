/* SPDX-License-Identifier: LGPL-2.1-or-later OR MIT */
/*
 * fi_server ADDR PORT: libfabric's API over the lchan provider, the
 * accepting side and the peer of fi_client.  It listens on a passive
 * endpoint, accepts one connection through its EQ, receives 4 KiB,
 * checks every byte and sends them back.  Exit 0 only when all of that
 * succeeded.
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
#define EX_ACCEPT_MS 30000

struct ex {
	struct fi_info *info;
	struct fid_fabric *fabric;
	struct fid_eq *eq;
	struct fid_pep *pep;
	struct fid_domain *domain;
	struct fid_cq *cq;
	struct fid_mr *mr;
	struct fid_ep *ep;
	char buf[EX_LEN];
};

static int fail(const char *what, int ret)
{
	fprintf(stderr, "fi_server: %s: %s\n", what, fi_strerror(-ret));
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
	fprintf(stderr, "fi_server: %s failed: %s (%s)\n",
		err.flags & FI_RECV ? "receive" : "send", fi_strerror(err.err),
		fi_cq_strerror(x->cq, err.prov_errno, err.err_data, NULL, 0));
	return 1;
}

static void ex_close(struct ex *x)
{
	struct fid *fids[] = {
		x->ep ? &x->ep->fid : NULL, x->mr ? &x->mr->fid : NULL,
		x->cq ? &x->cq->fid : NULL, x->domain ? &x->domain->fid : NULL,
		x->pep ? &x->pep->fid : NULL, x->eq ? &x->eq->fid : NULL,
		x->fabric ? &x->fabric->fid : NULL,
	};

	/* Children before their parents. */
	for (size_t i = 0; i < sizeof(fids) / sizeof(fids[0]); i++)
		if (fids[i])
			fi_close(fids[i]);
	fi_freeinfo(x->info);
}

/* A passive endpoint on ADDR PORT, its events on x->eq. */
static int ex_listen(struct ex *x, const char *addr, const char *port)
{
	struct fi_info *hints = fi_allocinfo();
	struct fi_eq_attr eq_attr = { .wait_obj = FI_WAIT_UNSPEC };
	int ret;

	if (!hints)
		return -FI_ENOMEM;
	hints->ep_attr->type = FI_EP_MSG;
	hints->caps = FI_MSG;
	hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR |
				      FI_MR_ALLOCATED | FI_MR_PROV_KEY;
	hints->fabric_attr->prov_name = strdup("lchan");
	/* FI_SOURCE: ADDR PORT is where to listen; ADDR picks the device. */
	ret = fi_getinfo(FI_VERSION(1, 9), addr, port, FI_SOURCE, hints,
			 &x->info);
	fi_freeinfo(hints);
	if (!ret)
		ret = fi_fabric(x->info->fabric_attr, &x->fabric, NULL);
	if (!ret)
		ret = fi_eq_open(x->fabric, &eq_attr, &x->eq, NULL);
	if (!ret)
		ret = fi_passive_ep(x->fabric, x->info, &x->pep, NULL);
	if (!ret)
		ret = fi_pep_bind(x->pep, &x->eq->fid, 0);
	if (!ret)
		ret = fi_listen(x->pep);
	return ret;
}

/*
 * Take the connection request, make its endpoint with a receive posted,
 * accept, and wait until the connection is up.
 */
static int ex_accept(struct ex *x)
{
	struct fi_cq_attr cq_attr = {
		.format = FI_CQ_FORMAT_MSG,
		.wait_obj = FI_WAIT_UNSPEC,	/* for fi_cq_sread */
	};
	struct fi_eq_cm_entry cm;
	uint32_t event;
	ssize_t n;
	int ret;

	n = fi_eq_sread(x->eq, &event, &cm, sizeof(cm), EX_ACCEPT_MS, 0);
	if (n < 0)
		return fail("waiting for a connection request", (int)n);
	if (event != FI_CONNREQ)
		return fail("waiting for a connection request", -FI_EOTHER);
	/* The request's info names the device it came in on. */
	ret = fi_domain(x->fabric, cm.info, &x->domain, NULL);
	if (!ret)
		ret = fi_cq_open(x->domain, &cq_attr, &x->cq, NULL);
	if (!ret)
		ret = fi_mr_reg(x->domain, x->buf, sizeof(x->buf), FI_SEND |
				FI_RECV, 0, 0, 0, &x->mr, NULL);
	if (!ret)
		ret = fi_endpoint(x->domain, cm.info, &x->ep, NULL);
	fi_freeinfo(cm.info);
	if (!ret)
		ret = fi_ep_bind(x->ep, &x->eq->fid, 0);
	if (!ret)
		ret = fi_ep_bind(x->ep, &x->cq->fid, FI_TRANSMIT | FI_RECV);
	if (!ret)
		ret = fi_enable(x->ep);
	if (ret)
		return fail("setting up the endpoint", ret);
	/* Before fi_accept: the client may send as soon as it is connected. */
	ret = (int)fi_recv(x->ep, x->buf, EX_LEN, fi_mr_desc(x->mr), 0, NULL);
	if (!ret)
		ret = fi_accept(x->ep, NULL, 0);
	if (ret)
		return fail("fi_recv, fi_accept", ret);
	n = fi_eq_sread(x->eq, &event, &cm, sizeof(cm), EX_WAIT_MS, 0);
	if (n < 0)
		return fail("waiting for the connection", (int)n);
	return event == FI_CONNECTED ? 0 : fail("accept", -FI_EOTHER);
}

int main(int argc, char **argv)
{
	struct fi_cq_msg_entry e;
	struct ex *x;
	int ret, i;

	if (argc != 3) {
		fprintf(stderr, "usage: fi_server ADDR PORT\n");
		return 2;
	}
	x = calloc(1, sizeof(*x));
	if (!x)
		return fail("calloc", -FI_ENOMEM);
	ret = ex_listen(x, argv[1], argv[2]);
	ret = ret ? fail("listening, provider lchan", ret) : ex_accept(x);
	if (!ret)
		ret = reap(x, &e);
	if (!ret && (!(e.flags & FI_RECV) || e.len != EX_LEN))
		ret = fail("the client's message", -FI_EMSGSIZE);
	for (i = 0; !ret && i < EX_LEN; i++)
		if (x->buf[i] != (char)(i % 251))
			ret = fail("the client's message", -FI_EIO);
	if (!ret) {
		ret = (int)fi_send(x->ep, x->buf, EX_LEN, fi_mr_desc(x->mr), 0,
				   NULL);
		ret = ret ? fail("fi_send", ret) : reap(x, &e);
	}
	ex_close(x);
	free(x);
	if (!ret)
		printf("fi_server: 4 KiB received over libfabric's lchan "
		       "provider, every byte checked, and sent back\n");
	return ret;
}
