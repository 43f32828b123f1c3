// SPDX-License-Identifier: GPL-2.0
/*
 * The module skeleton: load/unload cycles, RDMA devices appearing and
 * disappearing in /sys/kernel/lchan, /dev/lchan from many processes.
 */
#include <sys/ioctl.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "lchan_test.h"

#define LCHAN_SYSFS "/sys/kernel/lchan"

FIXTURE(module) {
	struct lchan_t_dev d;
	char dev_dir[160];
};

LCHAN_T_VARIANTS(module);

FIXTURE_SETUP(module)
{
	LCHAN_T_NEED_DEV(&self->d, variant->kind);
	if (!lchan_t_module_loaded())
		LCHAN_T_SETUP_SKIP("lchan is not loaded");
	snprintf(self->dev_dir, sizeof(self->dev_dir),
		 LCHAN_SYSFS "/devices/%s", self->d.dev);
}

FIXTURE_TEARDOWN(module)
{
	/* Leave the module loaded for the tests that follow. */
	if (!lchan_t_module_loaded())
		lchan_t_insmod();
}

TEST_F_TIMEOUT(module, insmod_rmmod_20_times, 300)
{
	char buf[32];
	int i;

	if (!getenv("LCHAN_KO"))
		SKIP(return, "LCHAN_KO not set");
	for (i = 0; i < 20; i++) {
		ASSERT_EQ(0, lchan_t_rmmod()) TH_LOG("rmmod #%d", i);
		ASSERT_NE(0, access(LCHAN_SYSFS, F_OK));
		ASSERT_NE(0, access("/dev/lchan", F_OK));
		ASSERT_EQ(0, lchan_t_insmod()) TH_LOG("insmod #%d", i);
		/* The device is found again by the ib_client. */
		ASSERT_EQ(0, lchan_t_wait_path(self->dev_dir, 1, 5));
		ASSERT_EQ(0, lchan_t_wait_path("/dev/lchan", 1, 5));
	}
	ASSERT_EQ(0, lchan_t_read_sysfs(LCHAN_SYSFS "/abi_version", buf,
					sizeof(buf)));
	ASSERT_EQ(LCHAN_ABI_VERSION, atoi(buf));
}

TEST_F(module, sysfs_shows_device)
{
	char path[200], buf[64];

	ASSERT_EQ(0, access(self->dev_dir, F_OK)) TH_LOG("%s", self->dev_dir);
	snprintf(path, sizeof(path), "%s/transport", self->dev_dir);
	ASSERT_EQ(0, lchan_t_read_sysfs(path, buf, sizeof(buf)));
	EXPECT_STREQ(strcmp(self->d.kind, "siw") ? "RoCE" : "iWARP", buf);
	snprintf(path, sizeof(path), "%s/ports", self->dev_dir);
	ASSERT_EQ(0, lchan_t_read_sysfs(path, buf, sizeof(buf)));
	EXPECT_EQ(1, atoi(buf));
	snprintf(path, sizeof(path), "%s/channels", self->dev_dir);
	ASSERT_EQ(0, lchan_t_read_sysfs(path, buf, sizeof(buf)));
	EXPECT_EQ(0, atoi(buf));
}

static int run_rdma(const char *fmt, const char *a, const char *b,
		    const char *c)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), fmt, a, b, c);
	return system(cmd);
}

TEST_F_TIMEOUT(module, device_add_delete_tracked, 120)
{
	char name[32], dir[160];
	int i;

	if (!*self->d.spare_netdev)
		SKIP(return, "no spare netdev for a temporary %s link",
		     self->d.kind);
	snprintf(name, sizeof(name), "lchan_t%s", self->d.kind);
	snprintf(dir, sizeof(dir), LCHAN_SYSFS "/devices/%s", name);
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(0, run_rdma("rdma link add %s type %s netdev %s",
				      name, self->d.kind,
				      self->d.spare_netdev));
		ASSERT_EQ(0, lchan_t_wait_path(dir, 1, 10))
			TH_LOG("%s did not appear", dir);
		ASSERT_EQ(0, run_rdma("rdma link delete %s%s%s", name, "", ""));
		ASSERT_EQ(0, lchan_t_wait_path(dir, 0, 10))
			TH_LOG("%s did not go away", dir);
	}
	/* The permanent device is untouched. */
	ASSERT_EQ(0, access(self->dev_dir, F_OK));
}

TEST_F_TIMEOUT(module, open_close_many_processes, 120)
{
	const int nproc = 16, rounds = 200;
	int i, status, failed = 0;

	for (i = 0; i < nproc; i++) {
		pid_t pid = fork();

		ASSERT_GE(pid, 0);
		if (pid == 0) {
			int r;

			for (r = 0; r < rounds; r++) {
				int fd = open("/dev/lchan", O_RDWR);

				if (fd < 0 || close(fd))
					_exit(1);
			}
			_exit(0);
		}
	}
	for (i = 0; i < nproc; i++) {
		ASSERT_GT(wait(&status), 0);
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			failed++;
	}
	EXPECT_EQ(0, failed);
}

TEST_F(module, unknown_ioctl_enotty)
{
	unsigned long bad[] = {
		0, _IO(LCHAN_IOCTL_TYPE, 0), _IO(LCHAN_IOCTL_TYPE, 0x7f),
		_IO(LCHAN_IOCTL_TYPE, 0xff), _IOWR('T', 1, int),
		LCHAN_IOC_ENTER, LCHAN_IOC_ACCEPT, LCHAN_IOC_CHAN_INFO,
	};
	char arg[256] = { 0 };
	unsigned i;
	int fd;

	fd = open("/dev/lchan", O_RDWR);
	ASSERT_GE(fd, 0);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		errno = 0;
		EXPECT_EQ(-1, ioctl(fd, bad[i], arg)) TH_LOG("cmd %#lx", bad[i]);
		EXPECT_EQ(ENOTTY, errno) TH_LOG("cmd %#lx", bad[i]);
	}
	close(fd);
}

TEST_F(module, info_reports_abi)
{
	struct lchan_ctx ctx;
	struct lchan_info info;

	ASSERT_EQ(0, lchan_ctx_open(&ctx));
	ASSERT_EQ(0, lchan_query(&ctx, &info));
	EXPECT_EQ(LCHAN_ABI_VERSION, info.abi_version);
	EXPECT_NE(0, info.features & LCHAN_FEATURE_SEND);
	EXPECT_GE(info.max_entries, 64);
	lchan_ctx_close(&ctx);
}

TEST_HARNESS_MAIN
