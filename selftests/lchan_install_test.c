// SPDX-License-Identifier: GPL-2.0
/*
 * An installed liblchan works for a program from outside the tree.  The
 * selftests build runs `make -C lib install` into pkgconfig/stage/ beside
 * the test programs and builds pkgconfig/hello with nothing but
 * `pkg-config --cflags --libs liblchan` of that staged install.  Here
 * hello runs with only the staged library directory on LD_LIBRARY_PATH:
 * it must load the staged liblchan.so.1, open /dev/lchan and report what
 * the module reports in sysfs.
 */
#include <libgen.h>
#include <limits.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "lchan_test.h"

#define STAGE_LIB "pkgconfig/stage/opt/lchan/lib"

/* @rel resolved against the directory of this program. */
static void beside_me(char *buf, size_t len, const char *rel)
{
	char exe[PATH_MAX];
	ssize_t n;

	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = 0;
	snprintf(buf, len, "%s/%s", dirname(exe), rel);
}

/* Run @prog with exactly @envp; its stdout in @out.  Exit status or -1. */
static int run_capture(const char *prog, char *const envp[], char *out,
		       size_t len)
{
	char *const argv[] = { (char *)prog, NULL };
	int pfd[2], status;
	size_t got = 0;
	ssize_t n;
	pid_t pid;

	if (pipe(pfd))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		dup2(pfd[1], 1);
		close(pfd[0]);
		close(pfd[1]);
		execve(prog, argv, envp);
		_exit(127);
	}
	close(pfd[1]);
	while (got < len - 1 &&
	       (n = read(pfd[0], out + got, len - 1 - got)) > 0)
		got += n;
	out[got] = 0;
	close(pfd[0]);
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
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

	beside_me(hello, sizeof(hello), "pkgconfig/hello");
	beside_me(lib, sizeof(lib), STAGE_LIB);
	ASSERT_EQ(0, access(hello, X_OK))
		TH_LOG("%s: %s (did the selftests build stage the install?)",
		       hello, strerror(errno));
	snprintf(val, sizeof(val), "%s/liblchan.so.1", lib);
	ASSERT_NE(NULL, realpath(val, want_so)) TH_LOG("%s", val);
	if (!lchan_t_module_loaded())
		SKIP(return, "lchan is not loaded");

	snprintf(env, sizeof(env), "LD_LIBRARY_PATH=%s", lib);
	rc = run_capture(hello, envp, out, sizeof(out));
	TH_LOG("hello says:\n%s", out);
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

	beside_me(hello, sizeof(hello), "pkgconfig/hello");
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

TEST_HARNESS_MAIN
