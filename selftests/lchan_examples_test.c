// SPDX-License-Identifier: GPL-2.0
/*
 * The programs of examples/ run as a user runs them: built by their own
 * Makefile against the staged `make install` beside the test programs
 * (selftests/Makefile), the staged liblchan first on LD_LIBRARY_PATH.
 * Each server and client pair runs on the variant's device, the server
 * started first; a client that finds nobody listening yet ("Connection
 * refused") is started again.  Both must exit 0 within their time, and
 * both print what they did, which the log shows.  The fi_ pair needs the
 * lchan provider (LCHAN_FABRIC) and was built only where libfabric's
 * development files were: it SKIPs without either.
 */
#include "kselftest_harness.h"
#include "lchan_test.h"

#define STAGE_LIB	"pkgconfig/stage/opt/lchan/lib"
#define EX_SERVER_S	60	/* a server's whole life */
#define EX_CLIENT_S	30	/* one run of a client */
#define EX_LISTEN_S	20	/* how long a refused client is started again */
#define EX_RETRY_US	200000

FIXTURE(examples) {
	struct lchan_t_dev d;
};

LCHAN_T_VARIANTS(examples);

FIXTURE_SETUP(examples)
{
	LCHAN_T_NEED_DEV(&self->d, variant->kind);
	if (!lchan_t_module_loaded())
		LCHAN_T_SETUP_SKIP("lchan is not loaded");
}

FIXTURE_TEARDOWN(examples)
{
}

/* One run of an example, its stdout and stderr in a file of its own. */
struct ex_run {
	const char *name;
	char log[PATH_MAX];
	pid_t pid;
	int status;		/* exit status, 128 + signal; -1 while it runs */
	bool killed;		/* ended by its time limit */
};

static void ex_path(char *buf, size_t len, const char *name)
{
	char rel[64];

	snprintf(rel, sizeof(rel), "examples/%s", name);
	lchan_t_beside_me(buf, len, rel);
}

static int ex_start(struct ex_run *r, const char *addr, const char *port)
{
	const char *dir = getenv("LCHAN_OUT");
	char prog[PATH_MAX];
	char *argv[] = { prog, (char *)addr, (char *)port, NULL };

	ex_path(prog, sizeof(prog), r->name);
	snprintf(r->log, sizeof(r->log), "%s/examples.%s.%d.log",
		 dir && *dir ? dir : "/tmp", r->name, (int)getpid());
	r->status = -1;
	r->killed = false;
	r->pid = lchan_t_spawn_logged(argv, r->log);
	return r->pid < 0 ? (int)r->pid : 0;
}

/* Has it ended?  Collects its status when it has. */
static bool ex_done(struct ex_run *r)
{
	int st;

	if (r->status >= 0)
		return true;
	if (waitpid(r->pid, &st, WNOHANG) != r->pid)
		return false;
	r->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	return true;
}

/* Wait until @end (lchan_t_now()); past it, kill its process group. */
static int ex_wait(struct ex_run *r, double end)
{
	while (!ex_done(r)) {
		if (lchan_t_now() > end) {
			kill(-r->pid, SIGKILL);
			r->killed = true;
			r->status = lchan_t_wait_child(r->pid);
			break;
		}
		usleep(20000);
	}
	return r->status;
}

/* Its output, each line behind its name. */
static void ex_show(const struct ex_run *r)
{
	char line[512];
	FILE *f = fopen(r->log, "r");

	if (r->killed)
		printf("# %s: killed after its time limit\n", r->name);
	if (!f) {
		printf("# %s: no output (%s)\n", r->name, r->log);
		return;
	}
	while (fgets(line, sizeof(line), f))
		printf("# %s: %s%s", r->name, line,
		       strchr(line, '\n') ? "" : "\n");
	fclose(f);
	fflush(stdout);
}

static bool ex_log_has(const struct ex_run *r, const char *text)
{
	char buf[4096];
	FILE *f = fopen(r->log, "r");
	size_t n;

	if (!f)
		return false;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	return strstr(buf, text) != NULL;
}

