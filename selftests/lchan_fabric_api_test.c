// SPDX-License-Identifier: GPL-2.0
/*
 * The lchan libfabric provider through libfabric's API, two processes
 * (the server a child): connection data both ways, FI_RMA write and read
 * checked byte for byte, completions waited for with fi_cq_sread on the
 * CQ's FI_WAIT_FD object, remote CQ data refused on iWARP, a write with a
 * wrong key answered by an error completion, FI_SHUTDOWN when the peer
 * closes, and fi_reject's data reaching the connecting side.  SKIPs
 * without the provider (LCHAN_FABRIC) or lchan.
 */
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

#include "kselftest_harness.h"
#include "lchan_test.h"

#define FA_T_BUF	65536
#define FA_T_WAIT_MS	20000

FIXTURE(fapi) {
	struct lchan_t_dev d;
};

LCHAN_T_VARIANTS(fapi);

FIXTURE_SETUP(fapi)
{
	const char *dir = getenv("LCHAN_FABRIC");
	char so[300];

	LCHAN_T_NEED_DEV(&self->d, variant->kind);
	if (!dir || !*dir)
		SKIP(return, "LCHAN_FABRIC does not name the provider's directory");
	snprintf(so, sizeof(so), "%s/liblchan-fi.so", dir);
	if (access(so, R_OK))
		SKIP(return, "no %s", so);
	if (!lchan_t_module_loaded())
		SKIP(return, "lchan not loaded");
	/* Before the first libfabric call: it reads the path once. */
	setenv("FI_PROVIDER_PATH", dir, 1);
}

FIXTURE_TEARDOWN(fapi)
{
}

/* One side's objects. */
struct fa_side {
	struct fi_info *info;
	struct fid_fabric *fabric;
	struct fid_eq *eq;
	struct fid_domain *domain;
	struct fid_pep *pep;
	struct fid_ep *ep;
	struct fid_cq *cq;
	struct fid_mr *mr;
	char *buf;
};

/* What the server tells the client through the pipe. */
struct fa_remote {
	uint64_t addr;
	uint64_t key;
};

static struct fi_info *fa_hints(const char *dev)
{
	struct fi_info *h = fi_allocinfo();

	if (!h)
		return NULL;
	h->ep_attr->type = FI_EP_MSG;
	h->caps = FI_MSG | FI_RMA;
	h->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR |
				  FI_MR_ALLOCATED | FI_MR_PROV_KEY;
	h->domain_attr->name = strdup(dev);
	h->fabric_attr->prov_name = strdup("lchan");
	h->addr_format = FI_SOCKADDR_IN;
	return h;
}

/* Fabric, EQ and (for an active side) the domain, CQ and region. */
static int fa_open(struct fa_side *s, bool active)
{
	struct fi_eq_attr eq_attr = { .wait_obj = FI_WAIT_UNSPEC };
	struct fi_cq_attr cq_attr = {
		.format = FI_CQ_FORMAT_DATA,
		.wait_obj = FI_WAIT_FD,
		.size = 64,
	};
	int ret;

	ret = fi_fabric(s->info->fabric_attr, &s->fabric, NULL);
	if (!ret)
		ret = fi_eq_open(s->fabric, &eq_attr, &s->eq, NULL);
	if (ret || !active)
		return ret;
	ret = fi_domain(s->fabric, s->info, &s->domain, NULL);
	if (!ret)
		ret = fi_cq_open(s->domain, &cq_attr, &s->cq, NULL);
	if (ret)
		return ret;
	s->buf = aligned_alloc(4096, FA_T_BUF);
	if (!s->buf)
		return -FI_ENOMEM;
	memset(s->buf, 0, FA_T_BUF);
	return fi_mr_reg(s->domain, s->buf, FA_T_BUF,
			 FI_SEND | FI_RECV | FI_READ | FI_WRITE |
			 FI_REMOTE_READ | FI_REMOTE_WRITE, 0, 0, 0, &s->mr,
			 NULL);
}

static int fa_ep(struct fa_side *s, struct fi_info *info)
{
	int ret = fi_endpoint(s->domain, info, &s->ep, NULL);

	if (!ret)
		ret = fi_ep_bind(s->ep, &s->eq->fid, 0);
	if (!ret)
		ret = fi_ep_bind(s->ep, &s->cq->fid, FI_TRANSMIT | FI_RECV);
	if (!ret)
		ret = fi_enable(s->ep);
	return ret;
}

