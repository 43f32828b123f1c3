/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel's <linux/types.h> for a host build of the module's pure
 * files (rig/check-link-wire.sh): the uapi types, then the kernel's own
 * names for them.
 */
#ifndef LCHAN_SHIM_TYPES_H
#define LCHAN_SHIM_TYPES_H
#include_next <linux/types.h>
#include <stdbool.h>
#include <stddef.h>

typedef __u8 u8;
typedef __u16 u16;
typedef __u32 u32;
typedef __u64 u64;
#endif
