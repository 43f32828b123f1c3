/* SPDX-License-Identifier: LGPL-2.1-or-later OR MIT */
/*
 * The only memory-ordering primitives liblchan uses, over C11 atomics.
 * They pair with the kernel's smp_load_acquire()/smp_store_release() on
 * the same ring words (see the comment at the top of kmod/lchan_ring.c).
 */
#ifndef LCHAN_BARRIER_H
#define LCHAN_BARRIER_H

#include <stdatomic.h>

#define lchan_load_acquire(p) \
	atomic_load_explicit((_Atomic __typeof__(*(p)) *)(p), memory_order_acquire)
#define lchan_store_release(p, v) \
	atomic_store_explicit((_Atomic __typeof__(*(p)) *)(p), (v), \
			      memory_order_release)

#endif
