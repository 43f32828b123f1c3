// SPDX-License-Identifier: GPL-2.0
/*
 * The lchan libfabric provider through libfabric's API, two processes
 * (the server a child): connection data both ways, FI_RMA write and read
 * checked byte for byte, completions waited for with fi_cq_sread on the
 * CQ's FI_WAIT_FD object, a write with remote CQ data consuming the
 * receive the target posted (FI_RX_CQ_DATA), remote CQ data refused on
 * iWARP and to an application without that mode, a write with a wrong
 * key answered by an error completion, one FI_SHUTDOWN per connection on
 * each side (fi_shutdown's own, the peer's), fi_reject's data reaching
 * the connecting side, no error entry without a context for an inject
 * call, an endpoint taking over a passive endpoint's address, two sides
 * connecting to each other at once, a refused connect reported by the
 * EQ; every completion read is logged and accounted for by its request.
 * What the provider declines: shared contexts and (on iWARP) resource
 * management are not offered, the tagged, atomic and collective calls of
 * an endpoint return -FI_ENOSYS.
 * SKIPs without the provider (LCHAN_FABRIC) or lchan.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <rdma/fabric.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_collective.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>

#include "kselftest_harness.h"
#include "lchan_test.h"

#define FA_T_BUF	65536
#define FA_T_WAIT_MS	20000
/* The remote CQ data of the client's fi_writedata, and where it writes. */
#define FA_T_IMM	0x5ca1ab1e
#define FA_T_IMM_OFF	(FA_T_BUF - 128)

FIXTURE(fapi) {
	struct lchan_t_dev d;
};

LCHAN_T_VARIANTS(fapi);

