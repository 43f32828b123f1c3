// SPDX-License-Identifier: GPL-2.0
/*
 * Test-only module for the rig's self-test: it WARNs while loading and
 * otherwise loads and unloads fine.  A run that loads it must fail on the
 * kernel log even though every test passes.
 */
#include <linux/module.h>
#include <linux/bug.h>

static int __init lchan_warn_init(void)
{
	WARN_ON(1);
	return 0;
}

static void __exit lchan_warn_exit(void)
{
}

module_init(lchan_warn_init);
module_exit(lchan_warn_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("lchan rig self-test: WARN on load");
