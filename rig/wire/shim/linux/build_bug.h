/* SPDX-License-Identifier: GPL-2.0 */
/* The kernel's static_assert(), whose message is optional. */
#ifndef LCHAN_SHIM_BUILD_BUG_H
#define LCHAN_SHIM_BUILD_BUG_H
#define static_assert(expr, ...) _Static_assert(expr, #expr)
#endif
