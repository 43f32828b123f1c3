/* SPDX-License-Identifier: GPL-2.0 */
/*
 * lchan kernel compatibility: the module uses the kernel API of the newest
 * kernel it supports (6.12); this header supplies the parts of it that
 * older kernels (back to 6.1) lack.  The module's only kernel version tests
 * are here.
 */
#ifndef LCHAN_COMPAT_H
#define LCHAN_COMPAT_H

#include <linux/file.h>
#include <linux/mm.h>
#include <linux/net.h>
#include <linux/version.h>
#include <rdma/ib_verbs.h>

/*
 * 6.12 packed struct fd into one word (file pointer and flags) and added
 * fd_file() to read the file; before, it was the member ->file.
 */
#ifndef fd_file
#define fd_file(f) ((f).file)
#endif

/*
 * 6.3 made vma->vm_flags read-only and added vm_flags_set() and
 * vm_flags_clear(), so that a change of the flags also write-locks the VMA
 * (per-VMA locking).
 */
#if KERNEL_VERSION(6, 3, 0) > LINUX_VERSION_CODE
static inline void vm_flags_set(struct vm_area_struct *vma, vm_flags_t flags)
{
	vma->vm_flags |= flags;
}

static inline void vm_flags_clear(struct vm_area_struct *vma,
				  vm_flags_t flags)
{
	vma->vm_flags &= ~flags;
}
#endif

/*
 * 6.4 moved rxe's requester, responder and completer from tasklets to a
 * workqueue.  With tasklets, a post with BHs disabled runs the request on
 * this CPU as soon as they are enabled again (raised from process context
 * it would wait for ksoftirqd), and rxe reports completions in softirq
 * context, where IB_POLL_SOFTIRQ polls the CQ at once.  Since 6.4 a post
 * only queues work, and rxe reports completions from a kworker: a softirq
 * raised there waits for ksoftirqd, a scheduler tick on a busy CPU, while
 * ib_core's high-priority completion workqueue runs at once.  siw reports
 * from softirq or from its own threads on every kernel.  On 6.12 rxe is
 * faster with IB_POLL_WORKQUEUE than with IB_POLL_SOFTIRQ, and siw with
 * BHs left enabled than with them disabled (bench/README.md).
 */
#define LCHAN_RXE_TASKLETS (KERNEL_VERSION(6, 4, 0) > LINUX_VERSION_CODE)

static inline bool lchan_compat_post_bh_off(const struct ib_device *ibdev)
{
	return LCHAN_RXE_TASKLETS;
}

/* rxe's CQ poll context (its entry in lchan_quirk.c). */
#define LCHAN_COMPAT_RXE_CQ_POLL \
	(LCHAN_RXE_TASKLETS ? IB_POLL_SOFTIRQ : IB_POLL_WORKQUEUE)

/*
 * 6.10 gave proto_ops.accept one argument for the flags and the caller's
 * kind, struct proto_accept_arg (defined here before).  The module's
 * accept takes the new form: LCHAN_COMPAT_ACCEPT_DEFINE(fn); checks it and
 * makes what LCHAN_COMPAT_ACCEPT(fn) names for its proto_ops, and
 * lchan_compat_accept() calls another socket's.
 */
#if KERNEL_VERSION(6, 10, 0) > LINUX_VERSION_CODE
struct proto_accept_arg {
	int flags;
	int err;
	int is_empty;
	bool kern;
};
#endif

typedef int (*lchan_compat_accept_t)(struct socket *, struct socket *,
				     struct proto_accept_arg *);

#if KERNEL_VERSION(6, 10, 0) > LINUX_VERSION_CODE
#define LCHAN_COMPAT_ACCEPT_DEFINE(fn)					\
static int fn##_compat(struct socket *sock, struct socket *newsock,	\
		       int flags, bool kern)				\
{									\
	struct proto_accept_arg arg = { .flags = flags, .kern = kern };	\
									\
	return fn(sock, newsock, &arg);					\
}									\
static_assert(__same_type(&fn, lchan_compat_accept_t))
#define LCHAN_COMPAT_ACCEPT(fn) fn##_compat

static inline int lchan_compat_accept(struct socket *sock,
				      struct socket *newsock,
				      struct proto_accept_arg *arg)
{
	return sock->ops->accept(sock, newsock, arg->flags, arg->kern);
}
#else
#define LCHAN_COMPAT_ACCEPT_DEFINE(fn) \
	static_assert(__same_type(&fn, lchan_compat_accept_t))
#define LCHAN_COMPAT_ACCEPT(fn) fn

static inline int lchan_compat_accept(struct socket *sock,
				      struct socket *newsock,
				      struct proto_accept_arg *arg)
{
	return sock->ops->accept(sock, newsock, arg);
}
#endif

/*
 * The poller pool learns how long its threads waited for their CPU from
 * the scheduler's run_delay.  Every distribution kernel has it (delay
 * accounting and schedstats select it).
 */
#ifndef CONFIG_SCHED_INFO
#error "lchan needs CONFIG_SCHED_INFO (selected by CONFIG_TASK_DELAY_ACCT)"
#endif

#endif /* LCHAN_COMPAT_H */
