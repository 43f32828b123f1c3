/* SPDX-License-Identifier: LGPL-2.1-or-later OR MIT */
/*
 * liblchan: RDMA channels set up by the kernel, driven through rings in
 * the process.  No global state, no hidden threads.
 *
 * Results: every function returns 0, or a count where it says so
 * (lchan_submit: entries taken), on success and a negative errno on
 * failure; test "ret < 0", not "ret", after a call that counts.  The
 * inline calls that hand out a ring slot (lchan_get_sqe, lchan_get_rqe)
 * return NULL when none is free; lchan_peek_cqe returns -EAGAIN when no
 * completion is ready.  A non-blocking connect returns -EINPROGRESS with a
 * valid, connecting channel, as a socket's connect does.
 *
 * Handles: a call that makes a context, listener, channel or memory
 * region leaves it empty when it fails (fd -1, handle 0), and closing
 * (deregistering) an empty one does nothing and returns 0, so a program
 * may close what a call was given whether or not the call succeeded.
 *
 * Set-up (setup.c): contexts, memory registration, listen/accept/connect.
 * Addresses (addr.c): struct lchan_addr from and to socket addresses,
 * host and port strings, and text.
 * Data path (this header, inline): take an SQE/RQE, fill it, submit; peek
 * completions and mark them seen, without a system call.
 */
#ifndef LIBLCHAN_H
#define LIBLCHAN_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <errno.h>
/*
 * The kernel's uapi header, installed as <includedir>/lchan/lchan.h; in
 * the source tree lib/lchan/lchan.h links to uapi/lchan.h.  Quoted, so it
 * is found beside this header whatever the include path.
 */
#include "lchan/lchan.h"
#include "liblchan_barrier.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The layout checks: static_assert is C++'s keyword, C11's _Static_assert. */
#ifdef __cplusplus
#define LCHAN_STATIC_ASSERT(e, msg)	static_assert(e, msg)
#else
#define LCHAN_STATIC_ASSERT(e, msg)	_Static_assert(e, msg)
#endif

LCHAN_STATIC_ASSERT(sizeof(struct lchan_sqe) == 64, "SQE layout");
LCHAN_STATIC_ASSERT(sizeof(struct lchan_rqe) == 32, "RQE layout");
LCHAN_STATIC_ASSERT(sizeof(struct lchan_cqe) == 32, "CQE layout");
LCHAN_STATIC_ASSERT(sizeof(struct lchan_chan_info) == 200,
		    "chan_info layout");
LCHAN_STATIC_ASSERT(sizeof(struct lchan_ctx_setup_args) == 24,
		    "ctx_setup layout");
LCHAN_STATIC_ASSERT(sizeof(struct lchan_sge) * LCHAN_SQE_SGES ==
		    sizeof(struct lchan_sqe), "SQE continuation layout");
LCHAN_STATIC_ASSERT(sizeof(struct lchan_sge) * LCHAN_RQE_SGES ==
		    sizeof(struct lchan_rqe), "RQE continuation layout");
LCHAN_STATIC_ASSERT(sizeof(struct lchan_connect_args) == 88, "connect layout");
LCHAN_STATIC_ASSERT(sizeof(struct lchan_accept_args) == 56, "accept layout");
LCHAN_STATIC_ASSERT(sizeof(struct lchan_enter_args) == 40, "enter layout");
LCHAN_STATIC_ASSERT(sizeof(struct lchan_mr_reg_args) == 40, "mr_reg layout");
#undef LCHAN_STATIC_ASSERT

/* An open /dev/lchan. */
struct lchan_ctx {
	int fd;
};

struct lchan_listener {
	int fd;
	struct lchan_addr addr;		/* bound address, port filled in */
};

/* A registered memory region. */
struct lchan_mr {
	uint32_t handle;		/* for SQEs and RQEs */
	uint32_t rkey;			/* for the peer, if remote access */
	void *addr;
	size_t length;
};

