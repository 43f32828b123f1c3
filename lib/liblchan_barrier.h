/* SPDX-License-Identifier: LGPL-2.1-or-later OR MIT */
/*
 * The only memory-ordering primitives liblchan uses.  They pair with the
 * kernel's smp_load_acquire()/smp_store_release() on the same ring words
 * (see the comment at the top of kmod/lchan_ring.c).
 *
 * The ring words are plain integers in memory the kernel shares.  C11's
 * _Atomic and <stdatomic.h> do not exist in C++, and C++ before C++20 has
 * no atomic access to a plain object, so these are gcc's and clang's
 * __atomic builtins, the same in C and every C++ standard; in C they are
 * what <stdatomic.h>'s explicit-order calls expand to.
 */
#ifndef LCHAN_BARRIER_H
#define LCHAN_BARRIER_H

/* Load the other side's index: later reads see what it wrote before. */
#define lchan_load_acquire(p)		__atomic_load_n((p), __ATOMIC_ACQUIRE)
/* Publish our index: what we wrote before is seen by whoever reads it. */
#define lchan_store_release(p, v) \
	__atomic_store_n((p), (v), __ATOMIC_RELEASE)
/* A word the other side writes whose ordering a fence provides. */
#define lchan_load_relaxed(p)		__atomic_load_n((p), __ATOMIC_RELAXED)
/* Full fence: earlier stores before later loads. */
#define lchan_fence_seq_cst()		__atomic_thread_fence(__ATOMIC_SEQ_CST)

#endif
