// SPDX-License-Identifier: GPL-2.0
/*
 * An installed liblchan works for programs from outside the tree.  The
 * selftests build runs `make -C lib install` into pkgconfig/stage/ beside
 * the test programs and builds pkgconfig/hello and pkgconfig/quickstart
 * (the ring API's smallest client) with nothing but `pkg-config --cflags
 * --libs liblchan` of that staged install.  They run here with only the
 * staged library directory on LD_LIBRARY_PATH: hello must load the staged
 * liblchan.so.1, open /dev/lchan and report what sysfs reports;
 * quickstart must deliver its message to a channel this test accepts.
 */
#include "kselftest_harness.h"
#include "lchan_test.h"

#define STAGE_LIB "pkgconfig/stage/opt/lchan/lib"

/* Run @prog with exactly @envp; its stdout in @out.  Exit status or -1. */
static int run_capture(const char *prog, char *const envp[], char *out,
		       size_t len)
{
	char *const argv[] = { (char *)prog, NULL };
	struct lchan_t_child c;

	if (lchan_t_spawn(&c, argv, envp))
		return -1;
	return lchan_t_collect(&c, out, len);
}

/* What @prog printed, each line behind "# " in the log. */
static void show(const char *prog, const char *out)
{
	printf("# %s says:\n", prog);
	lchan_t_show_lines(out);
}

/* The value after "@key: " in @text, copied to @val; -1 if absent. */
static int field(const char *text, const char *key, char *val, size_t len)
{
	char pat[64];
	const char *p;

	snprintf(pat, sizeof(pat), "%s: ", key);
	for (p = text; p; p = strchr(p, '\n')) {
		if (*p == '\n')
			p++;
		if (!strncmp(p, pat, strlen(pat))) {
			p += strlen(pat);
			snprintf(val, len, "%.*s", (int)strcspn(p, "\n"), p);
			return 0;
		}
	}
	return -1;
}

TEST(staged_install_runs)
{
	char hello[PATH_MAX], lib[PATH_MAX], env[PATH_MAX + 32];
	char want_so[PATH_MAX], got_so[PATH_MAX], out[4096], val[PATH_MAX + 32];
	char sysval[64];
	char *envp[] = { env, NULL };
	int rc;

	lchan_t_beside_me(hello, sizeof(hello), "pkgconfig/hello");
	lchan_t_beside_me(lib, sizeof(lib), STAGE_LIB);
	ASSERT_EQ(0, access(hello, X_OK))
		TH_LOG("%s: %s (did the selftests build stage the install?)",
		       hello, strerror(errno));
	snprintf(val, sizeof(val), "%s/liblchan.so.1", lib);
	ASSERT_NE(NULL, realpath(val, want_so)) TH_LOG("%s", val);
	if (!lchan_t_module_loaded())
		SKIP(return, "lchan is not loaded");

	snprintf(env, sizeof(env), "LD_LIBRARY_PATH=%s", lib);
	rc = run_capture(hello, envp, out, sizeof(out));
	show("hello", out);
	ASSERT_EQ(0, rc);

	/* The staged library, not another copy, was loaded. */
	ASSERT_EQ(0, field(out, "liblchan", val, sizeof(val)));
	ASSERT_NE(NULL, realpath(val, got_so)) TH_LOG("%s", val);
	EXPECT_STREQ(want_so, got_so);

	ASSERT_EQ(0, field(out, "abi_version", val, sizeof(val)));
	EXPECT_EQ(LCHAN_ABI_VERSION, atoi(val));
	ASSERT_EQ(0, lchan_t_read_sysfs("/sys/kernel/lchan/abi_version",
					sysval, sizeof(sysval)));
	EXPECT_STREQ(sysval, val);
	ASSERT_EQ(0, field(out, "features", val, sizeof(val)));
	ASSERT_EQ(0, lchan_t_read_sysfs("/sys/kernel/lchan/features",
					sysval, sizeof(sysval)));
	EXPECT_STREQ(sysval, val);
	ASSERT_EQ(0, field(out, "max_entries", val, sizeof(val)));
	EXPECT_GE(atoi(val), 64);
}

TEST(staged_install_needs_its_library)
{
	char hello[PATH_MAX], out[4096];
	char *envp[] = { "LD_LIBRARY_PATH=/nonexistent", NULL };
	int rc;

	lchan_t_beside_me(hello, sizeof(hello), "pkgconfig/hello");
	ASSERT_EQ(0, access(hello, X_OK)) TH_LOG("%s", hello);
	/* Only meaningful where no liblchan is installed system-wide. */
	if (!access("/usr/lib/liblchan.so.1", F_OK) ||
	    !access("/usr/local/lib/liblchan.so.1", F_OK) ||
	    !access("/usr/lib/x86_64-linux-gnu/liblchan.so.1", F_OK) ||
	    !access("/lib/x86_64-linux-gnu/liblchan.so.1", F_OK))
		SKIP(return, "a liblchan.so.1 is installed system-wide");
	/* No RPATH into the build tree: without the staged dir it fails. */
	rc = run_capture(hello, envp, out, sizeof(out));
	EXPECT_EQ(127, rc) TH_LOG("output: %s", out);
}

/* quickstart, against a channel accepted here. */
FIXTURE(quickstart) {
	struct lchan_t_dev d;
};

