// SPDX-License-Identifier: GPL-2.0
/*
 * Links between lchan modules (the sources' Documentation/link.md), in
 * one machine: a channel's connect to the device's own address makes the
 * active link and the module's service accepts it as a passive one.
 *
 * The link is made on first need and shown in sysfs; later connects use
 * it; it expires when idle; links=0 and device removal end it.  A test
 * peer of its own (librdmacm, RDMA_PS_IB, the link port) plays a hostile
 * module: a connect without a hello is refused; malformed, replayed,
 * unexpected and flooding messages are refused and counted while the
 * link stays up and answers; a set-up request gets its reply; a message
 * larger than a buffer ends that link only.  On siw no link is made and
 * the service refuses a link request.
 *
 * Needs root (the module parameters).  Each test turns links on with
 * /sys/module/lchan/parameters/links and off again at its end, which
 * ends every link.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <poll.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "kselftest_harness.h"
#include "lchan_test.h"

#define LINKS "/sys/kernel/lchan/links"

/* The wire, as Documentation/link.md gives it (big-endian). */
#define W_MAGIC		0x6c636c6b
#define W_HDR		24
#define W_ECHO_REQ	1
#define W_ECHO_REP	2
#define W_SETUP_REQ	3
#define W_SETUP_REP	4
#define W_CANCEL	5
#define W_SETUP_REQ_LEN	128
#define W_SETUP_REP_LEN	64
#define W_ST_NO_LISTENER	1

FIXTURE(link) {
	struct lchan_t_dev d;
	char netdev[32];
	char links[8], idle[32];
	int on;
};

LCHAN_T_VARIANTS(link);

FIXTURE_SETUP(link)
{
	char name[64];

	LCHAN_T_NEED_DEV(&self->d, variant->kind);
	if (!lchan_t_module_loaded())
		LCHAN_T_SETUP_SKIP("lchan is not loaded");
	if (lchan_t_get_param("links", self->links, sizeof(self->links)) ||
	    lchan_t_get_param("link_idle_ms", self->idle, sizeof(self->idle)))
		LCHAN_T_SETUP_SKIP("this lchan has no links");
	if (geteuid())
		LCHAN_T_SETUP_SKIP("writing module parameters needs root");
	lchan_t_raise_memlock();
	snprintf(name, sizeof(name), "LCHAN_%s_NETDEV",
		 strcmp(variant->kind, "siw") ? "RXE" : "SIW");
	snprintf(self->netdev, sizeof(self->netdev), "%s",
		 getenv(name) ? getenv(name) : "");
	ASSERT_EQ(0, lchan_t_set_param("links", "1"))
		TH_LOG("links=1: %s", strerror(errno));
	self->on = 1;
}

FIXTURE_TEARDOWN(link)
{
	if (!self->on)
		return;
	lchan_t_set_param("link_idle_ms", self->idle);
	/* Off first: that ends every link this test made. */
	lchan_t_set_param("links", "0");
	if (!strcmp(self->links, "Y"))
		lchan_t_set_param("links", "1");
}

/* A link attribute as text; -errno when unreadable. */
static int link_attr(unsigned id, const char *name, char *buf, size_t len)
{
	char path[128];

	snprintf(path, sizeof(path), LINKS "/%u/%s", id, name);
	return lchan_t_read_sysfs(path, buf, len);
}

static unsigned long long link_num(unsigned id, const char *name)
{
	char buf[64];

	if (link_attr(id, name, buf, sizeof(buf)))
		return ~0ULL;
	return strtoull(buf, NULL, 10);
}

/*
 * The id of a link to or from @peer in @role ("active", "passive") and,
 * unless NULL, @state; 0 if none.  @count gets how many match.
 */
static unsigned find_link(const char *peer, const char *role,
			  const char *state, unsigned *count)
{
	unsigned found = 0, n = 0;
	struct dirent *de;
	char buf[80];
	DIR *d;

	d = opendir(LINKS);
	if (!d)
		return 0;
	while ((de = readdir(d))) {
		unsigned id;

		if (de->d_name[0] == '.')
			continue;
		id = strtoul(de->d_name, NULL, 10);
		if (link_attr(id, "peer", buf, sizeof(buf)) ||
		    strcmp(buf, peer))
			continue;
		if (link_attr(id, "role", buf, sizeof(buf)) ||
		    strcmp(buf, role))
			continue;
		if (state && (link_attr(id, "state", buf, sizeof(buf)) ||
			      strcmp(buf, state)))
			continue;
		found = id;
		n++;
	}
	closedir(d);
	if (count)
		*count = n;
	return found;
}

