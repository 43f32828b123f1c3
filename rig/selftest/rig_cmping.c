// SPDX-License-Identifier: GPL-2.0
/*
 * The rig's RDMA traffic probe: one RC connection through rdma_cm, a few
 * SEND round trips, a clean disconnect.  No lchan in it.
 *
 *   rig_cmping -s ADDR PORT           accept one connection, echo messages
 *   rig_cmping -c ADDR PORT GO_FILE   connect, wait for GO_FILE, ping
 *
 * The client sends its first message only once GO_FILE exists; the script
 * creates it when the server has printed "established".  siw's accepting
 * side sends its MPA reply before it hands the socket to the QP, and data
 * that arrives in between stays in the socket until more data comes; a
 * probe that sent at once would hang on that driver race now and then, and
 * the rig self-test must tell a broken rig, not that race (lchan's own
 * tests cover the race: conn.*.server_sends_first).  It polls its CQs
 * rather than sleep on completion events, for a second siw race (below).
 *
 * A SEND completes at its sender only once the receiver has acknowledged
 * it, and rxe acknowledges after it completes the receive: a receiver that
 * tears the connection down at once can leave the sender's SEND to retry
 * until it fails, even a SEND answered long before.  So each side waits
 * only for completions that are acknowledged before the peer may tear
 * down: the client's last message ("done") is sent after its pings have
 * completed, its own completion is not awaited, and the server ends the
 * connection once it has received it.  (siw failed a SEND whose peer
 * closed right after receiving it; the rig's siw carries the fix,
 * siw-patches/0002.)
 *
 * Every step is logged to stderr, so a probe killed by its timeout says
 * where it stopped.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>

#define ROUNDS		3
#define MSG_SIZE	64
#define WAIT_MS		20000
#define DONE		"rig_cmping done"

static void step(const char *what)
{
	fprintf(stderr, "rig_cmping: %s\n", what);
}

static int fail(const char *what)
{
	fprintf(stderr, "rig_cmping: %s failed: %s\n", what, strerror(errno));
	return 1;
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Where a stuck queue pair stands, for the log. */
static void dump_qp(struct ibv_qp *qp)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr a;

	if (ibv_query_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN |
			 IBV_QP_RQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT,
			 &init)) {
		fail("ibv_query_qp");
		return;
	}
	fprintf(stderr, "rig_cmping: qp %u state %d sq_psn %u rq_psn %u timeout %u retry_cnt %u\n",
		qp->qp_num, a.qp_state, a.sq_psn, a.rq_psn, a.timeout,
		a.retry_cnt);
}

/*
 * Poll the CQ, bounded; no completion events: siw can leave a completion
 * unannounced (it reads whether the CQ is armed without a barrier after
 * publishing the CQE), and a probe that slept on the event would hang.
 */
static int wait_completion(struct rdma_cm_id *id, int recv)
{
	struct timespec tick = { .tv_nsec = 100 * 1000 };
	struct ibv_cq *cq = recv ? id->recv_cq : id->send_cq;
	double deadline = now_ms() + WAIT_MS;
	struct ibv_wc wc;
	int n;

	/* A clock, not a count of sleeps: a loaded host stretches each. */
	while (!(n = ibv_poll_cq(cq, 1, &wc)) && now_ms() < deadline)
		nanosleep(&tick, NULL);
	if (n < 0)
		return fail("ibv_poll_cq");
	if (!n) {
		fprintf(stderr, "rig_cmping: no %s completion in %d ms\n",
			recv ? "receive" : "send", WAIT_MS);
		dump_qp(id->qp);
		return 1;
	}
	if (wc.status != IBV_WC_SUCCESS) {
		fprintf(stderr, "rig_cmping: %s completion status %s\n",
			recv ? "receive" : "send", ibv_wc_status_str(wc.status));
		return 1;
	}
	return 0;
}

/* The peer's DISCONNECTED event, bounded. */
static int wait_disconnect(struct rdma_cm_id *id)
{
	struct pollfd pfd = { .fd = id->channel->fd, .events = POLLIN };
	struct rdma_cm_event *ev;
	int type;

	if (poll(&pfd, 1, WAIT_MS) != 1) {
		step("no DISCONNECTED event");
		return 1;
	}
	if (rdma_get_cm_event(id->channel, &ev))
		return fail("rdma_get_cm_event");
	type = ev->event;
	rdma_ack_cm_event(ev);
	if (type != RDMA_CM_EVENT_DISCONNECTED) {
		fprintf(stderr, "rig_cmping: event %s, not DISCONNECTED\n",
			rdma_event_str(type));
		return 1;
	}
	return 0;
}

static int wait_go_file(const char *path)
{
	struct timespec tick = { .tv_nsec = 10 * 1000 * 1000 };
	int i;

	for (i = 0; i < WAIT_MS / 10; i++) {
		if (access(path, F_OK) == 0)
			return 0;
		nanosleep(&tick, NULL);
	}
	step("the go file never appeared");
	return 1;
}

/* The buffer's two halves registered, a receive posted in the second. */
static struct ibv_mr *prepare(struct rdma_cm_id *id, char *buf)
{
	struct ibv_mr *mr = rdma_reg_msgs(id, buf, 2 * MSG_SIZE);