LCHAN_T_VARIANTS(quickstart);

FIXTURE_SETUP(quickstart)
{
	LCHAN_T_NEED_DEV(&self->d, variant->kind);
	if (!lchan_t_module_loaded())
		LCHAN_T_SETUP_SKIP("lchan is not loaded");
}

FIXTURE_TEARDOWN(quickstart)
{
}

TEST_F_TIMEOUT(quickstart, sends_one_message, 60)
{
	static const char msg[] = "hello over RDMA";
	char prog[PATH_MAX], lib[PATH_MAX], env[PATH_MAX + 32], port[16];
	char out[4096];
	char *envp[] = { env, NULL };
	char *argv[] = { prog, self->d.addr, port, NULL };
	struct lchan_opts opts = { .flags = LCHAN_DEFER_ESTABLISH };
	struct lchan_listener lst;
	struct lchan_ctx ctx;
	struct lchan_chan chan;
	struct lchan_mr mr;
	struct lchan_cqe cqe, *c;
	struct lchan_rqe *rqe;
	struct pollfd pfd;
	struct lchan_t_child child;
	char *buf;
	int rc;

	lchan_t_beside_me(prog, sizeof(prog), "pkgconfig/quickstart");
	lchan_t_beside_me(lib, sizeof(lib), STAGE_LIB);
	ASSERT_EQ(0, access(prog, X_OK)) TH_LOG("%s", prog);
	snprintf(env, sizeof(env), "LD_LIBRARY_PATH=%s", lib);
	snprintf(port, sizeof(port), "%u", lchan_t_port());
	lchan_t_raise_memlock();
	buf = aligned_alloc(4096, 4096);
	ASSERT_NE(NULL, buf);
	memset(buf, 0, 4096);

	ASSERT_EQ(0, lchan_ctx_open(&ctx));
	ASSERT_EQ(0, lchan_listen(&ctx, self->d.addr, port, 1,
				  LCHAN_FD_NONBLOCK, &lst));
	ASSERT_EQ(0, lchan_t_spawn(&child, argv, envp));
	pfd.fd = lst.fd;
	pfd.events = POLLIN;
	rc = poll(&pfd, 1, 20000);
	if (rc != 1)
		kill(child.pid, SIGKILL);
	ASSERT_EQ(1, rc) TH_LOG("quickstart did not connect");
	/* The receive is posted before the connection: iWARP needs it. */
	ASSERT_EQ(0, lchan_accept(&lst, &opts, &chan));
	ASSERT_EQ(0, lchan_mr_reg(&ctx, &chan, buf, 4096,
				  LCHAN_ACCESS_LOCAL_WRITE, &mr));
	rqe = lchan_get_rqe(&chan);
	ASSERT_NE(NULL, rqe);
	lchan_prep_recv(rqe, &mr, buf, 4096, 7);
	ASSERT_EQ(1, lchan_submit(&chan));
	ASSERT_EQ(0, lchan_establish(&chan, 10000));
	ASSERT_EQ(0, lchan_wait_cqe(&chan, &c, 10000));
	cqe = *c;
	lchan_cqe_seen(&chan);
	EXPECT_EQ(LCHAN_CQE_OK, cqe.status)
		TH_LOG("%s", lchan_cqe_status_str(cqe.status));
	EXPECT_EQ(LCHAN_CQE_RECV, cqe.opcode);
	EXPECT_EQ(7, cqe.user_data);
	EXPECT_EQ(sizeof(msg), cqe.byte_len);
	EXPECT_STREQ(msg, buf);

	rc = lchan_t_collect(&child, out, sizeof(out));
	show("quickstart", out);
	EXPECT_EQ(0, rc);
	EXPECT_STREQ("send: success\n", out);
	lchan_chan_close(&chan);
	lchan_listener_close(&lst);
	lchan_ctx_close(&ctx);
	free(buf);
}

/*
 * A program bound to the message accept of LCHAN_1.1 (a context, a ring
 * layer listener, the options) runs against today's library, where
 * lchan_msg_accept of LCHAN_1.3 takes a message listener.
 */
TEST_F_TIMEOUT(quickstart, old_message_accept_still_runs, 60)
{
	char prog[PATH_MAX], lib[PATH_MAX], env[PATH_MAX + 32], port[16];
	char out[256];
	char *argv[] = { prog, (char *)self->d.addr, port, NULL };
	char *envp[] = { env, NULL };
	struct lchan_t_child child;
	int rc;

	lchan_t_beside_me(prog, sizeof(prog), "pkgconfig/msg_accept_1_1");
	lchan_t_beside_me(lib, sizeof(lib), STAGE_LIB);
	ASSERT_EQ(0, access(prog, X_OK)) TH_LOG("%s", prog);
	snprintf(env, sizeof(env), "LD_LIBRARY_PATH=%s", lib);
	snprintf(port, sizeof(port), "%u", lchan_t_port());
	lchan_t_raise_memlock();
	ASSERT_EQ(0, lchan_t_spawn(&child, argv, envp));
	rc = lchan_t_collect(&child, out, sizeof(out));
	show("msg_accept_1_1", out);
	EXPECT_EQ(0, rc);
	EXPECT_STREQ("accept of LCHAN_1.1: success, client: success\n", out);
}

TEST_HARNESS_MAIN
