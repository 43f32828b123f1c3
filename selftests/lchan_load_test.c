// SPDX-License-Identifier: GPL-2.0
/*
 * Load: 64 channels in four processes, 10,000 messages on each, mixed
 * sizes, SENDs and READs checked byte for byte.  Nothing may be lost, duplicated or corrupted.  On siw a
 * READ completes after the SENDs behind it, so its slot holds them back:
 * the client only submits when it has new messages, and relies on the
 * kernel posting the held-back ones when the READ completes.
 */
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "lchan_test.h"

#define NPROC	4
#define NPAIR	16		/* per process: 64 channels in all */
#define WINDOW	8

static unsigned nmsg;		/* per channel: 10,000 */

FIXTURE(load) {
	struct lchan_t_dev d;
};

LCHAN_T_VARIANTS(load);

FIXTURE_SETUP(load)
{
	LCHAN_T_NEED_DEV(&self->d, variant->kind);
	lchan_t_raise_memlock();
}

FIXTURE_TEARDOWN(load)
{
}

/*
 * Word @k of the payload of message @i on @pair.  Made and checked eight
 * bytes at a time: under emulation a byte at a time cost the test more
 * CPU than the channels it loads.
 */
static uint64_t payload_word(unsigned i, unsigned pair, size_t k)
{
	uint64_t x = ((uint64_t)pair << 32 | i) * 0x9e3779b97f4a7c15ull +
		     k * 0xbf58476d1ce4e5b9ull;

	return x ^ (x >> 31);
}

static void payload_fill(uint8_t *p, unsigned i, unsigned pair, size_t len)
{
	uint64_t w;
	size_t k;

	for (k = 0; k < len / 8; k++) {
		w = payload_word(i, pair, k);
		memcpy(p + 8 * k, &w, 8);
	}
	w = payload_word(i, pair, k);
	memcpy(p + 8 * k, &w, len % 8);
}

/* Whether @len bytes at @p are message @i's payload on @pair. */
static bool payload_right(const uint8_t *p, unsigned i, unsigned pair,
			  size_t len)
{
	uint64_t want, got;
	size_t k;

	for (k = 0; k < len / 8; k++) {
		want = payload_word(i, pair, k);
		memcpy(&got, p + 8 * k, 8);
		if (got != want)
			return false;
	}
	want = payload_word(i, pair, k);
	return !memcmp(p + 8 * k, &want, len % 8);
}

struct flow {
	struct lchan_t_ep srv, cli;
	unsigned sent, acked, recvd, reads;
	int read_busy;
	uint64_t *seen;			/* one bit per message number */
};

/* Message i: [u32 number][u32 len][u32 pair][payload]. */
static unsigned msg_len(unsigned i, unsigned pair)
{
	return 12 + ((i * 2654435761u + pair * 40503u) >> 7) % 2000;
}

static int send_one(struct flow *f, unsigned pair)
{
	struct lchan_sqe *sqe = lchan_get_sqe(&f->cli.chan);
	unsigned len = msg_len(f->sent, pair);
	uint8_t *p = lchan_t_send_slot(&f->cli, f->sent);
	uint32_t *h = (uint32_t *)p;

	if (!sqe)
		return -ENOSPC;
	payload_fill(p + 12, f->sent, pair, len - 12);
	h[0] = f->sent;
	h[1] = len;
	h[2] = pair;
	lchan_prep_send(sqe, &f->cli.mr, p, len, f->sent);
	f->sent++;
	return 0;
}

static int check_recv(struct flow *f, unsigned pair,
		      const struct lchan_cqe *cqe)
{
	const uint8_t *p = lchan_t_recv_slot(&f->srv, cqe->user_data);
	const uint32_t *h = (const uint32_t *)p;

	if (cqe->status || cqe->byte_len < 12 || h[1] != cqe->byte_len ||
	    h[0] >= nmsg || h[2] != pair ||
	    !payload_right(p + 12, h[0], pair, cqe->byte_len - 12))
		return -EBADMSG;
	if (f->seen[h[0] / 64] & (1ULL << (h[0] % 64)))
		return -EEXIST;		/* a duplicate */
	f->seen[h[0] / 64] |= 1ULL << (h[0] % 64);
	f->recvd++;
	return 0;
}

/* An RDMA READ of the server's fixed pattern, one at a time. */
static int read_back(struct flow *f)
{
	uint8_t *dst = lchan_t_recv_slot(&f->cli, 0);
	uint8_t *src = lchan_t_send_slot(&f->srv, 0);
	struct lchan_sqe *sqe;

	if (f->read_busy)
		return -EBUSY;
	sqe = lchan_get_sqe(&f->cli.chan);
	if (!sqe)
		return -ENOSPC;
	memset(dst, 0, 2048);
	lchan_prep_read(sqe, &f->cli.mr, dst, 2048, (uintptr_t)src,
			f->srv.mr.rkey, 1ULL << 63);
	f->read_busy = 1;
	f->reads++;
	return 0;
}

static int no_reads;