	if (!mr) {
		fail("rdma_reg_msgs");
		return NULL;
	}
	if (rdma_post_recv(id, NULL, buf + MSG_SIZE, MSG_SIZE, mr)) {
		fail("rdma_post_recv");
		rdma_dereg_mr(mr);
		return NULL;
	}
	return mr;
}

/* A receive into the second half (@recv) or a send of the first. */
static int post(struct rdma_cm_id *id, char *buf, struct ibv_mr *mr, int recv)
{
	if (recv ? rdma_post_recv(id, NULL, buf + MSG_SIZE, MSG_SIZE, mr) :
		   rdma_post_send(id, NULL, buf, MSG_SIZE, mr, IBV_SEND_SIGNALED))
		return fail(recv ? "rdma_post_recv" : "rdma_post_send");
	return 0;
}

static int serve(struct rdma_cm_id *listen_id, char *buf)
{
	char *rbuf = buf + MSG_SIZE;
	struct rdma_cm_id *id;
	struct ibv_mr *mr;
	int i, rc = 1;

	if (rdma_listen(listen_id, 1))
		return fail("rdma_listen");
	step("listening");
	if (rdma_get_request(listen_id, &id))
		return fail("rdma_get_request");
	mr = prepare(id, buf);
	if (!mr)
		goto out_destroy;
	if (rdma_accept(id, NULL)) {
		fail("rdma_accept");
		goto out_dereg;
	}
	printf("established\n");
	fflush(stdout);
	for (i = 0; i < ROUNDS; i++) {
		if (wait_completion(id, 1))
			goto out_dereg;
		memcpy(buf, rbuf, MSG_SIZE);
		if (post(id, buf, mr, 1) || post(id, buf, mr, 0))
			goto out_dereg;
		if (wait_completion(id, 0))
			goto out_dereg;
		fprintf(stderr, "rig_cmping: echoed %d\n", i + 1);
	}
	if (wait_completion(id, 1))
		goto out_dereg;
	if (strncmp(rbuf, DONE, MSG_SIZE)) {
		step("the last message is not \"" DONE "\"");
		goto out_dereg;
	}
	/* On a synchronous id this waits for the DISCONNECTED event. */
	step("disconnecting");
	if (rdma_disconnect(id)) {
		fail("rdma_disconnect");
		goto out_dereg;
	}
	rc = 0;
out_dereg:
	rdma_dereg_mr(mr);
out_destroy:
	rdma_destroy_ep(id);
	return rc;
}

static int ping(struct rdma_cm_id *id, char *buf, const char *go_file)
{
	char *rbuf = buf + MSG_SIZE;
	struct ibv_mr *mr;
	int i, rc = 1;

	mr = prepare(id, buf);
	if (!mr)
		return 1;
	if (rdma_connect(id, NULL)) {
		fail("rdma_connect");
		goto out_dereg;
	}
	step("connected");
	if (wait_go_file(go_file))
		goto out_disconnect;
	for (i = 0; i < ROUNDS; i++) {
		memset(buf, 0, MSG_SIZE);
		snprintf(buf, MSG_SIZE, "rig_cmping %d", i + 1);
		if (post(id, buf, mr, 0))
			goto out_disconnect;
		if (wait_completion(id, 0) || wait_completion(id, 1))
			goto out_disconnect;
		if (memcmp(rbuf, buf, MSG_SIZE)) {
			step("the echo differs from the message");
			goto out_disconnect;
		}
		if (i + 1 < ROUNDS && post(id, buf, mr, 1))
			goto out_disconnect;
		printf("ping data: %s\n", buf);
		fflush(stdout);
	}
	memset(buf, 0, MSG_SIZE);
	strcpy(buf, DONE);
	if (post(id, buf, mr, 0))
		goto out_disconnect;
	rc = wait_disconnect(id);
	if (!rc) {
		step("peer disconnected");
		goto out_dereg;
	}
out_disconnect:
	step("disconnecting");
	rdma_disconnect(id);
out_dereg:
	rdma_dereg_mr(mr);
	return rc;
}

int main(int argc, char **argv)
{
	struct rdma_addrinfo hints = { .ai_port_space = RDMA_PS_TCP };
	struct ibv_qp_init_attr attr = {
		.cap = { .max_send_wr = 2, .max_recv_wr = 2,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
		.sq_sig_all = 1,
	};
	static char buf[2 * MSG_SIZE];	/* send, then receive buffer */
	struct rdma_addrinfo *res;
	struct rdma_cm_id *id;
	int server, rc;

	if (argc < 4 || (strcmp(argv[1], "-s") && strcmp(argv[1], "-c")) ||
	    (!strcmp(argv[1], "-c") && argc < 5)) {
		fprintf(stderr, "usage: rig_cmping -s ADDR PORT | -c ADDR PORT GO_FILE\n");
		return 2;
	}
	server = !strcmp(argv[1], "-s");
	if (server)
		hints.ai_flags = RAI_PASSIVE;
	if (rdma_getaddrinfo(argv[2], argv[3], &hints, &res))
		return fail("rdma_getaddrinfo");
	if (rdma_create_ep(&id, res, NULL, &attr)) {
		rdma_freeaddrinfo(res);
		return fail("rdma_create_ep");
	}
	rdma_freeaddrinfo(res);
	rc = server ? serve(id, buf) : ping(id, buf, argv[4]);
	rdma_destroy_ep(id);
	step(rc ? "FAILED" : "done");
	return rc;
}
