/* SPDX-License-Identifier: GPL-2.0 */
/* The C library's string functions and the kernel's memchr_inv(). */
#ifndef LCHAN_SHIM_STRING_H
#define LCHAN_SHIM_STRING_H
#include <string.h>

/* The first byte of @p's @n that is not @c, or NULL. */
static inline void *memchr_inv(const void *p, int c, size_t n)
{
	const unsigned char *s = p;
	size_t i;

	for (i = 0; i < n; i++)
		if (s[i] != (unsigned char)c)
			return (void *)(s + i);
	return NULL;
}
#endif
