/* SPDX-License-Identifier: GPL-2.0 */
/* The kernel's byte order helpers over the C library's. */
#ifndef LCHAN_SHIM_BYTEORDER_H
#define LCHAN_SHIM_BYTEORDER_H
#include <endian.h>
#define cpu_to_be16(x) ((__be16)htobe16(x))
#define cpu_to_be32(x) ((__be32)htobe32(x))
#define cpu_to_be64(x) ((__be64)htobe64(x))
#define be16_to_cpu(x) be16toh(x)
#define be32_to_cpu(x) be32toh(x)
#define be64_to_cpu(x) be64toh(x)
#endif