/* Until a link as find_link() says exists, or @secs pass. */
static unsigned wait_link(const char *peer, const char *role,
			  const char *state, double secs)
{
	double t0 = lchan_t_now();
	unsigned id;

	do {
		id = find_link(peer, role, state, NULL);
		if (id)
			return id;
		usleep(20000);
	} while (lchan_t_now() - t0 < secs);
	return 0;
}

/* Until no link to or from @peer is left, or @secs pass; 0 when none is. */
static int wait_no_link(const char *peer, double secs)
{
	double t0 = lchan_t_now();

	do {
		if (!find_link(peer, "active", NULL, NULL) &&
		    !find_link(peer, "passive", NULL, NULL))
			return 0;
		usleep(20000);
	} while (lchan_t_now() - t0 < secs);
	return -ETIMEDOUT;
}

/* A channel pair to the device's own address, closed again. */
static int connect_once(struct lchan_t_dev *d)
{
	struct lchan_t_ep srv = { .slot = 256, .nrecv = 4, .nsend = 4 };
	struct lchan_t_ep cli = { .slot = 256, .nrecv = 4, .nsend = 4 };
	int ret;

	ret = lchan_t_ep_pair(&srv, &cli, d->addr, NULL);
	lchan_t_ep_close(&cli);
	lchan_t_ep_close(&srv);
	return ret;
}

static int need_rxe(const char *kind)
{
	return !strcmp(kind, "rxe");
}

TEST_F(link, made_on_first_need)
{
	char buf[64];
	unsigned act, pas, n;
	double t0;

	if (!need_rxe(variant->kind)) {
		/* iWARP: the connect goes on through rdma_cm, no link. */
		ASSERT_EQ(0, connect_once(&self->d));
		usleep(500000);
		EXPECT_EQ(0, find_link(self->d.addr, "active", NULL, NULL));
		return;
	}
	EXPECT_EQ(0, find_link(self->d.addr, "active", NULL, NULL));
	ASSERT_EQ(0, connect_once(&self->d));
	act = wait_link(self->d.addr, "active", "up", 5);
	ASSERT_NE(0, act) TH_LOG("no active link came up");
	/* The module's own service accepted it. */
	pas = wait_link(self->d.addr, "passive", "up", 5);
	ASSERT_NE(0, pas) TH_LOG("no passive link came up");
	ASSERT_EQ(0, link_attr(act, "device", buf, sizeof(buf)));
	EXPECT_STREQ(self->d.dev, buf);
	ASSERT_EQ(0, link_attr(act, "local", buf, sizeof(buf)));
	EXPECT_STREQ(self->d.addr, buf);
	EXPECT_EQ(1, link_num(act, "version"));
	EXPECT_EQ(1, link_num(pas, "version"));
	EXPECT_LE(1, link_num(act, "port"));
	EXPECT_EQ(0, link_num(act, "refused"));
	EXPECT_EQ(0, link_num(pas, "refused"));
	/* The connect that made the link was set up over it. */
	EXPECT_EQ(1, link_num(act, "setups_done"));
	EXPECT_EQ(1, link_num(pas, "setups_done"));
	/* The active side's first echo gives the round trip. */
	t0 = lchan_t_now();
	while (!link_num(act, "rtt_us") && lchan_t_now() - t0 < 3)
		usleep(20000);
	EXPECT_LT(0, link_num(act, "rtt_us"));
	EXPECT_GT(600000, link_num(act, "idle_ms"));
	find_link(self->d.addr, "active", NULL, &n);
	EXPECT_EQ(1, n);
}

TEST_F(link, later_connects_use_the_same_link)
{
	unsigned act, again, n;

	if (!need_rxe(variant->kind))
		SKIP(return, "links serve InfiniBand and RoCE ports");
	ASSERT_EQ(0, connect_once(&self->d));
	act = wait_link(self->d.addr, "active", "up", 5);
	ASSERT_NE(0, act);
	ASSERT_EQ(0, connect_once(&self->d));
	ASSERT_EQ(0, connect_once(&self->d));
	again = find_link(self->d.addr, "active", NULL, &n);
	EXPECT_EQ(act, again);
	EXPECT_EQ(1, n);
	find_link(self->d.addr, "passive", NULL, &n);
	EXPECT_EQ(1, n);
}

