// SPDX-License-Identifier: GPL-2.0
/*
 * lchan's tracepoints seen through tracefs: a connect, an exchange with
 * one rejected entry, a deregistration and a close leave their events.
 */
#include <sys/mount.h>

#include "kselftest_harness.h"
#include "lchan_test.h"

#define TRACEFS "/sys/kernel/tracing"

FIXTURE(trace) {
	struct lchan_t_dev d;
};

LCHAN_T_VARIANTS(trace);

FIXTURE_SETUP(trace)
{
	LCHAN_T_NEED_DEV(&self->d, variant->kind);
	if (access(TRACEFS "/trace", F_OK))
		mount("tracefs", TRACEFS, "tracefs", 0, NULL);
	if (access(TRACEFS "/events/lchan/enable", F_OK))
		LCHAN_T_SETUP_SKIP("no tracefs or no lchan events");
	ASSERT_EQ(0, lchan_t_write_file(TRACEFS "/tracing_on", "0"));
	ASSERT_EQ(0, lchan_t_write_file(TRACEFS "/trace", ""));
	ASSERT_EQ(0, lchan_t_write_file(TRACEFS "/events/lchan/enable", "1"));
	ASSERT_EQ(0, lchan_t_write_file(TRACEFS "/tracing_on", "1"));
}

FIXTURE_TEARDOWN(trace)
{
	lchan_t_write_file(TRACEFS "/events/lchan/enable", "0");
}

static char *slurp(const char *path)
{
	size_t cap = 1 << 20, len = 0;
	char *buf = malloc(cap);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (!buf || fd < 0) {
		free(buf);
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	while ((n = read(fd, buf + len, cap - 1 - len)) > 0)
		len += n;
	buf[len] = 0;
	close(fd);
	return buf;
}

TEST_F_TIMEOUT(trace, connect_exchange_close, 60)
{
	struct lchan_t_ep srv = { .slot = 4096, .nrecv = 2, .nsend = 2 };
	struct lchan_t_ep cli = { .slot = 4096, .nrecv = 2, .nsend = 2 };
	struct lchan_sqe *sqe;
	struct lchan_cqe cqe;
	char want[128], *log;
	unsigned id;

	ASSERT_EQ(0, lchan_t_ep_pair(&srv, &cli, self->d.addr, NULL));
	id = cli.chan.info.id;
	sqe = lchan_get_sqe(&cli.chan);
	lchan_prep_send(sqe, &cli.mr, lchan_t_send_slot(&cli, 0), 10, 1);
	sqe = lchan_get_sqe(&cli.chan);
	lchan_prep_send(sqe, &cli.mr, lchan_t_send_slot(&cli, 0), 10, 0xbad);
	sqe->opcode = 99;
	ASSERT_LE(0, lchan_submit(&cli.chan));
	ASSERT_EQ(0, lchan_t_reap(&srv, &cqe, 10000));
	ASSERT_EQ(0, lchan_t_reap(&cli, &cqe, 10000));
	ASSERT_EQ(0, lchan_t_reap(&cli, &cqe, 10000));
	ASSERT_EQ(0, lchan_mr_dereg(&cli.ctx, &cli.mr));
	lchan_t_ep_close(&cli);
	/* The server sees the client go before it closes itself. */
	ASSERT_LE(0, lchan_t_wait_down(&srv.chan, 10));
	lchan_t_ep_close(&srv);
	usleep(100000);

	log = slurp(TRACEFS "/trace");
	ASSERT_NE(NULL, log);
	snprintf(want, sizeof(want), "lchan_cm_event: chan=%u event=ESTABLISHED", id);
	EXPECT_NE(NULL, strstr(log, want)) TH_LOG("no \"%s\"", want);
	snprintf(want, sizeof(want), "lchan_chan_state: chan=%u connecting -> connected", id);
	EXPECT_NE(NULL, strstr(log, want)) TH_LOG("no \"%s\"", want);
	snprintf(want, sizeof(want), "lchan_cqe_error: chan=%u user_data=0xbad opcode=0 status=%u",
		 id, LCHAN_CQE_BAD_OPCODE);
	EXPECT_NE(NULL, strstr(log, want)) TH_LOG("no \"%s\"", want);
	EXPECT_NE(NULL, strstr(log, "lchan_mr_reg: pid=")) TH_LOG("no mr_reg");
	EXPECT_NE(NULL, strstr(log, "lchan_mr_dereg: pid=")) TH_LOG("no dereg");
	EXPECT_NE(NULL, strstr(log, "event=CONNECT_REQUEST"));
	/* The server's side saw the client go. */
	EXPECT_NE(NULL, strstr(log, "connected -> disconnected"));
	free(log);
}

TEST_HARNESS_MAIN