static void fa_close(struct fa_side *s)
{
	if (s->mr)
		fi_close(&s->mr->fid);
	if (s->ep)
		fi_close(&s->ep->fid);
	if (s->pep)
		fi_close(&s->pep->fid);
	if (s->cq)
		fi_close(&s->cq->fid);
	if (s->domain)
		fi_close(&s->domain->fid);
	if (s->eq)
		fi_close(&s->eq->fid);
	if (s->fabric)
		fi_close(&s->fabric->fid);
	if (s->info)
		fi_freeinfo(s->info);
	free(s->buf);
}

/* One completion, sleeping on the CQ's wait object; 1 or -errno. */
static ssize_t fa_comp(struct fa_side *s, struct fi_cq_data_entry *e)
{
	return fi_cq_sread(s->cq, e, 1, NULL, FA_T_WAIT_MS);
}

static uint8_t fa_pattern(size_t i)
{
	return (uint8_t)(i * 7 + 3);
}

/*
 * The server: listen, tell the client the address, take its request
 * (data "hello"), accept with "welcome", tell it the region, then wait
 * for its "done" and check what it wrote; then FI_SHUTDOWN.  With
 * @reject: refuse with "go away" instead.
 */
static int fa_server(const char *dev, const char *addr, int wfd, bool reject)
{
	struct fi_info *hints = fa_hints(dev);
	struct fa_side s = { 0 };
	struct fi_eq_cm_entry *cm;
	char cmbuf[sizeof(*cm) + 64];
	struct fi_cq_data_entry e;
	struct fa_remote r;
	size_t alen = 128, i;
	char name[128];
	uint32_t event;
	ssize_t n;

	cm = (struct fi_eq_cm_entry *)cmbuf;
	if (!hints || fi_getinfo(FI_VERSION(1, 17), addr, "0", FI_SOURCE,
				 hints, &s.info))
		return lchan_t_child_fail(1, "fi_getinfo");
	if (fa_open(&s, false) || fi_passive_ep(s.fabric, s.info, &s.pep, NULL) ||
	    fi_pep_bind(s.pep, &s.eq->fid, 0) || fi_listen(s.pep) ||
	    fi_getname(&s.pep->fid, name, &alen))
		return lchan_t_child_fail(2, "listen");
	if (write(wfd, &alen, sizeof(alen)) != sizeof(alen) ||
	    write(wfd, name, alen) != (ssize_t)alen)
		return lchan_t_child_fail(3, "pipe");
	n = fi_eq_sread(s.eq, &event, cm, sizeof(cmbuf), FA_T_WAIT_MS, 0);
	if (n != (ssize_t)(sizeof(*cm) + 6) || event != FI_CONNREQ ||
	    memcmp(cm->data, "hello", 6))
		return lchan_t_child_fail(4, "CONNREQ: %zd event %u", n, event);
	if (reject) {
		if (fi_reject(s.pep, cm->info->handle, "go away", 8))
			return lchan_t_child_fail(5, "fi_reject");
		fi_freeinfo(cm->info);
		fa_close(&s);
		return 0;
	}
	if (fi_domain(s.fabric, cm->info, &s.domain, NULL))
		return lchan_t_child_fail(6, "fi_domain");
	{
		struct fi_cq_attr cq_attr = {
			.format = FI_CQ_FORMAT_DATA, .wait_obj = FI_WAIT_FD,
		};

		s.buf = aligned_alloc(4096, FA_T_BUF);
		memset(s.buf, 0, FA_T_BUF);
		if (fi_cq_open(s.domain, &cq_attr, &s.cq, NULL) ||
		    fi_mr_reg(s.domain, s.buf, FA_T_BUF,
			      FI_RECV | FI_REMOTE_READ | FI_REMOTE_WRITE, 0, 0,
			      0, &s.mr, NULL))
			return lchan_t_child_fail(7, "cq/mr");
	}
	if (fa_ep(&s, cm->info))
		return lchan_t_child_fail(8, "endpoint");
	fi_freeinfo(cm->info);
	if (fi_recv(s.ep, s.buf + FA_T_BUF - 64, 64, fi_mr_desc(s.mr), 0, &s))
		return lchan_t_child_fail(9, "fi_recv");
	if (fi_accept(s.ep, "welcome", 8))
		return lchan_t_child_fail(10, "fi_accept");
	n = fi_eq_sread(s.eq, &event, cm, sizeof(cmbuf), FA_T_WAIT_MS, 0);
	if (n < (ssize_t)sizeof(*cm) || event != FI_CONNECTED ||
	    cm->fid != &s.ep->fid)
		return lchan_t_child_fail(11, "CONNECTED: %zd", n);
	/* Registered before the first channel: keyed now. */
	r.addr = (uintptr_t)s.buf;
	r.key = fi_mr_key(s.mr);
	if (r.key == FI_KEY_NOTAVAIL || write(wfd, &r, sizeof(r)) != sizeof(r))
		return lchan_t_child_fail(12, "key");
	n = fa_comp(&s, &e);
	if (n != 1 || e.op_context != &s || !(e.flags & FI_RECV) ||
	    e.len != 5 || memcmp(s.buf + FA_T_BUF - 64, "done", 5))
		return lchan_t_child_fail(13, "done: %zd", n);
	for (i = 0; i < FA_T_BUF / 2; i++)
		if ((uint8_t)s.buf[i] != fa_pattern(i))
			return lchan_t_child_fail(14, "byte %zu", i);
	/* The client closes: the connection ends. */
	n = fi_eq_sread(s.eq, &event, cm, sizeof(cmbuf), FA_T_WAIT_MS, 0);
	if (n < (ssize_t)sizeof(*cm) || event != FI_SHUTDOWN ||
	    cm->fid != &s.ep->fid)
		return lchan_t_child_fail(15, "SHUTDOWN: %zd event %u", n,
					  event);
	/* Children before parents, or EBUSY. */
	if (fi_close(&s.domain->fid) != -FI_EBUSY)
		return lchan_t_child_fail(16, "domain closed under its ep");
	fa_close(&s);
	fi_freeinfo(hints);
	return 0;
}