TEST_F(link, idle_link_expires)
{
	if (!need_rxe(variant->kind))
		SKIP(return, "links serve InfiniBand and RoCE ports");
	ASSERT_EQ(0, lchan_t_set_param("link_idle_ms", "200"));
	ASSERT_EQ(0, connect_once(&self->d));
	ASSERT_NE(0, wait_link(self->d.addr, "active", NULL, 5));
	/* A look a second, then the passive side hears the disconnect. */
	EXPECT_EQ(0, wait_no_link(self->d.addr, 5))
		TH_LOG("links still there 5 s after their last use");
}

TEST_F(link, links_off_ends_every_link)
{
	if (!need_rxe(variant->kind))
		SKIP(return, "links serve InfiniBand and RoCE ports");
	ASSERT_EQ(0, connect_once(&self->d));
	ASSERT_NE(0, wait_link(self->d.addr, "passive", "up", 5));
	ASSERT_EQ(0, lchan_t_set_param("links", "0"));
	/* Synchronous: gone when the write returns. */
	EXPECT_EQ(0, find_link(self->d.addr, "active", NULL, NULL));
	EXPECT_EQ(0, find_link(self->d.addr, "passive", NULL, NULL));
	/* Nothing is made with links off. */
	ASSERT_EQ(0, connect_once(&self->d));
	usleep(300000);
	EXPECT_EQ(0, find_link(self->d.addr, "active", NULL, NULL));
}

TEST_F(link, device_removal_ends_its_links)
{
	char dir[160];
	double t0;

	if (!need_rxe(variant->kind))
		SKIP(return, "links serve InfiniBand and RoCE ports");
	if (!*self->netdev)
		SKIP(return, "netdev of %s unknown", self->d.dev);
	ASSERT_EQ(0, connect_once(&self->d));
	ASSERT_NE(0, wait_link(self->d.addr, "passive", "up", 5));
	t0 = lchan_t_now();
	snprintf(dir, sizeof(dir), "rdma link delete %s", self->d.dev);
	ASSERT_EQ(0, system(dir));
	TH_LOG("device removal took %.2f s with two links", lchan_t_now() - t0);
	EXPECT_EQ(0, find_link(self->d.addr, "active", NULL, NULL));
	EXPECT_EQ(0, find_link(self->d.addr, "passive", NULL, NULL));
	snprintf(dir, sizeof(dir), "rdma link add %s type rxe netdev %s",
		 self->d.dev, self->netdev);
	ASSERT_EQ(0, system(dir));
	snprintf(dir, sizeof(dir), "/sys/kernel/lchan/devices/%s",
		 self->d.dev);
	ASSERT_EQ(0, lchan_t_wait_path(dir, 1, 10));
	/* A new device, a new link. */
	ASSERT_EQ(0, connect_once(&self->d));
	EXPECT_NE(0, wait_link(self->d.addr, "active", "up", 5));
}

/* ------------------------------------------------------------------ */
/* A test peer of its own: librdmacm on the link port, bytes by hand. */

#define P_SLOT		512
#define P_RECVS		128
#define P_SENDS		64

struct peer {
	struct rdma_event_channel *ec;
	struct rdma_cm_id *id;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	uint8_t *buf;		/* P_RECVS receive slots, then P_SENDS */
	unsigned sends_out, next_send;
	uint64_t next_id;	/* our requests' ids */
	int version;		/* the link's, from the accept's hello */
	uint8_t gid[16];	/* our path's source GID and LID */
	uint16_t lid;
	int have_path;
	unsigned long long echo_reps;	/* echo replies received */
	uint64_t due;		/* the link's echo request to answer */
};

static void put_be(uint8_t *p, unsigned width, unsigned long long v)
{
	while (width--) {
		p[width] = v;
		v >>= 8;
	}
}

static unsigned long long get_be(const uint8_t *p, unsigned width)
{
	unsigned long long v = 0;

	while (width--)
		v = v << 8 | *p++;
	return v;
}

/* A header at @m: @len the whole message. */
static void put_hdr(uint8_t *m, int version, int type, unsigned len,
		    uint64_t id)
{
	memset(m, 0, W_HDR);
	put_be(m, 4, W_MAGIC);
	m[4] = version;
	m[5] = type;
	put_be(m + 6, 2, len);
	put_be(m + 16, 8, id);
}

