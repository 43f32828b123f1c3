// SPDX-License-Identifier: GPL-2.0
/*
 * lchan-run(1): lchan_socket_test, the TCP socket semantics written down
 * against plain TCP, run unchanged under lchan-run on a device's
 * addresses must give the same verdicts, every test passing.  How its
 * connections went is checked too, from the decisions LCHAN_RUN_DEBUG
 * prints: on rxe its listeners serve TCP and lchan and its connects go
 * over stream channels; on siw (iWARP listens in TCP's own port space)
 * its listeners stay TCP and its connects fall back to TCP without a
 * byte of iWARP reaching the TCP server.
 */
#include <sys/wait.h>
#include <limits.h>

#include "kselftest_harness.h"
#include "lchan_test.h"

#define OUT_LEN	(512 * 1024)

FIXTURE(run) {
	struct lchan_t_dev d;
	char tool[512];
	char prog[512];
	char *out;
};

LCHAN_T_VARIANTS(run);

/* @name in LCHAN_TOOLS (the rig's), else in the build tree beside. */
static void find_in(char *buf, size_t len, const char *env, const char *rel,
		    const char *name)
{
	const char *dir = getenv(env);

	if (dir && *dir)
		snprintf(buf, len, "%s/%s", dir, name);
	else
		lchan_t_beside_me(buf, len, rel);
}

FIXTURE_SETUP(run)
{
	struct lchan_ctx ctx;
	struct lchan_info info;

	self->out = NULL;
	LCHAN_T_NEED_DEV(&self->d, variant->kind);
	if (lchan_ctx_open(&ctx))
		LCHAN_T_SETUP_SKIP("lchan is not loaded");
	ASSERT_EQ(0, lchan_query(&ctx, &info));
	lchan_ctx_close(&ctx);
	if (!(info.features & LCHAN_FEATURE_STREAM))
		LCHAN_T_SETUP_SKIP("the module has no stream channels");
	find_in(self->tool, sizeof(self->tool), "LCHAN_TOOLS",
		"../tools/lchan-run", "lchan-run");
	find_in(self->prog, sizeof(self->prog), "LCHAN_SELFTESTS",
		"lchan_socket_test", "lchan_socket_test");
	if (access(self->tool, X_OK))
		LCHAN_T_SETUP_SKIP("no lchan-run (%.400s)", self->tool);
	ASSERT_EQ(0, access(self->prog, X_OK)) TH_LOG("no %s", self->prog);
	self->out = malloc(OUT_LEN);
	ASSERT_NE(NULL, self->out);
}

FIXTURE_TEARDOWN(run)
{
	free(self->out);
}

/* Lines of @out that contain @what. */
static unsigned count_lines(const char *out, const char *what)
{
	unsigned n = 0;
	const char *p = out;

	while ((p = strstr(p, what))) {
		n++;
		p += strlen(what);
	}
	return n;
}

TEST_F_TIMEOUT(run, socket_semantics_unchanged, 900)
{
	char *argv[] = { "/bin/sh", "-c", "exec \"$0\" \"$@\" 2>&1",
			 self->tool, self->prog, NULL };
	bool iwarp = !strcmp(variant->kind, "siw");
	unsigned over_lchan, over_tcp, listen_both, listen_tcp;
	struct lchan_t_child c;
	int rc;

	setenv("LCHAN_RUN_DEBUG", "1", 1);
	setenv("LCHAN_SOCKET_TEST_ADDR", self->d.addr, 1);
	if (self->d.addr6[0])
		setenv("LCHAN_SOCKET_TEST_ADDR6", self->d.addr6, 1);
	else
		unsetenv("LCHAN_SOCKET_TEST_ADDR6");
	ASSERT_EQ(0, lchan_t_spawn(&c, argv, NULL));
	rc = lchan_t_collect(&c, self->out, OUT_LEN);

	over_lchan = count_lines(self->out, ": lchan\n");
	over_tcp = count_lines(self->out, ": TCP (");
	listen_both = count_lines(self->out, ": TCP and lchan\n");
	listen_tcp = count_lines(self->out, ": TCP only (");
	if (rc || count_lines(self->out, "\nnot ok "))
		lchan_t_show_lines(self->out);
	EXPECT_EQ(0, rc);
	EXPECT_NE(NULL, strstr(self->out, "# PASSED:"));
	EXPECT_EQ(0, count_lines(self->out, "\nnot ok "));
	if (iwarp) {
		EXPECT_EQ(0, over_lchan);
		EXPECT_EQ(0, listen_both);
		EXPECT_LT(0, listen_tcp);
		EXPECT_LT(0, count_lines(self->out,
					 ": TCP (Protocol not supported)"));
	} else {
		EXPECT_LT(0, over_lchan);
		EXPECT_LT(0, listen_both);
	}
	printf("# %s: %u connects over lchan, %u over TCP; %u listeners "
	       "with lchan, %u TCP only\n", variant->kind, over_lchan,
	       over_tcp, listen_both, listen_tcp);
	fflush(stdout);
}

TEST_HARNESS_MAIN
