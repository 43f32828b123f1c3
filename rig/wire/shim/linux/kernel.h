/* SPDX-License-Identifier: GPL-2.0 */
/* What the module's pure files take of <linux/kernel.h>. */
#ifndef LCHAN_SHIM_KERNEL_H
#define LCHAN_SHIM_KERNEL_H
#define U8_MAX 255
#define min_t(type, a, b) ((type)(a) < (type)(b) ? (type)(a) : (type)(b))
#endif