/* A valid SETUP_REQ of @p's to port @port. */
static void put_setup(struct peer *p, uint8_t *m, uint64_t id, unsigned port)
{
	uint8_t *b = m + W_HDR;

	memset(m, 0, W_SETUP_REQ_LEN);
	put_hdr(m, p->version, W_SETUP_REQ, W_SETUP_REQ_LEN, id);
	put_be(b, 4, 0x1234);		/* qpn */
	put_be(b + 4, 4, 0x42);		/* psn */
	put_be(b + 8, 2, 40000);	/* src_port */
	put_be(b + 10, 2, port);	/* dst_port */
	b[12] = 3;			/* mtu 1024 */
	b[15] = 6;			/* retry */
	b[16] = 7;			/* rnr_retry */
	put_be(b + 20, 4, 64);		/* sq_entries */
	put_be(b + 24, 4, 64);		/* rq_entries */
	put_be(b + 28, 2, p->lid);
	memcpy(b + 32, p->gid, 16);
}

static int peer_event(struct peer *p, int ms, struct rdma_cm_event *copy)
{
	struct pollfd pfd = { .fd = p->ec->fd, .events = POLLIN };
	struct rdma_cm_event *ev;
	int type;

	if (poll(&pfd, 1, ms) <= 0)
		return -ETIMEDOUT;
	if (rdma_get_cm_event(p->ec, &ev))
		return -errno;
	type = ev->event;
	if (copy)
		*copy = *ev;
	/* The accept's hello: its version, checked by the caller. */
	if (type == RDMA_CM_EVENT_ESTABLISHED &&
	    ev->param.conn.private_data_len >= 16) {
		const uint8_t *h = ev->param.conn.private_data;

		p->version = get_be(h, 4) == W_MAGIC && h[4] == h[5] ? h[4] : -1;
	}
	rdma_ack_cm_event(ev);
	return type;
}

static int peer_post_recv(struct peer *p, unsigned i)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)(p->buf + (size_t)i * P_SLOT),
		.length = P_SLOT,
		.lkey = p->mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = i, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;

	return ibv_post_recv(p->id->qp, &wr, &bad) ? -EIO : 0;
}

static void peer_close(struct peer *p)
{
	if (p->id) {
		rdma_disconnect(p->id);
		if (p->id->qp)
			rdma_destroy_qp(p->id);
	}
	if (p->mr)
		ibv_dereg_mr(p->mr);
	if (p->cq)
		ibv_destroy_cq(p->cq);
	if (p->pd)
		ibv_dealloc_pd(p->pd);
	if (p->id)
		rdma_destroy_id(p->id);
	if (p->ec)
		rdma_destroy_event_channel(p->ec);
	free(p->buf);
	memset(p, 0, sizeof(*p));
}

/*
 * Connect to the link service of @addr with @hello (@hello_len bytes,
 * none when 0): the event the connect ended with (ESTABLISHED, REJECTED,
 * ...) or -errno.
 */