struct lchan_sq {
	unsigned *khead;		/* kernel writes */
	unsigned *ktail;		/* we write */
	unsigned *kflags;		/* kernel writes: LCHAN_SQ_NEED_WAKEUP */
	unsigned mask;
	unsigned entries;
	unsigned tail;			/* next SQE we hand out */
	unsigned published;		/* tail as last published */
	struct lchan_sqe *sqes;
};

struct lchan_rq {
	unsigned *khead;
	unsigned *ktail;
	unsigned *kposted;		/* kernel writes; NULL: not reported */
	unsigned mask;
	unsigned entries;
	unsigned tail;
	unsigned published;
	struct lchan_rqe *rqes;
};

struct lchan_cq {
	unsigned *khead;		/* we write */
	unsigned *ktail;		/* kernel writes */
	unsigned mask;
	unsigned entries;
	unsigned head;			/* next CQE we look at */
	struct lchan_cqe *cqes;
};

/* A channel: one connection, its fd and its mapped rings. */
struct lchan_chan {
	int fd;
	void *map;
	size_t map_size;
	struct lchan_sq sq;
	struct lchan_rq rq;
	struct lchan_cq cq;
	struct lchan_chan_info info;
};

/*
 * lchan_opts.flags: ack_timeout and retry_count are set.  The library
 * reads them only then: a caller built before they existed passes a
 * shorter struct.
 */
#define LCHAN_OPTS_RC	(1U << 31)
/* lchan_opts.flags: keepalive_ms is set (same reason). */
#define LCHAN_OPTS_KEEPALIVE	(1U << 30)

/* Options for connect and accept; zero means "default" everywhere. */
struct lchan_opts {
	unsigned sq_entries;
	unsigned rq_entries;
	unsigned cq_entries;
	unsigned timeout_ms;
	/*
	 * LCHAN_FD_*, LCHAN_DEFER_ESTABLISH, LCHAN_DIRECT_POLL,
	 * LCHAN_OPEN_EXCHANGE, LCHAN_CONNECT_CM_ONLY,
	 * LCHAN_CONNECT_LINK_ONLY (connect only), LCHAN_OPTS_RC,
	 * LCHAN_OPTS_KEEPALIVE
	 */
	unsigned flags;
	unsigned char ack_timeout;	/* lchan_rc_params */
	unsigned char retry_count;
	unsigned keepalive_ms;		/* lchan_rc_params; 0 = off */
};

int lchan_ctx_open(struct lchan_ctx *ctx);
int lchan_ctx_setup_poller(struct lchan_ctx *ctx, unsigned idle_ms, int cpu,
			   const struct lchan_ctx *share);
int lchan_ctx_close(struct lchan_ctx *ctx);
int lchan_query(struct lchan_ctx *ctx, struct lchan_info *info);

int lchan_mr_reg(struct lchan_ctx *ctx, struct lchan_chan *chan, void *addr,
		 size_t length, unsigned access, struct lchan_mr *mr);
int lchan_mr_dereg(struct lchan_ctx *ctx, struct lchan_mr *mr);

int lchan_addr_parse(const char *host, const char *port,
		     struct lchan_addr *addr);
int lchan_addr_format(const struct lchan_addr *addr, char *buf, size_t len);
/* <sys/socket.h>'s, declared here so that this header does not pull it in. */
struct sockaddr;
struct sockaddr_storage;
int lchan_addr_from_sockaddr(const struct sockaddr *sa,
			     struct lchan_addr *addr);
int lchan_addr_to_sockaddr(const struct lchan_addr *addr,
			   struct sockaddr_storage *ss);

int lchan_listen(struct lchan_ctx *ctx, const char *host, const char *port,
		 int backlog, unsigned flags, struct lchan_listener *lst);
int lchan_listener_close(struct lchan_listener *lst);
int lchan_accept(struct lchan_listener *lst, const struct lchan_opts *opts,
		 struct lchan_chan *chan);
