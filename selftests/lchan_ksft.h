/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What differs between the kselftest harnesses the selftests are built
 * against (6.1's and newer), for programs with or without liblchan.
 * Included after kselftest_harness.h.
 */
#ifndef LCHAN_KSFT_H
#define LCHAN_KSFT_H

#include <setjmp.h>

/*
 * SKIP from a fixture's setup: the test's body does not run, nor does the
 * teardown (setup undoes its own work first).  Newer harnesses
 * (FIXTURE_TEARDOWN_PARENT) end the test after setup by themselves;
 * 6.1's runs the body after a SKIP in setup unless setup leaves by the
 * harness's own jump.
 */
#ifdef FIXTURE_TEARDOWN_PARENT
#define LCHAN_T_SETUP_SKIP(fmt, ...) SKIP(return, fmt, ##__VA_ARGS__)
#else
#define LCHAN_T_SETUP_SKIP(fmt, ...)					\
	SKIP(longjmp(_metadata->env, 1), fmt, ##__VA_ARGS__)
#endif

/*
 * Whether the running test has failed so far, for a teardown that shows
 * more on failure: newer harnesses keep an exit code, 6.1's a flag.
 */
#ifdef FIXTURE_TEARDOWN_PARENT
#define LCHAN_T_FAILED(m) ((m)->exit_code == KSFT_FAIL)
#else
#define LCHAN_T_FAILED(m) (!(m)->passed)
#endif

#endif /* LCHAN_KSFT_H */