static int peer_connect(struct peer *p, const char *addr, const void *hello,
			unsigned hello_len)
{
	struct rdma_conn_param param = {
		.private_data = hello,
		.private_data_len = hello_len,
		.retry_count = 6,
		.rnr_retry_count = 7,
	};
	struct ibv_qp_init_attr attr = { 0 };
	struct sockaddr_in dst = { .sin_family = AF_INET };
	char port[16];
	unsigned i;
	int ret;

	memset(p, 0, sizeof(*p));
	p->next_id = 1;
	if (lchan_t_get_param("link_port", port, sizeof(port)))
		return -ENOENT;
	dst.sin_port = htons(atoi(port));
	if (inet_pton(AF_INET, addr, &dst.sin_addr) != 1)
		return -EAFNOSUPPORT;
	p->ec = rdma_create_event_channel();
	if (!p->ec)
		return -errno;
	if (rdma_create_id(p->ec, &p->id, NULL, RDMA_PS_IB))
		return -errno;
	if (rdma_resolve_addr(p->id, NULL, (struct sockaddr *)&dst, 2000))
		return -errno;
	ret = peer_event(p, 5000, NULL);
	if (ret != RDMA_CM_EVENT_ADDR_RESOLVED)
		return ret < 0 ? ret : -EHOSTUNREACH;
	if (rdma_resolve_route(p->id, 2000))
		return -errno;
	ret = peer_event(p, 5000, NULL);
	if (ret != RDMA_CM_EVENT_ROUTE_RESOLVED)
		return ret < 0 ? ret : -EHOSTUNREACH;
	if (p->id->route.num_paths > 0) {
		struct ibv_port_attr port_attr;

		if (ibv_query_port(p->id->verbs, p->id->port_num, &port_attr))
			return -EIO;
		memcpy(p->gid, p->id->route.path_rec[0].sgid.raw, 16);
		/*
		 * RoCE has no LIDs, and a RoCE path record's LID fields do
		 * not hold one: the wire's LID is 0 there.
		 */
		p->lid = port_attr.link_layer == IBV_LINK_LAYER_ETHERNET ? 0 :
			 ntohs(p->id->route.path_rec[0].slid);
		p->have_path = 1;
	}
	p->pd = ibv_alloc_pd(p->id->verbs);
	p->cq = ibv_create_cq(p->id->verbs, P_RECVS + P_SENDS, NULL, NULL, 0);
	p->buf = calloc(P_RECVS + P_SENDS, P_SLOT);
	if (!p->pd || !p->cq || !p->buf)
		return -ENOMEM;
	p->mr = ibv_reg_mr(p->pd, p->buf, (size_t)(P_RECVS + P_SENDS) * P_SLOT,
			   IBV_ACCESS_LOCAL_WRITE);
	if (!p->mr)
		return -errno;
	attr.send_cq = p->cq;
	attr.recv_cq = p->cq;
	attr.cap.max_send_wr = P_SENDS;
	attr.cap.max_recv_wr = P_RECVS;
	attr.cap.max_send_sge = 1;
	attr.cap.max_recv_sge = 1;
	attr.qp_type = IBV_QPT_RC;
	attr.sq_sig_all = 1;
	if (rdma_create_qp(p->id, p->pd, &attr))
		return -errno;
	for (i = 0; i < P_RECVS; i++)
		if (peer_post_recv(p, i))
			return -EIO;
	if (rdma_connect(p->id, &param))
		return -errno;
	return peer_event(p, 5000, NULL);
}

/* The version 1 hello of a peer speaking @min..@max. */
static void hello(uint8_t h[16], int min, int max)
{
	memset(h, 0, 16);
	put_be(h, 4, W_MAGIC);
	h[4] = min;
	h[5] = max;
}

/*
 * One completion: a message into @msg (P_SLOT bytes) and its length; 0
 * for a send's; -EAGAIN for none; -EIO for an error.  Echo replies are
 * counted, and the link's own echo request is kept to be answered.
 */
static int peer_poll(struct peer *p, uint8_t *msg)
{
	struct ibv_wc wc;
	int n;

	n = ibv_poll_cq(p->cq, 1, &wc);
	if (n < 0)
		return -EIO;
	if (!n)
		return -EAGAIN;
	if (wc.status != IBV_WC_SUCCESS)
		return -EIO;
	if (wc.opcode == IBV_WC_SEND) {
		p->sends_out--;
		return 0;
	}
	memcpy(msg, p->buf + wc.wr_id * P_SLOT, wc.byte_len);
	if (peer_post_recv(p, wc.wr_id))
		return -EIO;
	if (wc.byte_len >= W_HDR && msg[5] == W_ECHO_REP)
		p->echo_reps++;
	if (wc.byte_len >= W_HDR && msg[5] == W_ECHO_REQ)
		p->due = get_be(msg + 16, 8);
	return wc.byte_len;
}

/* Reap completions until fewer than @max sends are out. */
static int peer_reap_sends(struct peer *p, unsigned max)
{
	uint8_t msg[P_SLOT];
	int n;

	while (p->sends_out >= max) {
		n = peer_poll(p, msg);
		if (n == -EAGAIN)
			usleep(50);
		else if (n < 0)
			return n;
	}
	return 0;
}

static int peer_send(struct peer *p, const void *msg, unsigned len);

/*
 * The next message from the link but the link's echo requests, which
 * are answered on the way, into @msg: its length, -ETIMEDOUT after @ms,
 * -EIO on an error.
 */