FIXTURE_SETUP(fapi)
{
	char why[320];

	LCHAN_T_NEED_DEV(&self->d, variant->kind);
	/* Before the first libfabric call. */
	if (lchan_t_fabric_provider(why, sizeof(why)))
		LCHAN_T_SETUP_SKIP("%s", why);
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

/* Hints for @dev; @mode: the mode bits the application supports. */
static struct fi_info *fa_hints(const char *dev, uint64_t mode)
{
	struct fi_info *h = fi_allocinfo();

	if (!h)
		return NULL;
	h->mode = mode;
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

/*
 * The next event of @eq within @timeout_ms: its number when it names
 * @fid, -FI_EOTHER when it names another, or the error of the read.
 */
static int fa_eq_next(struct fid_eq *eq, const struct fid *fid,
		      int timeout_ms)
{
	struct fi_eq_cm_entry *cm;
	char cmbuf[sizeof(*cm) + 64];
	uint32_t event;
	ssize_t n;

	cm = (struct fi_eq_cm_entry *)cmbuf;
	n = fi_eq_sread(eq, &event, cm, sizeof(cmbuf), timeout_ms, 0);
	if (n < 0)
		return (int)n;
	if (n < (ssize_t)sizeof(*cm) || cm->fid != fid)
		return -FI_EOTHER;
	return (int)event;
}

/* The client's requests: their contexts name them in the log. */
struct fa_reqs {
	char write, read, writedata, send, bad_write, bad_read;
};

static const char *fa_req_name(const struct fa_reqs *q, const void *ctx)
{
	if (ctx == &q->write)
		return "write";
	if (ctx == &q->writedata)
		return "writedata";
	if (ctx == &q->read)
		return "read";
	if (ctx == &q->send)
		return "send";
	if (ctx == &q->bad_write)
		return "bad-key write";
	if (ctx == &q->bad_read)
		return "bad-key read";
	return "unknown";
}

/*
 * The next completion of the client's CQ within @timeout_ms, success or
 * error, logged whatever it is: 1 with @e filled, -FI_EAVAIL with @ce
 * filled, or the error of the read.
 */
static ssize_t fa_comp_log(struct __test_metadata *_metadata,
			   struct fa_side *s, const struct fa_reqs *q,
			   struct fi_cq_data_entry *e, struct fi_cq_err_entry *ce,
			   int timeout_ms)
{
	ssize_t n = fi_cq_sread(s->cq, e, 1, NULL, timeout_ms), m;

	if (n == 1) {
		TH_LOG("cq entry: %s (%p) flags 0x%llx len %zu",
		       fa_req_name(q, e->op_context), e->op_context,
		       (unsigned long long)e->flags, e->len);
		return n;
	}
	if (n != -FI_EAVAIL) {
		if (n != -FI_EAGAIN)
			TH_LOG("fi_cq_sread: %zd (%s)", n, fi_strerror((int)-n));
		return n;
	}
	memset(ce, 0, sizeof(*ce));
	m = fi_cq_readerr(s->cq, ce, 0);
	if (m != 1) {
		TH_LOG("-FI_EAVAIL, then fi_cq_readerr: %zd", m);
		return m < 0 ? m : -FI_EOTHER;
	}
	TH_LOG("cq error entry: %s (%p) flags 0x%llx len %zu err %d (%s) prov_errno %d (%s)",
	       fa_req_name(q, ce->op_context), ce->op_context,
	       (unsigned long long)ce->flags, ce->len, ce->err,
	       fi_strerror(ce->err), ce->prov_errno,
	       fi_cq_strerror(s->cq, ce->prov_errno, NULL, NULL, 0));
	return n;
}

static uint8_t fa_pattern(size_t i)
{
	return (uint8_t)(i * 7 + 3);
}

/* What the server does with the client's request. */
enum fa_srv {
	FA_SRV_RMA,		/* accept, check the client's transfers */
	FA_SRV_REJECT,		/* refuse with "go away" */
	FA_SRV_SHUTDOWN,	/* one FI_SHUTDOWN per connection, twice */
	FA_SRV_HOLD,		/* take "done", wait for the end */
};

/*
 * FA_SRV_SHUTDOWN, after the first connection is up: the client shuts
 * it down, which this side's EQ reports once, its own fi_shutdown adding
 * nothing; then a second connection that both ends shut down at once
 * (as fabtests' fi_cm_data does), each EQ reporting its end once.
 */
static int fa_server_shutdown(struct fa_side *s)
{
	struct fi_eq_cm_entry *cm;
	char cmbuf[sizeof(*cm) + 64];
	uint32_t event;
	ssize_t n;
	int ev;

	cm = (struct fi_eq_cm_entry *)cmbuf;
	ev = fa_eq_next(s->eq, &s->ep->fid, FA_T_WAIT_MS);
	if (ev != FI_SHUTDOWN)
		return lchan_t_child_fail(20, "peer's shutdown: %d", ev);
	ev = fa_eq_next(s->eq, &s->ep->fid, 300);
	if (ev != -FI_EAGAIN)
		return lchan_t_child_fail(21, "after the shutdown: %d", ev);
	if (fi_shutdown(s->ep, 0))
		return lchan_t_child_fail(22, "fi_shutdown");
	/*
	 * Nothing more for this endpoint.  The client, past its own
	 * shutdown, may connect again already: its request is left queued.
	 */
	n = fi_eq_sread(s->eq, &event, cm, sizeof(cmbuf), 300, FI_PEEK);
	if (n != -FI_EAGAIN &&
	    !(n == (ssize_t)sizeof(*cm) && event == FI_CONNREQ))
		return lchan_t_child_fail(23, "after its own shutdown: %zd, "
					  "event %u", n, event);
	fi_close(&s->ep->fid);
	s->ep = NULL;

	n = fi_eq_sread(s->eq, &event, cm, sizeof(cmbuf), FA_T_WAIT_MS, 0);
	if (n != (ssize_t)sizeof(*cm) || event != FI_CONNREQ)
		return lchan_t_child_fail(24, "second CONNREQ: %zd event %u", n,
					  event);
	if (fa_ep(s, cm->info)) {
		fi_freeinfo(cm->info);
		return lchan_t_child_fail(25, "second endpoint");
	}
	fi_freeinfo(cm->info);
	if (fi_accept(s->ep, NULL, 0))
		return lchan_t_child_fail(26, "second fi_accept");
	ev = fa_eq_next(s->eq, &s->ep->fid, FA_T_WAIT_MS);
	if (ev != FI_CONNECTED)
		return lchan_t_child_fail(27, "second CONNECTED: %d", ev);
	if (fi_shutdown(s->ep, 0))
		return lchan_t_child_fail(28, "second fi_shutdown");
	ev = fa_eq_next(s->eq, &s->ep->fid, FA_T_WAIT_MS);
	if (ev != FI_SHUTDOWN)
		return lchan_t_child_fail(29, "second SHUTDOWN: %d", ev);
	ev = fa_eq_next(s->eq, &s->ep->fid, 300);
	if (ev != -FI_EAGAIN)
		return lchan_t_child_fail(30, "after the second: %d", ev);
	return 0;
}

/*
 * The server: listen, tell the client the address, take its request
 * (data "hello"), accept with "welcome", tell it the region, then what
 * @mode says.  FA_SRV_RMA: where the endpoint has remote CQ data, the
 * client's fi_writedata consumes the first receive posted; then wait
 * for its "done" and check what it wrote; then FI_SHUTDOWN.
 */
static int fa_server(const char *dev, const char *addr, int wfd,
		     enum fa_srv mode)
{
	struct fi_info *hints = fa_hints(dev, FI_RX_CQ_DATA);
	struct fa_side s = { 0 };
	struct fi_eq_cm_entry *cm;
	char cmbuf[sizeof(*cm) + 64];
	struct fi_cq_data_entry e = { 0 };
	struct fa_remote r;
	size_t alen = 128, i;
	char name[128], rx_imm, rx_done;
	bool cq_data;
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
	if (mode == FA_SRV_REJECT) {
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
	/* The request's info is the passive endpoint's: asked with the mode. */
	cq_data = mode == FA_SRV_RMA && cm->info->domain_attr->cq_data_size &&
		  (cm->info->rx_attr->mode & FI_RX_CQ_DATA);
	fi_freeinfo(cm->info);
	if ((cq_data && fi_recv(s.ep, s.buf + FA_T_BUF - 32, 32,
				fi_mr_desc(s.mr), 0, &rx_imm)) ||
	    fi_recv(s.ep, s.buf + FA_T_BUF - 64, 32, fi_mr_desc(s.mr), 0,
		    &rx_done))
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
	if (mode == FA_SRV_SHUTDOWN) {
		int ret = fa_server_shutdown(&s);

		fa_close(&s);
		fi_freeinfo(hints);
		return ret;
	}
	/* The write's data is in place when its receive completes. */
	if (cq_data) {
		n = fa_comp(&s, &e);
		if (n != 1 || e.op_context != &rx_imm ||
		    e.flags != (FI_RMA | FI_REMOTE_WRITE | FI_REMOTE_CQ_DATA) ||
		    e.data != FA_T_IMM ||
		    memcmp(s.buf + FA_T_IMM_OFF, "imm-data", 8))
			return lchan_t_child_fail(17, "writedata: %zd ctx %p flags 0x%llx data 0x%llx",
						  n, e.op_context,
						  (unsigned long long)e.flags,
						  (unsigned long long)e.data);
	}
	n = fa_comp(&s, &e);
	if (n != 1 || e.op_context != &rx_done || !(e.flags & FI_RECV) ||
	    e.len != 5 || memcmp(s.buf + FA_T_BUF - 64, "done", 5))
		return lchan_t_child_fail(13, "done: %zd", n);
	if (mode == FA_SRV_HOLD) {
		/* The connection ends: the client's failure or its close. */
		n = fa_eq_next(s.eq, &s.ep->fid, 2 * FA_T_WAIT_MS);
		if (n != FI_SHUTDOWN)
			return lchan_t_child_fail(31, "end: %zd", n);
		fa_close(&s);
		fi_freeinfo(hints);
		return 0;
	}
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

/*
 * Start the server; the client side's info for its address, the mode
 * bits @cmode supported.
 */
static pid_t fa_start(struct __test_metadata *_metadata,
		      FIXTURE_DATA(fapi) *self, enum fa_srv mode,
		      uint64_t cmode, int *rfd, struct fa_side *c)
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
		_exit(fa_server(self->d.dev, self->d.addr, p[1], mode));
	}
	close(p[1]);
	*rfd = p[0];
	if (fa_read_full(p[0], &alen, sizeof(alen)) || alen > sizeof(name) ||
	    fa_read_full(p[0], name, alen)) {
		TH_LOG("the server gave no address");
		return pid;
	}
	hints = fa_hints(self->d.dev, cmode);
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

/*
 * Connect, RMA both ways, a write with CQ data where it exists (each
 * side supports FI_RX_CQ_DATA), a send, a bad key.  Every completion
 * read is logged, and each is accounted for by its request: after the
 * last expected one the CQ stays empty.
 */
TEST_F_TIMEOUT(fapi, rma_and_completions, 120)
{
	struct fa_side c = { 0 };
	struct fa_reqs q = { 0 };
	struct fi_eq_cm_entry *cm;
	char cmbuf[sizeof(*cm) + 64];
	struct fi_cq_data_entry e;
	struct fi_cq_err_entry ce = { 0 };
	struct fa_remote r;
	uint32_t event;
	void *refused;
	ssize_t n;
	size_t i;
	pid_t pid;
	int rfd, wfd;

	cm = (struct fi_eq_cm_entry *)cmbuf;
	pid = fa_start(_metadata, self, FA_SRV_RMA, FI_RX_CQ_DATA, &rfd, &c);
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
			      r.addr, r.key, &q.write));
	ASSERT_EQ(1, fa_comp_log(_metadata, &c, &q, &e, &ce, FA_T_WAIT_MS));
	EXPECT_EQ(&q.write, e.op_context);
	EXPECT_EQ(FI_RMA | FI_WRITE, e.flags);
	ASSERT_EQ(0, fi_read(c.ep, c.buf + FA_T_BUF / 2, FA_T_BUF / 2,
			     fi_mr_desc(c.mr), 0, r.addr, r.key, &q.read));
	ASSERT_EQ(1, fa_comp_log(_metadata, &c, &q, &e, &ce, FA_T_WAIT_MS));
	EXPECT_EQ(&q.read, e.op_context);
	EXPECT_EQ(FI_RMA | FI_READ, e.flags);
	EXPECT_EQ(0, memcmp(c.buf, c.buf + FA_T_BUF / 2, FA_T_BUF / 2));

	/*
	 * Remote CQ data: the server posted a receive for it.  iWARP
	 * carries no immediate data: refused before the ring.
	 */
	memcpy(c.buf, "imm-data", 8);
	if (!strcmp(variant->kind, "siw")) {
		EXPECT_EQ(0, c.info->domain_attr->cq_data_size);
		EXPECT_EQ(-FI_EOPNOTSUPP,
			  fi_writedata(c.ep, c.buf, 8, fi_mr_desc(c.mr), 1, 0,
				       r.addr, r.key, NULL));
	} else {
		EXPECT_EQ(FI_RX_CQ_DATA, c.info->rx_attr->mode & FI_RX_CQ_DATA);
		ASSERT_EQ(0, fi_writedata(c.ep, c.buf, 8, fi_mr_desc(c.mr),
					  FA_T_IMM, 0, r.addr + FA_T_IMM_OFF,
					  r.key, &q.writedata));
		ASSERT_EQ(1, fa_comp_log(_metadata, &c, &q, &e, &ce,
					 FA_T_WAIT_MS));
		EXPECT_EQ(&q.writedata, e.op_context);
		EXPECT_EQ(FI_RMA | FI_WRITE, e.flags);
	}

	memcpy(c.buf, "done", 5);
	ASSERT_EQ(0, fi_send(c.ep, c.buf, 5, fi_mr_desc(c.mr), 0, &q.send));
	ASSERT_EQ(1, fa_comp_log(_metadata, &c, &q, &e, &ce, FA_T_WAIT_MS));
	EXPECT_EQ(&q.send, e.op_context);
	EXPECT_EQ(FI_MSG | FI_SEND, e.flags);

	/* A wrong key: an error completion with lchan's status. */
	ASSERT_EQ(0, fi_write(c.ep, c.buf, 64, fi_mr_desc(c.mr), 0, r.addr,
			      r.key ^ 0x5a5a00, &q.bad_write));
	refused = &q.bad_write;
	n = fa_comp_log(_metadata, &c, &q, &e, &ce, FA_T_WAIT_MS);
	if (n == 1 && !strcmp(variant->kind, "siw")) {
		/*
		 * iWARP completes a WRITE once it is sent; the peer's refusal
		 * ends the connection, which a READ, needing an answer, sees.
		 */
		EXPECT_EQ(&q.bad_write, e.op_context);
		EXPECT_EQ(FI_RMA | FI_WRITE, e.flags);
		ASSERT_EQ(0, fi_read(c.ep, c.buf, 64, fi_mr_desc(c.mr), 0,
				     r.addr, r.key ^ 0x5a5a00, &q.bad_read));
		refused = &q.bad_read;
		n = fa_comp_log(_metadata, &c, &q, &e, &ce, FA_T_WAIT_MS);
	}
	ASSERT_EQ(-FI_EAVAIL, n);
	EXPECT_EQ(refused, ce.op_context);
	EXPECT_NE(0, ce.err);
	EXPECT_NE(0, ce.prov_errno);
	/* Nothing more, now or a moment later: each is logged. */
	EXPECT_EQ(-FI_EAGAIN, fa_comp_log(_metadata, &c, &q, &e, &ce, 0));
	EXPECT_EQ(-FI_EAGAIN, fa_comp_log(_metadata, &c, &q, &e, &ce, 300));

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

	pid = fa_start(_metadata, self, FA_SRV_REJECT, 0, &rfd, &c);
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

/*
 * fi_shutdown ends the connection with one FI_SHUTDOWN on each side: on
 * the caller's EQ at once, on the peer's when its channel sees the
 * disconnect, and the peer's own fi_shutdown after that queues none.
 * Then both ends shut a second connection down at once: one each.
 */
TEST_F_TIMEOUT(fapi, shutdown_events, 120)
{
	struct fa_side c = { 0 };
	struct fa_remote r;
	pid_t pid;
	int rfd;

	pid = fa_start(_metadata, self, FA_SRV_SHUTDOWN, 0, &rfd, &c);
	ASSERT_NE(NULL, c.info);
	ASSERT_EQ(0, fa_open(&c, true));
	ASSERT_EQ(0, fa_ep(&c, c.info));
	ASSERT_EQ(0, fi_connect(c.ep, c.info->dest_addr, "hello", 6));
	ASSERT_EQ(FI_CONNECTED, fa_eq_next(c.eq, &c.ep->fid, FA_T_WAIT_MS));
	/* The server's region: it is past its accept. */
	ASSERT_EQ(0, fa_read_full(rfd, &r, sizeof(r)));
	ASSERT_EQ(0, fi_shutdown(c.ep, 0));
	ASSERT_EQ(FI_SHUTDOWN, fa_eq_next(c.eq, &c.ep->fid, FA_T_WAIT_MS));
	EXPECT_EQ(-FI_EAGAIN, fa_eq_next(c.eq, &c.ep->fid, 300));
	/* No connection left to end. */
	EXPECT_EQ(0, fi_shutdown(c.ep, 0));
	EXPECT_EQ(-FI_EAGAIN, fa_eq_next(c.eq, &c.ep->fid, 0));

	ASSERT_EQ(0, fi_close(&c.ep->fid));
	c.ep = NULL;
	ASSERT_EQ(0, fa_ep(&c, c.info));
	ASSERT_EQ(0, fi_connect(c.ep, c.info->dest_addr, NULL, 0));
	ASSERT_EQ(FI_CONNECTED, fa_eq_next(c.eq, &c.ep->fid, FA_T_WAIT_MS));
	ASSERT_EQ(0, fi_shutdown(c.ep, 0));
	ASSERT_EQ(FI_SHUTDOWN, fa_eq_next(c.eq, &c.ep->fid, FA_T_WAIT_MS));
	EXPECT_EQ(-FI_EAGAIN, fa_eq_next(c.eq, &c.ep->fid, 300));

	fa_close(&c);
	EXPECT_EQ(0, fa_wait_child(pid));
	close(rfd);
}

/*
 * FI_INJECT as an operation flag only hands the buffer back at once: the
 * fi_sendmsg has its context and its completion.  An inject call has
 * neither, so the error of a failed fi_inject_write (a wrong key) is not
 * written to the CQ, where a reader would find a NULL context (ofi_rxm
 * followed it): the CQ stays empty, and the failure comes as the
 * channel's end, FI_SHUTDOWN.  On iWARP the write completes once sent
 * and the peer's refusal ends the connection, which a READ sees with its
 * own context.
 */
TEST_F_TIMEOUT(fapi, inject_errors, 120)
{
	bool iwarp = !strcmp(variant->kind, "siw");
	struct fa_side c = { 0 };
	struct fa_reqs q = { 0 };
	struct fi_cq_data_entry e;
	struct fi_cq_err_entry ce = { 0 };
	struct fi_msg msg = { 0 };
	struct fa_remote r;
	struct iovec iov;
	void *desc;
	pid_t pid;
	int rfd;

	pid = fa_start(_metadata, self, FA_SRV_HOLD, 0, &rfd, &c);
	ASSERT_NE(NULL, c.info);
	ASSERT_EQ(0, fa_open(&c, true));
	ASSERT_EQ(0, fa_ep(&c, c.info));
	ASSERT_EQ(0, fi_connect(c.ep, c.info->dest_addr, "hello", 6));
	ASSERT_EQ(FI_CONNECTED, fa_eq_next(c.eq, &c.ep->fid, FA_T_WAIT_MS));
	ASSERT_EQ(0, fa_read_full(rfd, &r, sizeof(r)));

	memcpy(c.buf, "done", 5);
	iov = (struct iovec){ .iov_base = c.buf, .iov_len = 5 };
	desc = fi_mr_desc(c.mr);
	msg = (struct fi_msg){ .msg_iov = &iov, .desc = &desc, .iov_count = 1,
			       .context = &q.send };
	ASSERT_EQ(0, fi_sendmsg(c.ep, &msg, FI_INJECT));
	/* The buffer is the caller's again: the server must see "done". */
	memset(c.buf, 0, 5);
	ASSERT_EQ(1, fa_comp_log(_metadata, &c, &q, &e, &ce, FA_T_WAIT_MS));
	EXPECT_EQ(&q.send, e.op_context);
	EXPECT_EQ(FI_MSG | FI_SEND, e.flags);

	ASSERT_EQ(0, fi_inject_write(c.ep, c.buf, 8, 0, r.addr,
				     r.key ^ 0x5a5a00));
	if (iwarp) {
		ASSERT_EQ(0, fi_read(c.ep, c.buf, 64, fi_mr_desc(c.mr), 0,
				     r.addr, r.key ^ 0x5a5a00, &q.bad_read));
		ASSERT_EQ(-FI_EAVAIL, fa_comp_log(_metadata, &c, &q, &e, &ce,
						  FA_T_WAIT_MS));
		EXPECT_EQ(&q.bad_read, ce.op_context);
	}
	/* The channel failed: the failed write's CQE is in its ring. */
	EXPECT_EQ(FI_SHUTDOWN, fa_eq_next(c.eq, &c.ep->fid, FA_T_WAIT_MS));
	/* Nothing for it in the CQ, now or a moment later. */
	EXPECT_EQ(-FI_EAGAIN, fa_comp_log(_metadata, &c, &q, &e, &ce, 300));

	fa_close(&c);
	EXPECT_EQ(0, fa_wait_child(pid));
	close(rfd);
}

/* The first info fi_getinfo gives for the device's address, or NULL. */
static struct fi_info *fa_getinfo(FIXTURE_DATA(fapi) *self,
				  const struct fi_info *hints, int *ret)
{
	struct fi_info *info = NULL;

	*ret = fi_getinfo(FI_VERSION(1, 17), self->d.addr, "0", FI_SOURCE,
			  hints, &info);
	return *ret ? NULL : info;
}

/*
 * Remote CQ data consumes a receive at the target, an RDMA write's too:
 * an application that supports FI_RX_CQ_DATA (in hints->mode or
 * rx_attr->mode) is told so, one that does not gets no remote CQ data
 * (cq_data_size 0, and asking for it finds nothing), and its endpoint
 * refuses the calls that would carry it.  iWARP carries none at all.
 */
TEST_F_TIMEOUT(fapi, rx_cq_data_mode, 60)
{
	bool iwarp = !strcmp(variant->kind, "siw");
	struct fa_side s = { 0 };
	struct fi_info *hints, *info;
	int ret;

	hints = fa_hints(self->d.dev, FI_RX_CQ_DATA);
	ASSERT_NE(NULL, hints);
	info = fa_getinfo(self, hints, &ret);
	ASSERT_EQ(0, ret);
	EXPECT_EQ(iwarp ? 0 : 4, info->domain_attr->cq_data_size);
	EXPECT_EQ(iwarp ? 0 : FI_RX_CQ_DATA, info->mode & FI_RX_CQ_DATA);
	EXPECT_EQ(iwarp ? 0 : FI_RX_CQ_DATA,
		  info->rx_attr->mode & FI_RX_CQ_DATA);
	fi_freeinfo(info);

	hints->mode = 0;
	hints->rx_attr->mode = FI_RX_CQ_DATA;
	info = fa_getinfo(self, hints, &ret);
	ASSERT_EQ(0, ret);
	EXPECT_EQ(iwarp ? 0 : 4, info->domain_attr->cq_data_size);
	EXPECT_EQ(iwarp ? 0 : FI_RX_CQ_DATA,
		  info->rx_attr->mode & FI_RX_CQ_DATA);
	fi_freeinfo(info);

	hints->rx_attr->mode = 0;
	s.info = fa_getinfo(self, hints, &ret);
	ASSERT_EQ(0, ret);
	EXPECT_EQ(0, s.info->domain_attr->cq_data_size);
	EXPECT_EQ(0, s.info->mode & FI_RX_CQ_DATA);
	EXPECT_EQ(0, s.info->rx_attr->mode & FI_RX_CQ_DATA);
	hints->domain_attr->cq_data_size = 4;
	EXPECT_EQ(NULL, fa_getinfo(self, hints, &ret));
	EXPECT_EQ(-FI_ENODATA, ret);
	fi_freeinfo(hints);

	/* Refused before the state is looked at: no connection needed. */
	ASSERT_EQ(0, fa_open(&s, true));
	ASSERT_EQ(0, fa_ep(&s, s.info));
	EXPECT_EQ(-FI_EOPNOTSUPP, fi_writedata(s.ep, s.buf, 8,
					       fi_mr_desc(s.mr), 1, 0, 0, 0,
					       NULL));
	EXPECT_EQ(-FI_EOPNOTSUPP, fi_inject_writedata(s.ep, s.buf, 8, 1, 0,
						      0, 0));
	EXPECT_EQ(-FI_EOPNOTSUPP, fi_senddata(s.ep, s.buf, 8, fi_mr_desc(s.mr),
					      1, 0, NULL));
	EXPECT_EQ(-FI_EOPNOTSUPP, fi_injectdata(s.ep, s.buf, 8, 1, 0));
	fa_close(&s);
}

/*
 * What the provider does not implement is refused (-FI_ENODATA), not
 * answered with something else: shared contexts (fabtests' fi_shared_ctx
 * then does not run) and scalable ones, and resource management on
 * iWARP, which has no retry for a message that finds no receive; IB and
 * RoCE have it (lchan's RNR retry) and say so.
 */
TEST_F_TIMEOUT(fapi, declined_hints, 60)
{
	bool iwarp = !strcmp(variant->kind, "siw");
	struct fi_info *hints, *info;
	int ret;

	hints = fa_hints(self->d.dev, 0);
	ASSERT_NE(NULL, hints);
	hints->ep_attr->tx_ctx_cnt = FI_SHARED_CONTEXT;
	EXPECT_EQ(NULL, fa_getinfo(self, hints, &ret));
	EXPECT_EQ(-FI_ENODATA, ret);
	hints->ep_attr->tx_ctx_cnt = 0;
	hints->ep_attr->rx_ctx_cnt = FI_SHARED_CONTEXT;
	EXPECT_EQ(NULL, fa_getinfo(self, hints, &ret));
	EXPECT_EQ(-FI_ENODATA, ret);
	hints->ep_attr->rx_ctx_cnt = 0;
	hints->ep_attr->tx_ctx_cnt = 2;
	EXPECT_EQ(NULL, fa_getinfo(self, hints, &ret));
	EXPECT_EQ(-FI_ENODATA, ret);
	hints->ep_attr->tx_ctx_cnt = 0;
	hints->domain_attr->max_ep_srx_ctx = 1;
	EXPECT_EQ(NULL, fa_getinfo(self, hints, &ret));
	EXPECT_EQ(-FI_ENODATA, ret);
	hints->domain_attr->max_ep_srx_ctx = 0;
	hints->domain_attr->max_ep_stx_ctx = 1;
	EXPECT_EQ(NULL, fa_getinfo(self, hints, &ret));
	EXPECT_EQ(-FI_ENODATA, ret);
	hints->domain_attr->max_ep_stx_ctx = 0;
	/* A context of its own each way is what an endpoint has. */
	hints->ep_attr->tx_ctx_cnt = 1;
	hints->ep_attr->rx_ctx_cnt = 1;
	info = fa_getinfo(self, hints, &ret);
	EXPECT_EQ(0, ret);
	fi_freeinfo(info);

	hints->domain_attr->resource_mgmt = FI_RM_ENABLED;
	info = fa_getinfo(self, hints, &ret);
	if (iwarp) {
		EXPECT_EQ(NULL, info);
		EXPECT_EQ(-FI_ENODATA, ret);
	} else {
		ASSERT_EQ(0, ret);
		EXPECT_EQ(FI_RM_ENABLED, info->domain_attr->resource_mgmt);
	}
	fi_freeinfo(info);
	hints->domain_attr->resource_mgmt = FI_RM_DISABLED;
	info = fa_getinfo(self, hints, &ret);
	ASSERT_EQ(0, ret);
	EXPECT_EQ(FI_RM_DISABLED, info->domain_attr->resource_mgmt);
	fi_freeinfo(info);
	hints->domain_attr->resource_mgmt = FI_RM_UNSPEC;
	info = fa_getinfo(self, hints, &ret);
	ASSERT_EQ(0, ret);
	EXPECT_EQ(iwarp ? FI_RM_DISABLED : FI_RM_ENABLED,
		  info->domain_attr->resource_mgmt);
	fi_freeinfo(info);
	fi_freeinfo(hints);
}

/*
 * An endpoint opened from an info whose handle is a passive endpoint
 * takes over the passive endpoint's address (fi_endpoint(3)), and
 * fi_getinfo copies such a handle from the hints (fi_getinfo(3)):
 * fabtests' fi_msg_sockets reserves an address so, with fi_setname.
 */
TEST_F_TIMEOUT(fapi, endpoint_from_pep, 60)
{
	struct sockaddr_in want, got;
	struct fa_side s = { 0 };
	struct fi_info *hints, *info;
	size_t alen;
	int ret;

	hints = fa_hints(self->d.dev, 0);
	ASSERT_NE(NULL, hints);
	s.info = fa_getinfo(self, hints, &ret);
	ASSERT_EQ(0, ret);
	ASSERT_EQ(sizeof(want), s.info->src_addrlen);
	ASSERT_EQ(0, fa_open(&s, true));
	ASSERT_EQ(0, fi_passive_ep(s.fabric, s.info, &s.pep, NULL));
	/* Named, not listening: nothing holds the port. */
	memcpy(&want, s.info->src_addr, sizeof(want));
	want.sin_port = htons(47690 + (strcmp(variant->kind, "rxe") ? 1 : 0));
	ASSERT_EQ(0, fi_setname(&s.pep->fid, &want, sizeof(want)));
	alen = sizeof(got);
	ASSERT_EQ(0, fi_getname(&s.pep->fid, &got, &alen));
	EXPECT_EQ(0, memcmp(&want, &got, sizeof(want)));

	hints->handle = &s.pep->fid;
	info = fa_getinfo(self, hints, &ret);
	hints->handle = NULL;
	fi_freeinfo(hints);
	ASSERT_EQ(0, ret);
	EXPECT_EQ(&s.pep->fid, info->handle);
	ASSERT_EQ(0, fi_endpoint(s.domain, info, &s.ep, NULL));
	fi_freeinfo(info);
	/* The application closes the passive endpoint then. */
	ASSERT_EQ(0, fi_close(&s.pep->fid));
	s.pep = NULL;
	memset(&got, 0, sizeof(got));
	alen = sizeof(got);
	ASSERT_EQ(0, fi_getname(&s.ep->fid, &got, &alen));
	EXPECT_EQ(sizeof(want), alen);
	EXPECT_EQ(0, memcmp(&want, &got, sizeof(want))) {
		char a[INET_ADDRSTRLEN] = "?";

		inet_ntop(AF_INET, &got.sin_addr, a, sizeof(a));
		TH_LOG("the endpoint's address: %s:%u", a, ntohs(got.sin_port));
	}
	fa_close(&s);
}

/* An endpoint of @s's domain from @info, bound to its EQ and CQ. */
static int fa_ep_open(struct fa_side *s, struct fi_info *info,
		      struct fid_ep **ep)
{
	int ret = fi_endpoint(s->domain, info, ep, NULL);

	if (!ret)
		ret = fi_ep_bind(*ep, &s->eq->fid, 0);
	if (!ret)
		ret = fi_ep_bind(*ep, &s->cq->fid, FI_TRANSMIT | FI_RECV);
	if (!ret)
		ret = fi_enable(*ep);
	return ret;
}

/*
 * One side of the crossed connections: a listener whose address goes to
 * the other side through @wfd, a connection to the other side's (read
 * from @rfd) made while the other side's own connect is out, as ofi_rxm
 * connects both ways at once.  fi_connect returns at once (within
 * @max_s); reading the EQ accepts the other side's request and reports
 * both connections; then one message each way, from each side's
 * connecting endpoint to the other's accepted one.  0, or the step that
 * failed.
 */
static int fa_cross_side(const char *dev, const char *addr, int rfd, int wfd,
			 double max_s)
{
	struct fi_info *hints = fa_hints(dev, 0);
	struct fid_ep *acc = NULL;
	struct fa_side s = { 0 };
	struct fi_eq_cm_entry *cm;
	char cmbuf[sizeof(*cm) + 64], name[128], peer[128];
	size_t alen = sizeof(name), plen;
	bool out_up = false, in_up = false;
	struct fi_cq_data_entry e;
	char rx_ctx, tx_ctx, sync = 's';
	double t0, end;
	int got = 0, ret = 0;
	uint32_t event;
	ssize_t n;

	cm = (struct fi_eq_cm_entry *)cmbuf;
	if (!hints || fi_getinfo(FI_VERSION(1, 17), addr, "0", FI_SOURCE,
				 hints, &s.info))
		return lchan_t_child_fail(1, "fi_getinfo");
	fi_freeinfo(hints);
	if (fa_open(&s, true) ||
	    fi_passive_ep(s.fabric, s.info, &s.pep, NULL) ||
	    fi_pep_bind(s.pep, &s.eq->fid, 0) || fi_listen(s.pep) ||
	    fi_getname(&s.pep->fid, name, &alen))
		return lchan_t_child_fail(2, "listen");
	if (write(wfd, &alen, sizeof(alen)) != sizeof(alen) ||
	    write(wfd, name, alen) != (ssize_t)alen ||
	    fa_read_full(rfd, &plen, sizeof(plen)) || plen > sizeof(peer) ||
	    fa_read_full(rfd, peer, plen))
		return lchan_t_child_fail(3, "addresses");
	if (fa_ep(&s, s.info))
		return lchan_t_child_fail(4, "endpoint");
	t0 = lchan_t_now();
	if (fi_connect(s.ep, peer, "cross", 6))
		return lchan_t_child_fail(5, "fi_connect");
	if (lchan_t_now() - t0 > max_s)
		return lchan_t_child_fail(6, "fi_connect took %.1f s",
					  lchan_t_now() - t0);

	end = lchan_t_now() + FA_T_WAIT_MS / 1000;
	while (!(out_up && in_up) && lchan_t_now() < end) {
		n = fi_eq_sread(s.eq, &event, cm, sizeof(cmbuf), 1000, 0);
		if (n == -FI_EAGAIN)
			continue;
		if (n < (ssize_t)sizeof(*cm)) {
			struct fi_eq_err_entry ee = { 0 };

			fi_eq_readerr(s.eq, &ee, 0);
			return lchan_t_child_fail(7, "EQ: %zd err %d", n,
						  ee.err);
		}
		if (event == FI_CONNREQ) {
			if (acc || memcmp(cm->data, "cross", 6) ||
			    fa_ep_open(&s, cm->info, &acc) ||
			    fi_recv(acc, s.buf, 64, fi_mr_desc(s.mr), 0,
				    &rx_ctx) ||
			    fi_accept(acc, NULL, 0))
				ret = lchan_t_child_fail(8, "accept");
			fi_freeinfo(cm->info);
			if (ret)
				return ret;
		} else if (event == FI_CONNECTED && cm->fid == &s.ep->fid) {
			out_up = true;
		} else if (event == FI_CONNECTED && acc && cm->fid == &acc->fid) {
			in_up = true;
		} else {
			return lchan_t_child_fail(9, "event %u", event);
		}
	}
	if (!out_up || !in_up)
		return lchan_t_child_fail(10, "connected: out %d in %d",
					  out_up, in_up);

	memcpy(s.buf + 64, "cross", 6);
	if (fi_send(s.ep, s.buf + 64, 6, fi_mr_desc(s.mr), 0, &tx_ctx))
		return lchan_t_child_fail(11, "fi_send");
	while (got != 3) {
		n = fa_comp(&s, &e);
		if (n != 1)
			return lchan_t_child_fail(12, "completion: %zd", n);
		if (e.op_context == &tx_ctx)
			got |= 1;
		else if (e.op_context == &rx_ctx && e.len == 6 &&
			 !memcmp(s.buf, "cross", 6))
			got |= 2;
		else
			return lchan_t_child_fail(13, "completion %p", e.op_context);
	}
	/* Neither side closes before the other has its message. */
	if (write(wfd, &sync, 1) != 1 || fa_read_full(rfd, &sync, 1))
		return lchan_t_child_fail(14, "sync");
	fi_close(&acc->fid);
	fa_close(&s);
	return 0;
}

/*
 * Two sides connect to each other at once and only then read their EQs,
 * as ofi_rxm does: fi_connect returns once the request is out, without
 * waiting for the other side to take it, and FI_CONNECTED comes through
 * the EQ (fabtests' fi_unexpected_msg -e rdm).
 */
TEST_F_TIMEOUT(fapi, crossed_connects, 120)
{
	int to_child[2], to_parent[2], ret;
	pid_t pid;

	ASSERT_EQ(0, pipe(to_child));
	ASSERT_EQ(0, pipe(to_parent));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		close(to_child[1]);
		close(to_parent[0]);
		_exit(fa_cross_side(self->d.dev, self->d.addr, to_child[0],
				    to_parent[1], 5));
	}
	close(to_child[0]);
	close(to_parent[1]);
	ret = fa_cross_side(self->d.dev, self->d.addr, to_parent[0],
			    to_child[1], 5);
	EXPECT_EQ(0, ret);
	/* A side that failed leaves the other waiting on the pipe. */
	close(to_child[1]);
	close(to_parent[0]);
	EXPECT_EQ(0, fa_wait_child(pid));
}

/*
 * A connect nobody answers fails through the EQ, not in fi_connect: an
 * FI_ECONNREFUSED error event names the endpoint.  iWARP's connect opens
 * its TCP connection within the call, so there the refusal may come as
 * fi_connect's own error.
 */
TEST_F_TIMEOUT(fapi, connect_refused, 60)
{
	bool iwarp = !strcmp(variant->kind, "siw");
	struct fi_eq_err_entry ee = { 0 };
	struct fi_eq_cm_entry cm;
	struct sockaddr_in dst;
	struct fa_side s = { 0 };
	struct fi_info *hints;
	uint32_t event;
	int ret;

	hints = fa_hints(self->d.dev, 0);
	ASSERT_NE(NULL, hints);
	s.info = fa_getinfo(self, hints, &ret);
	fi_freeinfo(hints);
	ASSERT_EQ(0, ret);
	ASSERT_EQ(0, fa_open(&s, true));
	ASSERT_EQ(0, fa_ep(&s, s.info));
	/* This device's address, a port nobody listens on. */
	memcpy(&dst, s.info->src_addr, sizeof(dst));
	dst.sin_port = htons(47692 + (strcmp(variant->kind, "rxe") ? 1 : 0));
	ret = fi_connect(s.ep, &dst, NULL, 0);
	if (iwarp && ret == -FI_ECONNREFUSED) {
		fa_close(&s);
		return;
	}
	ASSERT_EQ(0, ret);
	ASSERT_EQ(-FI_EAVAIL, fi_eq_sread(s.eq, &event, &cm, sizeof(cm),
					  FA_T_WAIT_MS, 0));
	ASSERT_EQ((ssize_t)sizeof(ee), fi_eq_readerr(s.eq, &ee, 0));
	EXPECT_EQ(&s.ep->fid, ee.fid);
	EXPECT_EQ(FI_ECONNREFUSED, ee.err) {
		TH_LOG("err %d (%s)", ee.err, fi_strerror(ee.err));
	}
	fa_close(&s);
}

/*
 * What the provider does not offer (tagged messages, atomics, collectives)
 * is not in fi_getinfo's caps, and every slot of the endpoint's tables
 * for it answers -FI_ENOSYS: an application calling one gets an error,
 * never a crash through a NULL slot.
 */
TEST_F_TIMEOUT(fapi, unsupported_ops, 60)
{
	const fi_addr_t any = FI_ADDR_UNSPEC;
	struct fi_collective_attr coll_attr = { 0 };
	struct fi_msg_collective cmsg = { 0 };
	struct fi_atomic_attr atomic_attr;
	struct fi_msg_atomic amsg = { 0 };
	struct fi_msg_tagged tmsg = { 0 };
	struct fa_side s = { 0 };
	struct fi_info *hints;
	struct fi_ioc ioc, res, cmp;
	struct fid_stx *stx;
	struct fid_ep *srx;
	struct iovec iov;
	void *desc;
	size_t count;
	char *b;

	hints = fa_hints(self->d.dev, 0);
	ASSERT_NE(NULL, hints);
	ASSERT_EQ(0, fi_getinfo(FI_VERSION(1, 17), self->d.addr, "0", FI_SOURCE,
				hints, &s.info));
	fi_freeinfo(hints);
	EXPECT_EQ(0, s.info->caps & (FI_TAGGED | FI_ATOMIC | FI_COLLECTIVE));
	ASSERT_EQ(0, fa_open(&s, true));
	ASSERT_EQ(0, fa_ep(&s, s.info));
	b = s.buf;
	desc = fi_mr_desc(s.mr);
	iov = (struct iovec){ .iov_base = b, .iov_len = 8 };
	ioc = (struct fi_ioc){ .addr = b, .count = 1 };
	res = (struct fi_ioc){ .addr = b + 8, .count = 1 };
	cmp = (struct fi_ioc){ .addr = b + 16, .count = 1 };
	tmsg = (struct fi_msg_tagged){ .msg_iov = &iov, .desc = &desc,
				       .iov_count = 1, .addr = any, .tag = 1 };
	amsg = (struct fi_msg_atomic){ .msg_iov = &ioc, .desc = &desc,
				       .iov_count = 1, .addr = any,
				       .datatype = FI_UINT64, .op = FI_SUM };
	cmsg = (struct fi_msg_collective){ .msg_iov = &ioc, .desc = &desc,
					   .iov_count = 1, .coll_addr = any,
					   .root_addr = any,
					   .coll = FI_ALLREDUCE,
					   .datatype = FI_UINT64,
					   .op = FI_SUM };

	EXPECT_EQ(-FI_ENOSYS, fi_trecv(s.ep, b, 8, desc, any, 1, 0, NULL));
	EXPECT_EQ(-FI_ENOSYS, fi_trecvv(s.ep, &iov, &desc, 1, any, 1, 0, NULL));
	EXPECT_EQ(-FI_ENOSYS, fi_trecvmsg(s.ep, &tmsg, 0));
	EXPECT_EQ(-FI_ENOSYS, fi_tsend(s.ep, b, 8, desc, any, 1, NULL));
	EXPECT_EQ(-FI_ENOSYS, fi_tsendv(s.ep, &iov, &desc, 1, any, 1, NULL));
	EXPECT_EQ(-FI_ENOSYS, fi_tsendmsg(s.ep, &tmsg, 0));
	EXPECT_EQ(-FI_ENOSYS, fi_tinject(s.ep, b, 8, any, 1));
	EXPECT_EQ(-FI_ENOSYS, fi_tsenddata(s.ep, b, 8, desc, 7, any, 1, NULL));
	EXPECT_EQ(-FI_ENOSYS, fi_tinjectdata(s.ep, b, 8, 7, any, 1));

	EXPECT_EQ(-FI_ENOSYS, fi_atomic(s.ep, b, 1, desc, any, 0, 0, FI_UINT64,
					FI_SUM, NULL));
	EXPECT_EQ(-FI_ENOSYS, fi_atomicv(s.ep, &ioc, &desc, 1, any, 0, 0,
					 FI_UINT64, FI_SUM, NULL));
	EXPECT_EQ(-FI_ENOSYS, fi_atomicmsg(s.ep, &amsg, 0));
	EXPECT_EQ(-FI_ENOSYS, fi_inject_atomic(s.ep, b, 1, any, 0, 0,
					       FI_UINT64, FI_SUM));
	EXPECT_EQ(-FI_ENOSYS, fi_fetch_atomic(s.ep, b, 1, desc, b + 8, desc,
					      any, 0, 0, FI_UINT64, FI_SUM,
					      NULL));
	EXPECT_EQ(-FI_ENOSYS, fi_fetch_atomicv(s.ep, &ioc, &desc, 1, &res,
					       &desc, 1, any, 0, 0, FI_UINT64,
					       FI_SUM, NULL));
	EXPECT_EQ(-FI_ENOSYS, fi_fetch_atomicmsg(s.ep, &amsg, &res, &desc, 1,
						 0));
	EXPECT_EQ(-FI_ENOSYS, fi_compare_atomic(s.ep, b, 1, desc, b + 16, desc,
						b + 8, desc, any, 0, 0,
						FI_UINT64, FI_CSWAP, NULL));
	EXPECT_EQ(-FI_ENOSYS, fi_compare_atomicv(s.ep, &ioc, &desc, 1, &cmp,
						 &desc, 1, &res, &desc, 1, any,
						 0, 0, FI_UINT64, FI_CSWAP,
						 NULL));
	EXPECT_EQ(-FI_ENOSYS, fi_compare_atomicmsg(s.ep, &amsg, &cmp, &desc, 1,
						   &res, &desc, 1, 0));
	EXPECT_EQ(-FI_ENOSYS, fi_atomicvalid(s.ep, FI_UINT64, FI_SUM, &count));
	EXPECT_EQ(-FI_ENOSYS, fi_fetch_atomicvalid(s.ep, FI_UINT64, FI_SUM,
						   &count));
	EXPECT_EQ(-FI_ENOSYS, fi_compare_atomicvalid(s.ep, FI_UINT64, FI_CSWAP,
						     &count));
	EXPECT_EQ(-FI_ENOSYS, fi_query_atomic(s.domain, FI_UINT64, FI_SUM,
					      &atomic_attr, 0));

	EXPECT_EQ(-FI_ENOSYS, fi_barrier(s.ep, any, NULL));
	EXPECT_EQ(-FI_ENOSYS, fi_barrier2(s.ep, any, FI_MORE, NULL));
	EXPECT_EQ(-FI_ENOSYS, fi_broadcast(s.ep, b, 1, desc, any, any,
					   FI_UINT64, 0, NULL));
	EXPECT_EQ(-FI_ENOSYS, fi_alltoall(s.ep, b, 1, desc, b + 8, desc, any,
					  FI_UINT64, 0, NULL));
	EXPECT_EQ(-FI_ENOSYS, fi_allreduce(s.ep, b, 1, desc, b + 8, desc, any,
					   FI_UINT64, FI_SUM, 0, NULL));
	EXPECT_EQ(-FI_ENOSYS, fi_allgather(s.ep, b, 1, desc, b + 8, desc, any,
					   FI_UINT64, 0, NULL));
	EXPECT_EQ(-FI_ENOSYS, fi_reduce_scatter(s.ep, b, 1, desc, b + 8, desc,
						any, FI_UINT64, FI_SUM, 0,
						NULL));
	EXPECT_EQ(-FI_ENOSYS, fi_reduce(s.ep, b, 1, desc, b + 8, desc, any, any,
					FI_UINT64, FI_SUM, 0, NULL));
	EXPECT_EQ(-FI_ENOSYS, fi_scatter(s.ep, b, 1, desc, b + 8, desc, any,
					 any, FI_UINT64, 0, NULL));
	EXPECT_EQ(-FI_ENOSYS, fi_gather(s.ep, b, 1, desc, b + 8, desc, any, any,
					FI_UINT64, 0, NULL));
	/* The one slot libfabric has no wrapper for. */
	EXPECT_EQ(-FI_ENOSYS, s.ep->collective->msg(s.ep, &cmsg, &res, &desc,
						    1, 0));
	EXPECT_EQ(-FI_ENOSYS, fi_query_collective(s.domain, FI_ALLREDUCE,
						  &coll_attr, 0));
	/* Shared contexts, which fi_getinfo does not offer either. */
	EXPECT_EQ(-FI_ENOSYS, fi_stx_context(s.domain, NULL, &stx, NULL));
	EXPECT_EQ(-FI_ENOSYS, fi_srx_context(s.domain, NULL, &srx, NULL));
	fa_close(&s);
}

TEST_HARNESS_MAIN
