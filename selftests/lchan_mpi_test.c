// SPDX-License-Identifier: GPL-2.0
/*
 * An Open MPI job over lchan channels: mpirun starts two ranks of
 * mpi/lchan_mpi_ranks on this node, kept off shared memory (pml cm with
 * mtl ofi, btl self only) so that every message goes through libfabric's
 * ofi_rxm over the provider "lchan" on the variant's device
 * (FI_LCHAN_DEVICE).  The ranks check a ping-pong and an allreduce byte by
 * byte; while they hold their connections, lchanctl must list the job's
 * channels on that device, one of each rank, each having sent at least
 * the ping-pong's messages.  SKIPs without mpirun (openmpi-bin), the ranks
 * program (built when libopenmpi-dev is there), lchanctl or the provider.
 */
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "lchan_test.h"

#define MPI_T_MPIRUN	"/usr/bin/mpirun"
/* The whole job: start-up under emulation is slow. */
#define MPI_T_TIMEOUT_S	300
/* The ranks' ping-pong round trips (MPI_R_ROUNDS of lchan_mpi_ranks). */
#define MPI_T_ROUNDS	200

FIXTURE(mpi) {
	struct lchan_t_dev d;
	char ranks[256];
	char ctl[256];
	char provdir[256];
	char dir[64];
};

LCHAN_T_VARIANTS(mpi);

/* @name in $LCHAN_SELFTESTS or $LCHAN_TOOLS, else beside this program. */
static int mpi_t_find(char *buf, size_t len, const char *env,
		      const char *rel, const char *name)
{
	const char *dir = getenv(env);
	char exe[PATH_MAX];
	ssize_t n;

	if (dir && *dir) {
		snprintf(buf, len, "%s/%s", dir, name);
	} else {
		n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
		exe[n > 0 ? n : 0] = 0;
		snprintf(buf, len, "%s/%s%s", dirname(exe), rel, name);
	}
	return access(buf, X_OK) ? -ENOENT : 0;
}

FIXTURE_SETUP(mpi)
{
	const char *fab = getenv("LCHAN_FABRIC");

	self->dir[0] = 0;
	LCHAN_T_NEED_DEV(&self->d, variant->kind);
	if (access(MPI_T_MPIRUN, X_OK))
		LCHAN_T_SETUP_SKIP("no mpirun (openmpi-bin)");
	if (mpi_t_find(self->ranks, sizeof(self->ranks), "LCHAN_SELFTESTS",
		       "", "mpi/lchan_mpi_ranks"))
		LCHAN_T_SETUP_SKIP("no %s (built with libopenmpi-dev)", self->ranks);
	if (mpi_t_find(self->ctl, sizeof(self->ctl), "LCHAN_TOOLS",
		       "../tools/", "lchanctl"))
		LCHAN_T_SETUP_SKIP("no %s", self->ctl);
	if (!fab || !*fab)
		LCHAN_T_SETUP_SKIP("LCHAN_FABRIC does not name the provider's directory");
	snprintf(self->provdir, sizeof(self->provdir), "%s/liblchan-fi.so", fab);
	if (access(self->provdir, R_OK))
		LCHAN_T_SETUP_SKIP("no %s", self->provdir);
	snprintf(self->provdir, sizeof(self->provdir), "%s", fab);
	if (!lchan_t_module_loaded())
		LCHAN_T_SETUP_SKIP("lchan not loaded");
	snprintf(self->dir, sizeof(self->dir), "/tmp/lchan_mpi.XXXXXX");
	ASSERT_NE(NULL, mkdtemp(self->dir));
}

FIXTURE_TEARDOWN(mpi)
{
	char path[128];

	if (!self->dir[0])
		return;
	snprintf(path, sizeof(path), "%s/ready", self->dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/go", self->dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/mpirun.log", self->dir);
	unlink(path);
	rmdir(self->dir);
}

/* mpirun with output into @log, in its own process group. */
static pid_t mpi_t_start(FIXTURE_DATA(mpi) *self, const char *log)
{
	char provpath[300], dev[96];
	char *argv[] = {
		MPI_T_MPIRUN, "--allow-run-as-root", "--oversubscribe",
		"-np", "2", "--mca", "plm", "isolated",
		"--mca", "pml", "cm", "--mca", "mtl", "ofi",
		"--mca", "mtl_ofi_provider_include", "lchan;ofi_rxm",
		"--mca", "btl", "self",
		"-x", provpath, "-x", dev, "-x", "LD_LIBRARY_PATH",
		self->ranks, self->dir, NULL
	};

	snprintf(provpath, sizeof(provpath), "FI_PROVIDER_PATH=%s",
		 self->provdir);
	snprintf(dev, sizeof(dev), "FI_LCHAN_DEVICE=%s", self->d.dev);
	return lchan_t_spawn_logged(argv, log);
}

