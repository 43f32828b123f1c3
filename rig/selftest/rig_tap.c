// SPDX-License-Identifier: GPL-2.0
/*
 * A kselftest program for the rig's own self-test.  Built twice: as "pass"
 * (one passing, one skipped test) and, with RIG_FAIL, as "fail" (plus one
 * test that fails on purpose).  The runner must count all three kinds.
 */
#include "kselftest_harness.h"

TEST(rig_passes)
{
	ASSERT_EQ(2, 1 + 1);
}

TEST(rig_skips)
{
	SKIP(return, "skipped on purpose");
}

#ifdef RIG_FAIL
TEST(rig_fails_on_purpose)
{
	EXPECT_EQ(1, 2) {
		TH_LOG("failing on purpose: the rig must report this");
	}
}
#endif

TEST_HARNESS_MAIN