/* What a stalled flow looks like from both ends, for the log. */
static void dump_flow(const struct flow *f, unsigned pair)
{
	static const char *const attrs[] = { "state", "sq_outstanding",
		"rq_outstanding", "send_ops", "recv_ops", "errors" };
	const struct lchan_chan *ch[2] = { &f->cli.chan, &f->srv.chan };
	char path[128], val[32], line[256];
	unsigned i, k;
	int n;

	n = snprintf(line, sizeof(line),
		     "pair %u: sent %u acked %u recvd %u reads %u read_busy %d",
		     pair, f->sent, f->acked, f->recvd, f->reads, f->read_busy);
	for (k = 0; k < 2; k++) {
		n += snprintf(line + n, sizeof(line) - n, " | %s %u:",
			      k ? "srv" : "cli", ch[k]->info.id);
		for (i = 0; i < sizeof(attrs) / sizeof(attrs[0]); i++) {
			snprintf(path, sizeof(path),
				 "/sys/kernel/lchan/channels/%u/%s",
				 ch[k]->info.id, attrs[i]);
			if (lchan_t_read_sysfs(path, val, sizeof(val)) < 0)
				snprintf(val, sizeof(val), "?");
			n += snprintf(line + n, sizeof(line) - n, " %s",
				      val);
		}
	}
	fprintf(stderr, "%s\n", line);
}

static int run_process(const char *host)
{
	struct lchan_opts opts = { .sq_entries = 16, .rq_entries = 16 };
	struct flow *fl = calloc(NPAIR, sizeof(*fl));
	unsigned p, done = 0;
	double stall;

	if (!fl)
		return 10;
	for (p = 0; p < NPAIR; p++) {
		struct flow *f = &fl[p];
		int ret;

		f->srv = (struct lchan_t_ep){ .slot = 2048, .nrecv = 16,
					      .nsend = 1,
					      .access = LCHAN_ACCESS_ALL };
		f->cli = (struct lchan_t_ep){ .slot = 2048, .nrecv = 1,
					      .nsend = WINDOW * 2,
					      .access = LCHAN_ACCESS_ALL };
		f->seen = calloc(nmsg / 64 + 1, 8);
		if (!f->seen)
			return 10;
		ret = lchan_t_ep_pair(&f->srv, &f->cli, host, &opts);
		if (ret) {
			fprintf(stderr, "# pair %u: %s\n", p, strerror(-ret));
			return 11;
		}
		lchan_t_fill(lchan_t_send_slot(&f->srv, 0), 4242 + p, 2048);
	}
	stall = lchan_t_now();
	while (done < NPAIR) {
		int progress = 0;

		done = 0;
		for (p = 0; p < NPAIR; p++) {
			struct flow *f = &fl[p];
			struct lchan_cqe *c;
			int posted = 0, reposted = 0;

			while (f->sent < nmsg && f->sent - f->recvd < WINDOW &&
			       f->sent - f->acked < WINDOW) {
				if (send_one(f, p))
					break;
				posted = 1;
				if (f->sent % 16 == 0 && !no_reads)
					read_back(f);
			}
			if (posted && lchan_submit(&f->cli.chan) < 0)
				return 12;
			progress |= posted;
			while (!lchan_peek_cqe(&f->srv.chan, &c)) {
				uint64_t slot = c->user_data;

				if (check_recv(f, p, c))
					return 13;
				progress = 1;
				lchan_cqe_seen(&f->srv.chan);
				if (lchan_t_post_recv(&f->srv, slot))
					return 14;
				reposted = 1;
				stall = lchan_t_now();
			}
			/* An ENTER with nothing new costs CPU siw's threads need. */
			if (reposted && lchan_submit(&f->srv.chan) < 0)
				return 12;
			while (!lchan_peek_cqe(&f->cli.chan, &c)) {
				if (c->status)
					return 15;
				progress = 1;
				if (c->user_data != 1ULL << 63) {
					f->acked++;
				} else {
					/* The READ brought the pattern whole. */
					if (lchan_t_check(lchan_t_recv_slot(
						&f->cli, 0), 4242 + p, 2048) != -1)
						return 18;
					f->read_busy = 0;
				}
				lchan_cqe_seen(&f->cli.chan);
			}
			if (f->recvd == nmsg && f->acked == nmsg &&
			    !f->read_busy)
				done++;
		}
		if (lchan_t_now() - stall > 30) {
			for (p = 0; p < NPAIR; p++)
				if (fl[p].recvd < nmsg || fl[p].read_busy)
					dump_flow(&fl[p], p);
			return 16;
		}
		/*
		 * Four busy-polling processes on few CPUs would starve the
		 * kernel threads that move siw's data: when a pass over all
		 * channels found nothing, sleep a little.
		 */
		if (!progress)
			poll(NULL, 0, 1);
	}
	for (p = 0; p < NPAIR; p++) {
		unsigned i;

		/* Every number exactly once. */
		for (i = 0; i < nmsg; i++)
			if (!(fl[p].seen[i / 64] & (1ULL << (i % 64))))
				return 17;
		lchan_t_ep_close(&fl[p].cli);
		lchan_t_ep_close(&fl[p].srv);
	}
	return 0;
}

TEST_F_TIMEOUT(load, sixty_four_channels_four_processes, 900)
{
	pid_t pids[NPROC];
	int i, status, bad = 0;
	double t0 = lchan_t_now();

	no_reads = getenv("LCHAN_LOAD_NO_READS") != NULL;
	nmsg = lchan_t_count(10000);
	for (i = 0; i < NPROC; i++) {
		pids[i] = fork();
		ASSERT_GE(pids[i], 0);
		if (!pids[i])
			_exit(run_process(self->d.addr));
	}
	for (i = 0; i < NPROC; i++) {
		ASSERT_EQ(pids[i], waitpid(pids[i], &status, 0));
		if (!WIFEXITED(status) || WEXITSTATUS(status)) {
			TH_LOG("process %d: status %#x", i, status);
			bad++;
		}
	}
	EXPECT_EQ(0, bad);
	TH_LOG("%d channels x %u messages in %.1f s", NPROC * NPAIR, nmsg,
	       lchan_t_now() - t0);
}

TEST_HARNESS_MAIN