int lchan_connect(struct lchan_ctx *ctx, const char *host, const char *port,
		  const struct lchan_opts *opts, struct lchan_chan *chan);
int lchan_connect_addr(struct lchan_ctx *ctx, const struct lchan_addr *dst,
		       const struct lchan_opts *opts, struct lchan_chan *chan);
int lchan_establish(struct lchan_chan *chan, unsigned timeout_ms);
int lchan_connect_result(struct lchan_chan *chan);
int lchan_chan_close(struct lchan_chan *chan);

/*
 * Stream channels (LCHAN_FD_STREAM): a TCP-like socket carried by a
 * channel, in a new fd (or -errno) that the socket calls use and close()
 * ends.  Both ends must use them.
 */
int lchan_stream_connect(struct lchan_ctx *ctx, const struct lchan_addr *dst,
			 const struct lchan_opts *opts);
int lchan_stream_accept(struct lchan_listener *lst,
			const struct lchan_opts *opts, struct lchan_addr *peer);
/*
 * A stream listener for the listening TCP socket @sock_fd: a socket that
 * accept(2) gives both TCP connections and stream channels on.
 */
int lchan_stream_listen(struct lchan_ctx *ctx, int sock_fd, unsigned flags,
			struct lchan_addr *addr);

int lchan_submit(struct lchan_chan *chan);
int lchan_submit_and_wait(struct lchan_chan *chan, unsigned min_complete,
			  long long timeout_ns);
int lchan_wait_cqe(struct lchan_chan *chan, struct lchan_cqe **cqe,
		   int timeout_ms);
int lchan_chan_state(struct lchan_chan *chan);
const char *lchan_cqe_status_str(unsigned status);

/* The fd to give to poll/epoll: readable when a CQE is ready. */
static inline int lchan_chan_fd(const struct lchan_chan *chan)
{
	return chan->fd;
}

/* Free SQ slots as the kernel last reported them. */
static inline unsigned lchan_sq_space(const struct lchan_chan *chan)
{
	return chan->sq.entries -
	       (chan->sq.tail - lchan_load_acquire(chan->sq.khead));
}

static inline unsigned lchan_rq_space(const struct lchan_chan *chan)
{
	return chan->rq.entries -
	       (chan->rq.tail - lchan_load_acquire(chan->rq.khead));
}

/* A zeroed SQE to fill, or NULL when the ring is full. */
static inline struct lchan_sqe *lchan_get_sqe(struct lchan_chan *chan)
{
	struct lchan_sqe *sqe;

	/* Acquire: the kernel has finished reading the slot we reuse. */
	if (chan->sq.tail - lchan_load_acquire(chan->sq.khead) >=
	    chan->sq.entries)
		return NULL;
	sqe = &chan->sq.sqes[chan->sq.tail & chan->sq.mask];
	chan->sq.tail++;
	memset(sqe, 0, sizeof(*sqe));
	return sqe;
}

static inline struct lchan_rqe *lchan_get_rqe(struct lchan_chan *chan)
{
	struct lchan_rqe *rqe;

	if (chan->rq.tail - lchan_load_acquire(chan->rq.khead) >=
	    chan->rq.entries)
		return NULL;
	rqe = &chan->rq.rqes[chan->rq.tail & chan->rq.mask];
	chan->rq.tail++;
	memset(rqe, 0, sizeof(*rqe));
	return rqe;
}

static inline void lchan_prep_send(struct lchan_sqe *sqe,
				   const struct lchan_mr *mr, const void *addr,
				   uint32_t len, uint64_t user_data)
{
	sqe->opcode = LCHAN_OP_SEND;
	sqe->mr = len ? mr->handle : 0;
	sqe->addr = len ? (uint64_t)(uintptr_t)addr : 0;
	sqe->len = len;
	sqe->user_data = user_data;
}