static int peer_recv(struct peer *p, uint8_t *msg, int ms)
{
	double t0 = lchan_t_now();
	int n;

	for (;;) {
		if (p->due) {
			uint8_t rep[W_HDR];

			put_hdr(rep, p->version, W_ECHO_REP, W_HDR, p->due);
			p->due = 0;
			if (peer_send(p, rep, W_HDR))
				return -EIO;
		}
		n = peer_poll(p, msg);
		if (n == -EAGAIN) {
			if ((lchan_t_now() - t0) * 1000 >= ms)
				return -ETIMEDOUT;
			usleep(100);
			continue;
		}
		if (n < 0)
			return n;
		if (n > 0 && !(n >= W_HDR && msg[5] == W_ECHO_REQ))
			return n;
	}
}

static int peer_send(struct peer *p, const void *msg, unsigned len)
{
	unsigned slot = P_RECVS + p->next_send++ % P_SENDS;
	struct ibv_sge sge = {
		.addr = (uintptr_t)(p->buf + (size_t)slot * P_SLOT),
		.length = len,
		.lkey = p->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = slot,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
	};
	struct ibv_send_wr *bad;

	if (len > P_SLOT || peer_reap_sends(p, P_SENDS))
		return -EIO;
	memcpy(p->buf + (size_t)slot * P_SLOT, msg, len);
	if (ibv_post_send(p->id->qp, &wr, &bad))
		return -EIO;
	p->sends_out++;
	return 0;
}

/* An echo of ours answered: the link is up, and read all before it. */
static int peer_echo(struct peer *p)
{
	uint8_t m[P_SLOT];
	uint64_t id = p->next_id++;
	int len;

	put_hdr(m, p->version, W_ECHO_REQ, W_HDR, id);
	if (peer_send(p, m, W_HDR))
		return -EIO;
	for (;;) {
		len = peer_recv(p, m, 3000);
		if (len < 0)
			return len;
		if (len == W_HDR && m[5] == W_ECHO_REP && get_be(m + 16, 8) == id)
			return 0;
	}
}

FIXTURE(hostile) {
	struct lchan_t_dev d;
	char links[8];
	struct peer p;
	unsigned link;
	int on;
};

LCHAN_T_VARIANTS(hostile);

FIXTURE_SETUP(hostile)
{
	uint8_t h[16];
	int ret;

	LCHAN_T_NEED_DEV(&self->d, variant->kind);
	if (!lchan_t_module_loaded())
		LCHAN_T_SETUP_SKIP("lchan is not loaded");
	if (lchan_t_get_param("links", self->links, sizeof(self->links)))
		LCHAN_T_SETUP_SKIP("this lchan has no links");
	if (geteuid())
		LCHAN_T_SETUP_SKIP("writing module parameters needs root");
	ASSERT_EQ(0, lchan_t_set_param("links", "1"));
	self->on = 1;
	if (strcmp(variant->kind, "rxe"))
		return;		/* siw: the request itself is the test */
	hello(h, 1, 1);
	ret = peer_connect(&self->p, self->d.addr, h, sizeof(h));
	ASSERT_EQ(RDMA_CM_EVENT_ESTABLISHED, ret)
		TH_LOG("connect to the link service: %d", ret);
	ASSERT_EQ(1, self->p.version);
	self->link = wait_link(self->d.addr, "passive", "up", 5);
	ASSERT_NE(0, self->link);
	ASSERT_EQ(0, peer_echo(&self->p));
}

FIXTURE_TEARDOWN(hostile)
{
	peer_close(&self->p);
	if (!self->on)
		return;
	lchan_t_set_param("links", "0");
	if (!strcmp(self->links, "Y"))
		lchan_t_set_param("links", "1");
}

TEST_F(hostile, a_request_without_hello_is_refused)
{
	struct peer q;
	uint8_t h[16];

	if (strcmp(variant->kind, "rxe")) {
		/* iWARP: the service refuses every link request. */
		hello(h, 1, 1);
		EXPECT_NE(RDMA_CM_EVENT_ESTABLISHED,
			  peer_connect(&q, self->d.addr, h, sizeof(h)));
		peer_close(&q);
		EXPECT_EQ(0, find_link(self->d.addr, "passive", NULL, NULL));
		return;
	}
	EXPECT_EQ(RDMA_CM_EVENT_REJECTED, peer_connect(&q, self->d.addr,
						       NULL, 0));
	peer_close(&q);
	hello(h, 2, 3);
	EXPECT_EQ(RDMA_CM_EVENT_REJECTED, peer_connect(&q, self->d.addr,
						       h, sizeof(h)));
	peer_close(&q);
	hello(h, 1, 1);
	h[0] ^= 1;
	EXPECT_EQ(RDMA_CM_EVENT_REJECTED, peer_connect(&q, self->d.addr,
						       h, sizeof(h)));
	peer_close(&q);
	/* A peer's newer range is met at the version both speak. */
	hello(h, 1, 9);
	EXPECT_EQ(RDMA_CM_EVENT_ESTABLISHED, peer_connect(&q, self->d.addr,
							  h, sizeof(h)));
	EXPECT_EQ(1, q.version);
	peer_close(&q);
}