static int fa_read_full(int fd, void *buf, size_t len)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = read(fd, (char *)buf + got, len - got);

		if (n <= 0)
			return -1;
		got += (size_t)n;
	}
	return 0;
}

/* Start the server; the client side's info for its address. */
static pid_t fa_start(struct __test_metadata *_metadata,
		      FIXTURE_DATA(fapi) *self, bool reject, int *rfd,
		      struct fa_side *c)
{
	struct fi_info *hints;
	size_t alen;
	char name[128];
	int p[2];
	pid_t pid;

	if (pipe(p))
		return -1;
	pid = fork();
	if (!pid) {
		close(p[0]);
		_exit(fa_server(self->d.dev, self->d.addr, p[1], reject));
	}
	close(p[1]);
	*rfd = p[0];
	if (fa_read_full(p[0], &alen, sizeof(alen)) || alen > sizeof(name) ||
	    fa_read_full(p[0], name, alen)) {
		TH_LOG("the server gave no address");
		return pid;
	}
	hints = fa_hints(self->d.dev);
	hints->dest_addr = malloc(alen);
	memcpy(hints->dest_addr, name, alen);
	hints->dest_addrlen = alen;
	EXPECT_EQ(0, fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints,
				&c->info));
	fi_freeinfo(hints);
	return pid;
}