static inline void lchan_prep_send_imm(struct lchan_sqe *sqe,
				       const struct lchan_mr *mr,
				       const void *addr, uint32_t len,
				       uint32_t imm, uint64_t user_data)
{
	lchan_prep_send(sqe, mr, addr, len, user_data);
	sqe->opcode = LCHAN_OP_SEND_IMM;
	sqe->imm_data = imm;
}

static inline void lchan_prep_recv(struct lchan_rqe *rqe,
				   const struct lchan_mr *mr, void *addr,
				   uint32_t len, uint64_t user_data)
{
	rqe->mr = len ? mr->handle : 0;
	rqe->addr = len ? (uint64_t)(uintptr_t)addr : 0;
	rqe->len = len;
	rqe->user_data = user_data;
}

static inline void lchan_prep_rdma(struct lchan_sqe *sqe, uint8_t opcode,
				   const struct lchan_mr *mr, void *addr,
				   uint32_t len, uint64_t remote_addr,
				   uint32_t rkey, uint64_t user_data)
{
	lchan_prep_send(sqe, mr, addr, len, user_data);
	sqe->opcode = opcode;
	sqe->remote_addr = remote_addr;
	sqe->rkey = rkey;
}

/* RDMA WRITE of [addr, addr + len) to the peer's remote_addr. */
static inline void lchan_prep_write(struct lchan_sqe *sqe,
				    const struct lchan_mr *mr,
				    const void *addr, uint32_t len,
				    uint64_t remote_addr, uint32_t rkey,
				    uint64_t user_data)
{
	lchan_prep_rdma(sqe, LCHAN_OP_WRITE, mr, (void *)(uintptr_t)addr, len,
			remote_addr, rkey, user_data);
}

/* WRITE plus an immediate that completes a receive at the peer. */
static inline void lchan_prep_write_imm(struct lchan_sqe *sqe,
					const struct lchan_mr *mr,
					const void *addr, uint32_t len,
					uint64_t remote_addr, uint32_t rkey,
					uint32_t imm, uint64_t user_data)
{
	lchan_prep_write(sqe, mr, addr, len, remote_addr, rkey, user_data);
	sqe->opcode = LCHAN_OP_WRITE_IMM;
	sqe->imm_data = imm;
}

/* RDMA READ of the peer's remote_addr into [addr, addr + len). */
static inline void lchan_prep_read(struct lchan_sqe *sqe,
				   const struct lchan_mr *mr, void *addr,
				   uint32_t len, uint64_t remote_addr,
				   uint32_t rkey, uint64_t user_data)
{
	lchan_prep_rdma(sqe, LCHAN_OP_READ, mr, addr, len, remote_addr, rkey,
			user_data);
}

/* 8-byte compare-and-swap; the old remote value lands at addr. */
static inline void lchan_prep_cmp_swap(struct lchan_sqe *sqe,
				       const struct lchan_mr *mr,
				       uint64_t *addr, uint64_t remote_addr,
				       uint32_t rkey, uint64_t compare,
				       uint64_t swap, uint64_t user_data)
{
	lchan_prep_rdma(sqe, LCHAN_OP_CMP_SWAP, mr, addr, 8, remote_addr,
			rkey, user_data);
	sqe->compare_add = compare;
	sqe->swap = swap;
}

/* 8-byte fetch-and-add; the old remote value lands at addr. */
static inline void lchan_prep_fetch_add(struct lchan_sqe *sqe,
					const struct lchan_mr *mr,
					uint64_t *addr, uint64_t remote_addr,
					uint32_t rkey, uint64_t add,
					uint64_t user_data)
{
	lchan_prep_rdma(sqe, LCHAN_OP_FETCH_ADD, mr, addr, 8, remote_addr,
			rkey, user_data);
	sqe->compare_add = add;
}

/*
 * Give @sqe, the SQE taken last, the @n buffers of @sges (n >= 1): the
 * first inline, the rest in continuation slots taken here.  Returns 0, or
 * -ENOSPC when the ring has no room for them (nothing taken then).
 */