/*
 * Each message refused and counted, none answered, the link still up
 * and answering echoes after each.
 */
TEST_F(hostile, malformed_and_unexpected_messages_are_refused)
{
	struct peer *p = &self->p;
	unsigned long long before, after;
	uint8_t m[P_SLOT];
	unsigned i;
	struct {
		const char *what;
		unsigned len;
	} cases[] = {
		{ "another magic", W_HDR },
		{ "another version", W_HDR },
		{ "an unknown type", W_HDR },
		{ "a length field that lies", W_HDR },
		{ "fewer bytes than a header", 20 },
		{ "a header flag", W_HDR },
		{ "request id 0", W_HDR },
		{ "a replayed request id", W_HDR },
		{ "a reply to no request", W_HDR },
		{ "a cancel of no request", W_HDR },
		{ "a set-up from another GID", W_SETUP_REQ_LEN },
		{ "a set-up with a reserved byte", W_SETUP_REQ_LEN },
		{ "a set-up request of QPN 1", W_SETUP_REQ_LEN },
		{ "a set-up from another LID", W_SETUP_REQ_LEN },
	};

	if (strcmp(variant->kind, "rxe"))
		SKIP(return, "no link on iWARP");
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t id = p->next_id++;

		memset(m, 0, sizeof(m));
		put_hdr(m, p->version, W_ECHO_REQ, W_HDR, id);
		switch (i) {
		case 0: m[0] ^= 0x80; break;
		case 1: m[4] = 2; break;
		case 2: m[5] = 9; break;
		case 3: put_be(m + 6, 2, 128); break;
		case 4: break;
		case 5: m[11] = 1; break;
		case 6: put_be(m + 16, 8, 0); break;
		case 7: put_be(m + 16, 8, 1); break;	/* the setup's echo */
		case 8:
			put_hdr(m, p->version, W_ECHO_REP, W_HDR, 1ULL << 40);
			break;
		case 9:
			put_hdr(m, p->version, W_CANCEL, W_HDR, 1ULL << 40);
			break;
		case 10:
			put_setup(p, m, id, 1);
			m[W_HDR + 32] ^= 0xff;
			break;
		case 11:
			put_setup(p, m, id, 1);
			m[W_HDR + 19] = 1;
			break;
		case 12:
			put_setup(p, m, id, 1);
			put_be(m + W_HDR, 4, 1);
			break;
		case 13:
			put_setup(p, m, id, 1);
			m[W_HDR + 29] ^= 1;
			break;
		}
		before = link_num(self->link, "refused");
		ASSERT_EQ(0, peer_send(p, m, cases[i].len));
		/* RC keeps order: the echo is handled after it. */
		ASSERT_EQ(0, peer_echo(p)) TH_LOG("after %s", cases[i].what);
		after = link_num(self->link, "refused");
		EXPECT_EQ(before + 1, after) TH_LOG("%s", cases[i].what);
	}
	EXPECT_EQ(0, link_num(self->link, "setups_failed"));
	find_link(self->d.addr, "passive", "up", &i);
	EXPECT_EQ(1, i);
}