static int fa_wait_child(pid_t pid)
{
	int st;

	if (waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* Connect, RMA both ways, a send, CQ data where it exists, a bad key. */
TEST_F_TIMEOUT(fapi, rma_and_completions, 120)
{
	struct fa_side c = { 0 };
	struct fi_eq_cm_entry *cm;
	char cmbuf[sizeof(*cm) + 64];
	struct fi_eq_err_entry eqe;
	struct fi_cq_data_entry e;
	struct fi_cq_err_entry ce = { 0 };
	struct fa_remote r;
	uint32_t event;
	ssize_t n;
	size_t i;
	pid_t pid;
	int rfd, wfd;

	LCHAN_T_BODY();
	cm = (struct fi_eq_cm_entry *)cmbuf;
	pid = fa_start(_metadata, self, false, &rfd, &c);
	ASSERT_NE(NULL, c.info);
	ASSERT_EQ(0, fa_open(&c, true));
	/* No channel yet: lchan has not registered the region. */
	EXPECT_EQ(FI_KEY_NOTAVAIL, fi_mr_key(c.mr));
	ASSERT_EQ(0, fa_ep(&c, c.info));
	ASSERT_EQ(0, fi_control(&c.cq->fid, FI_GETWAIT, &wfd));
	EXPECT_LE(0, wfd);
	ASSERT_EQ(0, fi_connect(c.ep, c.info->dest_addr, "hello", 6));
	n = fi_eq_sread(c.eq, &event, cm, sizeof(cmbuf), FA_T_WAIT_MS, 0);
	ASSERT_EQ((ssize_t)(sizeof(*cm) + 8), n);
	ASSERT_EQ(FI_CONNECTED, event);
	EXPECT_EQ(0, memcmp(cm->data, "welcome", 8));
	EXPECT_NE(FI_KEY_NOTAVAIL, fi_mr_key(c.mr));
	ASSERT_EQ(0, fa_read_full(rfd, &r, sizeof(r)));

	/* WRITE half of the server's region, READ it back. */
	for (i = 0; i < FA_T_BUF / 2; i++)
		c.buf[i] = (char)fa_pattern(i);
	ASSERT_EQ(0, fi_write(c.ep, c.buf, FA_T_BUF / 2, fi_mr_desc(c.mr), 0,
			      r.addr, r.key, &c));
	ASSERT_EQ(1, fa_comp(&c, &e));
	EXPECT_EQ(&c, e.op_context);
	EXPECT_EQ(FI_RMA | FI_WRITE, e.flags);
	ASSERT_EQ(0, fi_read(c.ep, c.buf + FA_T_BUF / 2, FA_T_BUF / 2,
			     fi_mr_desc(c.mr), 0, r.addr, r.key, &c.buf));
	ASSERT_EQ(1, fa_comp(&c, &e));
	EXPECT_EQ(&c.buf, e.op_context);
	EXPECT_EQ(FI_RMA | FI_READ, e.flags);
	EXPECT_EQ(0, memcmp(c.buf, c.buf + FA_T_BUF / 2, FA_T_BUF / 2));

	/* iWARP carries no immediate data: refused before the ring. */
	if (!strcmp(variant->kind, "siw"))
		EXPECT_EQ(-FI_EOPNOTSUPP,
			  fi_writedata(c.ep, c.buf, 8, fi_mr_desc(c.mr), 1, 0,
				       r.addr, r.key, NULL));

	memcpy(c.buf, "done", 5);
	ASSERT_EQ(0, fi_send(c.ep, c.buf, 5, fi_mr_desc(c.mr), 0, c.buf));
	ASSERT_EQ(1, fa_comp(&c, &e));
	EXPECT_EQ(FI_MSG | FI_SEND, e.flags);

	/* A wrong key: an error completion with lchan's status. */
	ASSERT_EQ(0, fi_write(c.ep, c.buf, 64, fi_mr_desc(c.mr), 0, r.addr,
			      r.key ^ 0x5a5a00, &r));
	n = fa_comp(&c, &e);
	if (n == 1 && !strcmp(variant->kind, "siw")) {
		/*
		 * iWARP completes a WRITE once it is sent; the peer's refusal
		 * ends the connection, which a READ, needing an answer, sees.
		 */
		ASSERT_EQ(0, fi_read(c.ep, c.buf, 64, fi_mr_desc(c.mr), 0,
				     r.addr, r.key ^ 0x5a5a00, &r));
		n = fa_comp(&c, &e);
	}
	ASSERT_EQ(-FI_EAVAIL, n);
	ASSERT_EQ(1, fi_cq_readerr(c.cq, &ce, 0));
	EXPECT_EQ(&r, ce.op_context);
	EXPECT_NE(0, ce.err);
	EXPECT_NE(0, ce.prov_errno);
	TH_LOG("bad key: %s, lchan status %d (%s)", fi_strerror(ce.err),
	       ce.prov_errno, fi_cq_strerror(c.cq, ce.prov_errno, NULL, NULL, 0));
	/* Nothing more, and the EQ has nothing to say. */
	EXPECT_EQ(-FI_EAGAIN, fi_cq_read(c.cq, &e, 1));
	(void)eqe;

	fa_close(&c);
	EXPECT_EQ(0, fa_wait_child(pid));
	close(rfd);
}

/* fi_reject's data comes back as the error event's err_data. */
TEST_F_TIMEOUT(fapi, reject_with_data, 60)
{
	struct fa_side c = { 0 };
	struct fi_eq_cm_entry cm;
	struct fi_eq_err_entry eqe = { 0 };
	uint32_t event;
	ssize_t n;
	pid_t pid;
	int rfd;

	LCHAN_T_BODY();
	pid = fa_start(_metadata, self, true, &rfd, &c);
	ASSERT_NE(NULL, c.info);
	ASSERT_EQ(0, fa_open(&c, true));
	ASSERT_EQ(0, fa_ep(&c, c.info));
	ASSERT_EQ(0, fi_connect(c.ep, c.info->dest_addr, "hello", 6));
	n = fi_eq_sread(c.eq, &event, &cm, sizeof(cm), FA_T_WAIT_MS, 0);
	ASSERT_EQ(-FI_EAVAIL, n);
	ASSERT_EQ((ssize_t)sizeof(eqe), fi_eq_readerr(c.eq, &eqe, 0));
	EXPECT_EQ(FI_ECONNREFUSED, eqe.err);
	EXPECT_EQ(&c.ep->fid, eqe.fid);
	ASSERT_EQ(8, eqe.err_data_size);
	EXPECT_EQ(0, memcmp(eqe.err_data, "go away", 8));
	/* Too much connection data is refused at once. */
	EXPECT_EQ(-FI_EINVAL, fi_connect(c.ep, c.info->dest_addr, cm.data, 4096));
	fa_close(&c);
	EXPECT_EQ(0, fa_wait_child(pid));
	close(rfd);
}

TEST_HARNESS_MAIN
