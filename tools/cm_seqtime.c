// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * cm_seqtime: rdma_cm's own connection set-up, one connection at a time in
 * one warm process: the peer of lchan_conntime's sequential phase, which
 * librdmacm's cmtime (all connections at once, or one per fresh process)
 * does not time.  A bench program, not installed.
 *
 *   cm_seqtime -a ADDR [-p PORT] [-n N] [-e E] [-g SGE] [-q CQE] [--json]
 *
 * A listener thread accepts on ADDR:PORT, giving each request a CQ and a QP
 * of the same size as the connecting side's.  The main thread connects N
 * times, one after the other, each timed from rdma_create_id() to
 * ESTABLISHED and split into the steps cmtime names (create id + resolve
 * addr, resolve route, create qp: CQ and QP, connect), and closes it
 * (disconnect, destroy QP, CQ and id, timed); the next one starts once the
 * listener has destroyed its side.  One connection is open at a time: siw
 * (Linux 6.1) refuses a process's 49th user QP (create qp: ENOSPC), and
 * lchan_conntime keeps its sequential channels open.  The protection domain of each side is made
 * once, at its first connection, as lchan makes its context's.  QPs have
 * E WRs and SGE SGEs per queue (at most the device's) and a CQ of CQE
 * entries (default 1, 1 and 2E: cmtime's QP); lchan's default channel is
 * -e 131 -g 16 -q 261.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/rdma_cma.h>

#include "cli.h"
#include "measure.h"

#define CS_TIMEOUT_MS	5000

enum cs_step {
	CS_RESOLVE_ADDR,	/* create id + resolve addr */
	CS_RESOLVE_ROUTE,
	CS_CREATE_QP,		/* CQ + QP */
	CS_CONNECT,		/* rdma_connect() to ESTABLISHED */
	CS_STEPS
};

static const char *const cs_step_name[CS_STEPS] = {
	"resolve_addr", "resolve_route", "create_qp", "connect",
};

struct cs_opts {
	const char *addr;
	const char *port;
	unsigned n;
	unsigned entries;
	unsigned sge;
	unsigned cqe;
	bool json;
};

/*
 * One side's protection domain, made at its first connection, and the SGEs
 * of its QPs: the option's, at most the device's (as lchan sizes them).
 */
struct cs_side {
	struct ibv_pd *pd;
	const struct cs_opts *o;
	unsigned sge;
};

struct cs_server {
	struct cs_side side;
	struct rdma_event_channel *ch;
	struct rdma_cm_id *listen_id;
	unsigned accepted;	/* atomic */
	unsigned closed;	/* atomic */
	int err;		/* atomic; first failure */
	bool stop;		/* atomic */
};

static void cs_usage(void)
{
	printf("usage: cm_seqtime -a ADDR [-p PORT] [-n N] [-e E] [-g SGE] [-q CQE] [--json]\n"
	       "  -a ADDR   the address the listener takes and the connections go to\n"
	       "  -p PORT   port, 1..65535 (default 18515)\n"
	       "  -n N      connections (default 100)\n"
	       "  -e E      WRs per queue (default 1)\n"
	       "  -g SGE    SGEs per WR, at most the device's (default 1)\n"
	       "  -q CQE    CQ entries (default 2E)\n"
	       "  --json    one JSON object instead of the text\n"
	       "  -h, --help  this text\n"
	       "Exit status: 0 done, 1 a connection failed, 2 usage error.\n");
}

/* A CQ and an RC QP on @id, sized by the options. */
static int cs_create_qp(struct cs_side *s, struct rdma_cm_id *id)
{
	struct ibv_qp_init_attr attr = {
		.qp_type = IBV_QPT_RC,
		.cap = {
			.max_send_wr = s->o->entries,
			.max_recv_wr = s->o->entries,
		},
	};
	struct ibv_cq *cq;

	if (!s->pd) {
		struct ibv_device_attr dev;

		if (ibv_query_device(id->verbs, &dev))
			return -errno;
		s->sge = s->o->sge;
		if ((int)s->sge > dev.max_sge)
			s->sge = (unsigned)dev.max_sge;
		s->pd = ibv_alloc_pd(id->verbs);
		if (!s->pd)
			return -errno;
	}
	attr.cap.max_send_sge = s->sge;
	attr.cap.max_recv_sge = s->sge;
	cq = ibv_create_cq(id->verbs, (int)s->o->cqe, NULL, NULL, 0);
	if (!cq)
		return -errno;
	attr.send_cq = cq;
	attr.recv_cq = cq;
	if (rdma_create_qp(id, s->pd, &attr)) {
		int ret = -errno;

		ibv_destroy_cq(cq);
		return ret;
	}
	return 0;
}

static void cs_destroy(struct rdma_cm_id *id)
{
	struct ibv_cq *cq = id->qp ? id->qp->send_cq : NULL;

	if (id->qp)
		rdma_destroy_qp(id);
	if (cq)
		ibv_destroy_cq(cq);
	rdma_destroy_id(id);
}

static void cs_conn_param(struct rdma_conn_param *p)
{
	memset(p, 0, sizeof(*p));
	p->responder_resources = 1;
	p->initiator_depth = 1;
	p->retry_count = 7;
	p->rnr_retry_count = 7;
}

/* ------------------------------------------------------------- server */

static void cs_server_fail(struct cs_server *srv, int err, const char *what)
{
	int zero = 0;

	fprintf(stderr, "cm_seqtime: server: %s: %s\n", what, strerror(-err));
	__atomic_compare_exchange_n(&srv->err, &zero, err, false,
				    __ATOMIC_RELAXED, __ATOMIC_RELAXED);
}

static void cs_server_event(struct cs_server *srv, struct rdma_cm_event *ev)
{
	struct rdma_cm_id *id = ev->id;
	enum rdma_cm_event_type type = ev->event;
	struct rdma_conn_param param;
	int ret;

	switch (type) {
	case RDMA_CM_EVENT_CONNECT_REQUEST:
		rdma_ack_cm_event(ev);
		__atomic_fetch_add(&srv->accepted, 1, __ATOMIC_RELAXED);
		ret = cs_create_qp(&srv->side, id);
		if (ret) {
			cs_server_fail(srv, ret, "create qp");
			rdma_reject(id, NULL, 0);
			rdma_destroy_id(id);
			return;
		}
		cs_conn_param(&param);
		if (rdma_accept(id, &param)) {
			cs_server_fail(srv, -errno, "accept");
			cs_destroy(id);
		}
		return;
	case RDMA_CM_EVENT_DISCONNECTED:
		/* An id is destroyed only once its events are acked. */
		rdma_ack_cm_event(ev);
		cs_destroy(id);
		__atomic_fetch_add(&srv->closed, 1, __ATOMIC_RELAXED);
		return;
	case RDMA_CM_EVENT_ESTABLISHED:
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
		break;
	default:
		cs_server_fail(srv, -EPROTO, rdma_event_str(type));
		break;
	}
	rdma_ack_cm_event(ev);
}

static void *cs_server_thread(void *arg)
{
	struct cs_server *srv = arg;
	struct pollfd pfd = { .fd = srv->ch->fd, .events = POLLIN };

	while (!__atomic_load_n(&srv->stop, __ATOMIC_RELAXED)) {
		struct rdma_cm_event *ev;

		if (poll(&pfd, 1, 100) <= 0)
			continue;
		if (rdma_get_cm_event(srv->ch, &ev)) {
			if (errno != EAGAIN)
				cs_server_fail(srv, -errno, "get event");
			continue;
		}
		cs_server_event(srv, ev);
	}
	return NULL;
}

static int cs_server_start(struct cs_server *srv, struct rdma_addrinfo *ai)
{
	int flags;

	srv->ch = rdma_create_event_channel();
	if (!srv->ch)
		return -errno;
	flags = fcntl(srv->ch->fd, F_GETFL);
	if (flags < 0 || fcntl(srv->ch->fd, F_SETFL, flags | O_NONBLOCK))
		return -errno;
	if (rdma_create_id(srv->ch, &srv->listen_id, NULL, RDMA_PS_TCP) ||
	    rdma_bind_addr(srv->listen_id, ai->ai_src_addr) ||
	    rdma_listen(srv->listen_id, 64))
		return -errno;
	return 0;
}

/* Wait (5 s at most) until the listener has closed @n connections. */
static void cs_wait_closed(struct cs_server *srv, unsigned n)
{
	unsigned i;

	for (i = 0; i < 5000 &&
	     __atomic_load_n(&srv->closed, __ATOMIC_RELAXED) < n; i++)
		poll(NULL, 0, 1);
}

/* ------------------------------------------------------------- client */

/* The next event on @ch, which must be @want for @id; acked. */
static int cs_wait(struct rdma_event_channel *ch, struct rdma_cm_id *id,
		   enum rdma_cm_event_type want)
{
	struct rdma_cm_event *ev;
	int ret = 0;

	if (rdma_get_cm_event(ch, &ev))
		return -errno;
	if (ev->id != id || ev->event != want) {
		fprintf(stderr, "cm_seqtime: %s (status %d), waiting for %s\n",
			rdma_event_str(ev->event), ev->status,
			rdma_event_str(want));
		ret = ev->status < 0 ? ev->status : -EPROTO;
	}
	rdma_ack_cm_event(ev);
	return ret;
}

/*
 * One timed connection: @t gets the steps' times in ns, @step the step
 * that failed.
 */
static int cs_connect_one(struct cs_side *cli, struct rdma_event_channel *ch,
			  struct rdma_addrinfo *ai, struct rdma_cm_id **out,
			  uint64_t t[CS_STEPS], enum cs_step *step)
{
	struct rdma_conn_param param;
	struct rdma_cm_id *id;
	uint64_t t0, t1;
	int ret;

	*step = CS_RESOLVE_ADDR;
	t0 = now_ns();
	if (rdma_create_id(ch, &id, NULL, RDMA_PS_TCP))
		return -errno;
	*out = id;
	if (rdma_resolve_addr(id, NULL, ai->ai_dst_addr, CS_TIMEOUT_MS))
		return -errno;
	ret = cs_wait(ch, id, RDMA_CM_EVENT_ADDR_RESOLVED);
	if (ret)
		return ret;
	t1 = now_ns();
	t[CS_RESOLVE_ADDR] = t1 - t0;
	t0 = t1;
	*step = CS_RESOLVE_ROUTE;
	if (rdma_resolve_route(id, CS_TIMEOUT_MS))
		return -errno;
	ret = cs_wait(ch, id, RDMA_CM_EVENT_ROUTE_RESOLVED);
	if (ret)
		return ret;
	t1 = now_ns();
	t[CS_RESOLVE_ROUTE] = t1 - t0;
	t0 = t1;
	*step = CS_CREATE_QP;
	ret = cs_create_qp(cli, id);
	if (ret)
		return ret;
	t1 = now_ns();
	t[CS_CREATE_QP] = t1 - t0;
	t0 = t1;
	*step = CS_CONNECT;
	cs_conn_param(&param);
	if (rdma_connect(id, &param))
		return -errno;
	ret = cs_wait(ch, id, RDMA_CM_EVENT_ESTABLISHED);
	if (ret)
		return ret;
	t[CS_CONNECT] = now_ns() - t0;
	return 0;
}

/* The report of @n (> 0) connections; sorts the arrays of times. */
static void cs_report(const struct cs_opts *o, unsigned sge, unsigned n,
		      uint64_t *total,
		      uint64_t *steps[CS_STEPS], uint64_t *close_ns)
{
	double med, p99, cmed, cp99, step[CS_STEPS];
	unsigned k;

	qsort(total, n, sizeof(*total), cmp_u64);
	qsort(close_ns, n, sizeof(*close_ns), cmp_u64);
	med = pct(total, n, 0.5, 1e-3);
	p99 = pct(total, n, 0.99, 1e-3);
	cmed = pct(close_ns, n, 0.5, 1e-3);
	cp99 = pct(close_ns, n, 0.99, 1e-3);
	for (k = 0; k < CS_STEPS; k++) {
		qsort(steps[k], n, sizeof(*steps[k]), cmp_u64);
		step[k] = pct(steps[k], n, 0.5, 1e-3);
	}

	if (o->json) {
		printf("{\"tool\": \"cm_seqtime\", \"conns\": %u, \"entries\": %u, "
		       "\"sge\": %u, \"cqe\": %u, \"connect_median_us\": %.1f, "
		       "\"connect_p99_us\": %.1f, \"close_median_us\": %.1f, "
		       "\"close_p99_us\": %.1f", n, o->entries, sge, o->cqe,
		       med, p99, cmed, cp99);
		for (k = 0; k < CS_STEPS; k++)
			printf(", \"step_%s_us\": %.1f", cs_step_name[k], step[k]);
		printf("}\n");
		return;
	}
	printf("cm_seqtime: %u connections one at a time, QPs of %u WRs x %u SGEs, CQ %u\n",
	       n, o->entries, sge, o->cqe);
	printf("%-24s %10s %10s\n", "", "median us", "p99 us");
	printf("%-24s %10.1f %10.1f\n", "connect (sequential)", med, p99);
	printf("%-24s %10.1f %10.1f\n", "close (sequential)", cmed, cp99);
	printf("steps (median us):");
	for (k = 0; k < CS_STEPS; k++)
		printf(" %s %.1f", cs_step_name[k], step[k]);
	printf("\n");
}

static int cs_run(const struct cs_opts *o)
{
	struct rdma_addrinfo hints = { .ai_port_space = RDMA_PS_TCP };
	struct cs_server srv = { .side.o = o };
	struct cs_side cli = { .o = o };
	uint64_t *total, *close_ns, *steps[CS_STEPS];
	struct rdma_event_channel *ch = NULL;
	struct rdma_addrinfo *sai, *cai;
	unsigned i, k, done = 0;
	pthread_t thr;
	int ret;

	hints.ai_flags = RAI_PASSIVE;
	if (rdma_getaddrinfo(o->addr, o->port, &hints, &sai)) {
		fprintf(stderr, "cm_seqtime: %s port %s: %s\n", o->addr,
			o->port, strerror(errno));
		return 1;
	}
	hints.ai_flags = 0;
	if (rdma_getaddrinfo(o->addr, o->port, &hints, &cai)) {
		fprintf(stderr, "cm_seqtime: %s port %s: %s\n", o->addr,
			o->port, strerror(errno));
		return 1;
	}
	total = calloc(o->n, sizeof(*total));
	close_ns = calloc(o->n, sizeof(*close_ns));
	for (k = 0; k < CS_STEPS; k++)
		steps[k] = calloc(o->n, sizeof(uint64_t));
	for (k = 0; k < CS_STEPS; k++)
		if (!steps[k])
			return 1;
	if (!total || !close_ns)
		return 1;

	ret = cs_server_start(&srv, sai);
	if (ret) {
		fprintf(stderr, "cm_seqtime: listen: %s\n", strerror(-ret));
		return 1;
	}
	if (pthread_create(&thr, NULL, cs_server_thread, &srv))
		return 1;
	ch = rdma_create_event_channel();
	if (!ch)
		return 1;

	for (i = 0; i < o->n; i++) {
		struct rdma_cm_id *id = NULL;
		uint64_t t[CS_STEPS];
		uint64_t t0 = now_ns();
		enum cs_step step;

		ret = cs_connect_one(&cli, ch, cai, &id, t, &step);
		if (ret) {
			fprintf(stderr, "cm_seqtime: connection %u: %s: %s\n",
				i, cs_step_name[step], strerror(-ret));
			if (id)
				cs_destroy(id);
			break;
		}
		total[i] = now_ns() - t0;
		for (k = 0; k < CS_STEPS; k++)
			steps[k][i] = t[k];
		t0 = now_ns();
		rdma_disconnect(id);
		cs_destroy(id);
		close_ns[i] = now_ns() - t0;
		done++;
		cs_wait_closed(&srv, done);
	}
	cs_wait_closed(&srv, __atomic_load_n(&srv.accepted, __ATOMIC_RELAXED));
	__atomic_store_n(&srv.stop, true, __ATOMIC_RELAXED);
	pthread_join(thr, NULL);
	rdma_destroy_id(srv.listen_id);
	rdma_destroy_event_channel(srv.ch);
	rdma_destroy_event_channel(ch);
	if (cli.pd)
		ibv_dealloc_pd(cli.pd);
	if (srv.side.pd)
		ibv_dealloc_pd(srv.side.pd);
	rdma_freeaddrinfo(sai);
	rdma_freeaddrinfo(cai);

	if (done)
		cs_report(o, cli.sge, done, total, steps, close_ns);
	ret = done == o->n && !srv.err ? 0 : 1;
	free(total);
	free(close_ns);
	for (k = 0; k < CS_STEPS; k++)
		free(steps[k]);
	return ret;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'J' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	struct cs_opts o = { .port = "18515", .n = 100, .entries = 1,
			     .sge = 1 };
	int c;

	cli_start(argv);
	while ((c = getopt_long(argc, argv, "a:p:n:e:g:q:h", longopts,
				NULL)) != -1) {
		switch (c) {
		case 'a':
			cli_address(&o.addr, "-a", optarg);
			break;
		case 'p':
			o.port = cli_port("-p", optarg);
			break;
		case 'n':
			o.n = (unsigned)cli_number("-n", optarg, 1, 1u << 20);
			break;
		case 'e':
			o.entries = (unsigned)cli_number("-e", optarg, 1, 1u << 20);
			break;
		case 'g':
			o.sge = (unsigned)cli_number("-g", optarg, 1, 1u << 20);
			break;
		case 'q':
			o.cqe = (unsigned)cli_number("-q", optarg, 1, 1u << 20);
			break;
		case 'J':
			o.json = true;
			break;
		case 'h':
			cs_usage();
			return 0;
		default:
			cli_bad_option();
		}
	}
	cli_no_operands(argc, argv, optind);
	if (!o.addr)
		cli_usage_error("-a ADDR is needed");
	if (!o.cqe)
		o.cqe = 2 * o.entries;
	return cs_run(&o);
}