/* Its output begins with the line it prints when it is done: "NAME: ". */
static bool ex_said_done(const struct ex_run *r)
{
	char want[64];

	snprintf(want, sizeof(want), "%s: ", r->name);
	return ex_log_has(r, want);
}

/*
 * Run @server, then @client until it is not refused (or EX_LISTEN_S has
 * passed), on the device's address and a port of this test; both must
 * exit 0.
 */
static void ex_pair(struct __test_metadata *_metadata,
		    const struct lchan_t_dev *d, const char *server,
		    const char *client)
{
	struct ex_run srv = { .name = server }, cli = { .name = client };
	char lib[PATH_MAX], env[2 * PATH_MAX], port[16];
	const char *old = getenv("LD_LIBRARY_PATH");
	double srv_end, listen_end;
	unsigned tries = 0;
	int ret;

	/* The staged liblchan first; the rest for libfabric and its kin. */
	lchan_t_beside_me(lib, sizeof(lib), STAGE_LIB);
	snprintf(env, sizeof(env), "%s%s%s", lib, old && *old ? ":" : "",
		 old && *old ? old : "");
	setenv("LD_LIBRARY_PATH", env, 1);
	lchan_t_raise_memlock();
	snprintf(port, sizeof(port), "%u", lchan_t_port());

	ret = ex_start(&srv, d->addr, port);
	ASSERT_EQ(0, ret) TH_LOG("%s: %s", server, strerror(-ret));
	srv_end = lchan_t_now() + EX_SERVER_S;
	listen_end = lchan_t_now() + EX_LISTEN_S;
	for (;;) {
		tries++;
		ret = ex_start(&cli, d->addr, port);
		if (ret) {
			TH_LOG("%s: %s", client, strerror(-ret));
			break;
		}
		ex_wait(&cli, lchan_t_now() + EX_CLIENT_S);
		/* Refused: the server does not listen yet. */
		if (cli.status == 0 || !ex_log_has(&cli, "Connection refused") ||
		    ex_done(&srv) || lchan_t_now() > listen_end)
			break;
		unlink(cli.log);
		usleep(EX_RETRY_US);
	}
	ex_wait(&srv, srv_end);
	printf("# %s %s %s, %s %s %s: %u run%s of the client\n", server,
	       d->addr, port, client, d->addr, port, tries,
	       tries == 1 ? "" : "s");
	ex_show(&srv);
	if (cli.pid > 0)
		ex_show(&cli);
	EXPECT_EQ(0, srv.status) TH_LOG("%s: exit status %d", server,
					 srv.status);
	EXPECT_EQ(0, cli.status) TH_LOG("%s: exit status %d", client,
					 cli.status);
	EXPECT_TRUE(ex_said_done(&srv));
	EXPECT_TRUE(ex_said_done(&cli));
	unlink(srv.log);
	if (cli.pid > 0)
		unlink(cli.log);
}

/* README's pair: one 64 KiB message there and back through liblchan_msg. */
TEST_F_TIMEOUT(examples, msg_server_and_client, 150)
{
	ex_pair(_metadata, &self->d, "msg_server", "msg_client");
}

/* Deferred establish, SEND/RECV, RDMA READ and WRITE through the rings. */
TEST_F_TIMEOUT(examples, ring_server_and_client, 150)
{
	ex_pair(_metadata, &self->d, "ring_server", "ring_client");
}

/* FI_EP_MSG over the lchan provider, through libfabric's API. */
TEST_F_TIMEOUT(examples, fi_server_and_client, 150)
{
	char prog[PATH_MAX], why[320];

	ex_path(prog, sizeof(prog), "fi_server");
	if (access(prog, X_OK))
		SKIP(return, "examples/fi_server was not built (no libfabric development files)");
	if (lchan_t_fabric_provider(why, sizeof(why)))
		SKIP(return, "%s", why);
	ex_pair(_metadata, &self->d, "fi_server", "fi_client");
}

TEST_HARNESS_MAIN