TEST_F(hostile, a_setup_request_is_answered)
{
	struct peer *p = &self->p;
	uint8_t m[P_SLOT];
	uint64_t id = p->next_id++;
	char gid[INET6_ADDRSTRLEN];
	unsigned status;
	double t0;
	int len;

	if (strcmp(variant->kind, "rxe"))
		SKIP(return, "no link on iWARP");
	if (!p->have_path)
		SKIP(return, "no path record to take the GID from");
	/* Port 1: nobody listens there. */
	put_setup(p, m, id, 1);
	inet_ntop(AF_INET6, p->gid, gid, sizeof(gid));
	ASSERT_EQ(0, peer_send(p, m, W_SETUP_REQ_LEN));
	do {
		len = peer_recv(p, m, 3000);
		ASSERT_LT(0, len)
			TH_LOG("no reply to a set-up from GID %s LID %u: "
			       "refused %llu, setups_failed %llu", gid, p->lid,
			       link_num(self->link, "refused"),
			       link_num(self->link, "setups_failed"));
	} while (m[5] != W_SETUP_REP);
	ASSERT_EQ(W_SETUP_REP_LEN, len);
	EXPECT_EQ(id, get_be(m + 16, 8));
	status = get_be(m + W_HDR, 4);
	EXPECT_EQ(W_ST_NO_LISTENER, status);
	/* The kernel counts a set-up after its reply, before the next. */
	ASSERT_EQ(0, peer_echo(p));
	EXPECT_EQ(1, link_num(self->link, "setups_failed"));
	EXPECT_EQ(0, link_num(self->link, "refused"));
	/* The same id again is a replay. */
	put_setup(p, m, id, 1);
	ASSERT_EQ(0, peer_send(p, m, W_SETUP_REQ_LEN));
	ASSERT_EQ(0, peer_echo(p));
	EXPECT_EQ(1, link_num(self->link, "refused"));
	/*
	 * A cancel of an answered set-up comes late: the set-up work that
	 * looks for its channel counts it, after the echo's reply perhaps.
	 */
	put_hdr(m, p->version, W_CANCEL, W_HDR, id);
	ASSERT_EQ(0, peer_send(p, m, W_HDR));
	ASSERT_EQ(0, peer_echo(p));
	t0 = lchan_t_now();
	while (link_num(self->link, "stale") != 1 && lchan_t_now() - t0 < 2)
		usleep(10000);
	EXPECT_EQ(1, link_num(self->link, "stale"));
}

/* Every request of a flood is answered or counted refused; none is lost. */
TEST_F(hostile, a_flood_is_answered_or_refused)
{
	struct peer *p = &self->p;
	unsigned long long before, replies, refused;
	unsigned sent = 2000, i;
	uint8_t m[P_SLOT];

	if (strcmp(variant->kind, "rxe"))
		SKIP(return, "no link on iWARP");
	before = link_num(self->link, "refused");
	replies = p->echo_reps;
	for (i = 0; i < sent; i++) {
		put_hdr(m, p->version, W_ECHO_REQ, W_HDR, p->next_id++);
		ASSERT_EQ(0, peer_send(p, m, W_HDR));
		/* Take what came, so the kernel's replies find receives. */
		while (peer_recv(p, m, 0) > 0)
			;
	}
	/*
	 * The flood may leave the link's rate bucket empty (20000 a second,
	 * a burst of 32): the last echo comes once it has refilled, and is
	 * answered after all before it were handled.
	 */
	usleep(10000);
	if (peer_echo(p)) {
		char state[32] = "gone";

		link_attr(self->link, "state", state, sizeof(state));
		TH_LOG("no answer after the flood: link %u %s, refused %llu (%llu before), %llu echo replies",
		       self->link, state, link_num(self->link, "refused"),
		       before, p->echo_reps - replies);
		ASSERT_TRUE(0);
	}
	while (peer_recv(p, m, 200) > 0)
		;
	replies = p->echo_reps - replies - 1;
	refused = link_num(self->link, "refused") - before;
	TH_LOG("%u echoes: %llu answered, %llu refused", sent, replies,
	       refused);
	EXPECT_EQ(sent, replies + refused);
	EXPECT_NE(0, find_link(self->d.addr, "passive", "up", NULL));
}

TEST_F(hostile, a_message_larger_than_a_buffer_ends_that_link_only)
{
	struct peer *p = &self->p;
	uint8_t m[P_SLOT] = { 0 };
	unsigned act;

	if (strcmp(variant->kind, "rxe"))
		SKIP(return, "no link on iWARP");
	/* Another link, of the module's own. */
	ASSERT_EQ(0, connect_once(&self->d));
	act = wait_link(self->d.addr, "active", "up", 5);
	ASSERT_NE(0, act);
	put_hdr(m, p->version, W_ECHO_REQ, 300, p->next_id++);
	ASSERT_EQ(0, peer_send(p, m, 300));
	{
		char path[64];

		snprintf(path, sizeof(path), LINKS "/%u", self->link);
		EXPECT_EQ(0, lchan_t_wait_path(path, 0, 5))
			TH_LOG("the link that took it is still there");
	}
	EXPECT_EQ(act, find_link(self->d.addr, "active", "up", NULL));
}

TEST_HARNESS_MAIN
