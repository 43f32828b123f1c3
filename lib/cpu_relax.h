/* SPDX-License-Identifier: LGPL-2.1-or-later OR MIT */
/* Private to liblchan: not installed. */
#ifndef LCHAN_CPU_RELAX_H
#define LCHAN_CPU_RELAX_H

/* A spin-wait's pause between two reads of a word another CPU writes. */
static inline void lchan_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield");
#endif
}

#endif