/*
 * lchanctl's lines for connected channels on @dev that have sent at least
 * the ping-pong's messages, from two processes other than this one; the
 * output in @out.
 */
static int mpi_t_channels(const char *ctl, const char *dev, char *out,
			  size_t len)
{
	char line[512], want[96];
	long pid, first = getpid();
	unsigned long sent;
	size_t got = 0;
	const char *f;
	int n = 0;
	FILE *p;

	snprintf(want, sizeof(want), " dev %s/", dev);
	out[0] = 0;
	p = popen(ctl, "r");
	if (!p)
		return -errno;
	while (fgets(line, sizeof(line), p)) {
		f = strstr(line, " pid ");
		pid = f ? strtol(f + 5, NULL, 10) : 0;
		f = strstr(line, " send ");
		sent = f ? strtoul(f + 6, NULL, 10) : 0;
		if (!strncmp(line, "chan ", 5) && strstr(line, want) &&
		    strstr(line, " state connected ") && pid > 0 &&
		    pid != getpid() && pid != first && sent >= MPI_T_ROUNDS) {
			/* One channel per rank: the second from another pid. */
			if (first == getpid())
				first = pid;
			n++;
		}
		if (got + strlen(line) < len) {
			memcpy(out + got, line, strlen(line) + 1);
			got += strlen(line);
		}
	}
	return pclose(p) ? -EIO : n;
}

static int mpi_t_count(const char *log, const char *what)
{
	char line[512];
	FILE *f = fopen(log, "r");
	int n = 0;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, what))
			n++;
	fclose(f);
	return n;
}

/*
 * Two ranks, ping-pong and allreduce checked by the ranks, the job's
 * channels listed by lchanctl while it runs, a clean exit.
 */
TEST_F_TIMEOUT(mpi, pingpong_allreduce, MPI_T_TIMEOUT_S + 60)
{
	char log[128], ready[128], go[128], out[16384];
	double t0 = lchan_t_now(), up = 0;
	int st = -1, chans = -1, fd;
	bool done = false;
	pid_t pid, r;

	snprintf(log, sizeof(log), "%s/mpirun.log", self->dir);
	snprintf(ready, sizeof(ready), "%s/ready", self->dir);
	snprintf(go, sizeof(go), "%s/go", self->dir);
	pid = mpi_t_start(self, log);
	ASSERT_LT(0, pid);
	while (lchan_t_now() < t0 + MPI_T_TIMEOUT_S) {
		r = waitpid(pid, &st, WNOHANG);
		if (r == pid) {
			done = true;
			break;
		}
		if (!up && !access(ready, F_OK)) {
			up = lchan_t_now() - t0;
			chans = mpi_t_channels(self->ctl, self->d.dev, out,
					       sizeof(out));
			fd = open(go, O_WRONLY | O_CREAT, 0644);
			if (fd >= 0)
				close(fd);
		}
		usleep(50000);
	}
	if (!done) {
		kill(-pid, SIGKILL);
		waitpid(pid, &st, 0);
	}
	if (!done || !WIFEXITED(st) || WEXITSTATUS(st) ||
	    mpi_t_count(log, ": ok: ") != 2 || chans < 2)
		lchan_t_dump_log(_metadata, "mpirun", log);
	EXPECT_TRUE(done) TH_LOG("mpirun still running after %d s",
				 MPI_T_TIMEOUT_S);
	EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0)
		TH_LOG("mpirun: status 0x%x", st);
	EXPECT_EQ(2, mpi_t_count(log, ": ok: "));
	EXPECT_EQ(0, mpi_t_count(log, "FAILED"));
	/* ofi_rxm connects the two ranks: a channel on each side. */
	EXPECT_LE(2, chans) TH_LOG("lchanctl while the job ran:\n%s", out);
	TH_LOG("mpirun on %s: ranks ready after %.1f s, %d channels listed, %.1f s in all",
	       self->d.dev, up, chans, lchan_t_now() - t0);
	if (chans >= 2)
		TH_LOG("lchanctl while the job ran:\n%s", out);
	if (!access(log, F_OK) && mpi_t_count(log, ": ok: ") == 2)
		lchan_t_dump_log(_metadata, "mpirun", log);
}

TEST_HARNESS_MAIN
