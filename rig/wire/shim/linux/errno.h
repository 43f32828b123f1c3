/* SPDX-License-Identifier: GPL-2.0 */
/* The kernel's errno names: the uapi header's, which the host has. */
#include_next <linux/errno.h>