static inline int lchan_sqe_set_sges(struct lchan_chan *chan,
				     struct lchan_sqe *sqe,
				     const struct lchan_sge *sges, unsigned n)
{
	unsigned extra = n ? n - 1 : 0;
	unsigned slots = (extra + LCHAN_SQE_SGES - 1) / LCHAN_SQE_SGES;
	unsigned i;

	if (!n || n > 255 || lchan_sq_space(chan) < slots)
		return -ENOSPC;
	sqe->mr = sges[0].mr;
	sqe->addr = sges[0].addr;
	sqe->len = sges[0].len;
	sqe->num_sge = (uint8_t)n;
	for (i = 0; i < slots; i++) {
		struct lchan_sge *more =
			(struct lchan_sge *)lchan_get_sqe(chan);
		unsigned j;

		for (j = 0; j < LCHAN_SQE_SGES && 1 + i * LCHAN_SQE_SGES + j < n;
		     j++)
			more[j] = sges[1 + i * LCHAN_SQE_SGES + j];
	}
	return 0;
}

/* The same for the RQE taken last. */
static inline int lchan_rqe_set_sges(struct lchan_chan *chan,
				     struct lchan_rqe *rqe,
				     const struct lchan_sge *sges, unsigned n)
{
	unsigned extra = n ? n - 1 : 0;
	unsigned slots = (extra + LCHAN_RQE_SGES - 1) / LCHAN_RQE_SGES;
	unsigned i;

	if (!n || n > 255 || lchan_rq_space(chan) < slots)
		return -ENOSPC;
	rqe->mr = sges[0].mr;
	rqe->addr = sges[0].addr;
	rqe->len = sges[0].len;
	rqe->num_sge = (uint8_t)n;
	for (i = 0; i < slots; i++) {
		struct lchan_sge *more =
			(struct lchan_sge *)lchan_get_rqe(chan);
		unsigned j;

		for (j = 0; j < LCHAN_RQE_SGES && 1 + i * LCHAN_RQE_SGES + j < n;
		     j++)
			more[j] = sges[1 + i * LCHAN_RQE_SGES + j];
	}
	return 0;
}

/* Make filled entries visible to the kernel (release pairs with acquire). */
static inline void lchan_publish(struct lchan_chan *chan)
{
	/*
	 * Receives first: a kernel poller that sees the new SQ tail then sees
	 * these RQEs too, so a SEND never overtakes the receive it credits.
	 */
	lchan_store_release(chan->rq.ktail, chan->rq.tail);
	lchan_store_release(chan->sq.ktail, chan->sq.tail);
}

/* In poller mode: does the kernel thread sleep (and need an ENTER)? */
static inline int lchan_poller_needs_wakeup(const struct lchan_chan *chan)
{
	/* Full fence: the tails above before the flag below (see uapi). */
	lchan_fence_seq_cst();
	return lchan_load_relaxed(chan->sq.kflags) & LCHAN_SQ_NEED_WAKEUP;
}

/* CQEs ready to read, without a system call. */
static inline unsigned lchan_cq_ready(const struct lchan_chan *chan)
{
	return lchan_load_acquire(chan->cq.ktail) - chan->cq.head;
}

/* The oldest unread CQE, or -EAGAIN. */
static inline int lchan_peek_cqe(struct lchan_chan *chan,
				 struct lchan_cqe **cqe)
{
	if (lchan_load_acquire(chan->cq.ktail) == chan->cq.head)
		return -EAGAIN;
	*cqe = &chan->cq.cqes[chan->cq.head & chan->cq.mask];
	return 0;
}

/* Done with the CQE from lchan_peek_cqe(): the slot may be reused. */
static inline void lchan_cqe_seen(struct lchan_chan *chan)
{
	chan->cq.head++;
	lchan_store_release(chan->cq.khead, chan->cq.head);
}

#ifdef __cplusplus
}
#endif

#endif /* LIBLCHAN_H */
