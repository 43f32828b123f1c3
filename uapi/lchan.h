/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause */
/*
 * lchan: the user/kernel contract.
 *
 * Included unchanged by the module, liblchan and the selftests.  Only
 * fixed-width types, explicit padding, every struct a multiple of 8 bytes.
 * Every ioctl argument starts with { __u32 size; __u32 flags; }: the kernel
 * accepts any size >= the first released size of the struct (stated at
 * each struct; smaller is EINVAL, more than a page E2BIG), zero-fills a
 * short tail and refuses a longer struct whose tail is not zero (E2BIG), so
 * the structs can grow without new ioctl numbers.  A command that answers
 * writes back min(size, the kernel's struct) bytes and leaves 'size' as
 * the caller set it.
 *
 * Owner: a context (an open of /dev/lchan) and every listener and channel
 * made from it serve the process that opened it, and no other (a child
 * after fork(), or a process the fd was passed to): every ioctl but
 * LCHAN_IOC_INFO, and mmap of the rings, fail with EPERM for it, after the
 * checks of the argument alone (EINVAL first); poll, which has no errno,
 * returns EPOLLERR alone.  close() works for anyone.
 */
#ifndef _UAPI_LCHAN_H
#define _UAPI_LCHAN_H

#include <linux/types.h>
#include <linux/ioctl.h>

#ifdef __cplusplus
extern "C" {
#endif

#define LCHAN_ABI_VERSION	1
#define LCHAN_DEVICE_PATH	"/dev/lchan"

/* Bits of lchan_info.features: what this module build can do. */
#define LCHAN_FEATURE_SEND		(1ULL << 0)	/* SEND and RECV */
#define LCHAN_FEATURE_SEND_IMM		(1ULL << 1)	/* SEND_WITH_IMM */
#define LCHAN_FEATURE_IPV6		(1ULL << 2)
#define LCHAN_FEATURE_ENTER_WAIT	(1ULL << 3)	/* ENTER can wait */
#define LCHAN_FEATURE_POLL		(1ULL << 4)	/* poll/epoll on fds */
#define LCHAN_FEATURE_WRITE		(1ULL << 5)	/* RDMA WRITE */
#define LCHAN_FEATURE_READ		(1ULL << 6)	/* RDMA READ */
#define LCHAN_FEATURE_WRITE_IMM		(1ULL << 7)	/* not on iWARP */
#define LCHAN_FEATURE_ATOMIC		(1ULL << 8)	/* CMP_SWAP, FETCH_ADD */
#define LCHAN_FEATURE_MULTI_SGE		(1ULL << 9)
#define LCHAN_FEATURE_UNSIGNALED	(1ULL << 10)
#define LCHAN_FEATURE_FENCE		(1ULL << 11)
#define LCHAN_FEATURE_POLLER		(1ULL << 12)	/* kernel SQ poller */
#define LCHAN_FEATURE_READ_FENCE	(1ULL << 13)	/* FENCE on a READ */
#define LCHAN_FEATURE_DIRECT		(1ULL << 14)	/* LCHAN_DIRECT_POLL */
#define LCHAN_FEATURE_STREAM		(1ULL << 15)	/* LCHAN_FD_STREAM */

/*
 * ioctl numbers.  The size of the argument lives in its 'size' field, not in
 * the number (as iommufd does), so the numbers never change as structs grow.
 */
#define LCHAN_IOCTL_TYPE	0xE4

enum {
	LCHAN_CMD_INFO = 0x80,		/* ctx fd */
	LCHAN_CMD_MR_REG,		/* ctx fd */
	LCHAN_CMD_MR_DEREG,		/* ctx fd */
	LCHAN_CMD_LISTEN,		/* ctx fd, returns a listener fd */
	LCHAN_CMD_CONNECT,		/* ctx fd, returns a channel fd */
	LCHAN_CMD_ACCEPT,		/* listener fd, returns a channel fd */
	LCHAN_CMD_CHAN_INFO,		/* channel fd */
	LCHAN_CMD_ENTER,		/* channel fd */
	LCHAN_CMD_ESTABLISH,		/* channel fd */
	LCHAN_CMD_CTX_SETUP,		/* ctx fd, before any channel */
};

#define LCHAN_IOC_INFO		_IO(LCHAN_IOCTL_TYPE, LCHAN_CMD_INFO)
#define LCHAN_IOC_MR_REG	_IO(LCHAN_IOCTL_TYPE, LCHAN_CMD_MR_REG)
#define LCHAN_IOC_MR_DEREG	_IO(LCHAN_IOCTL_TYPE, LCHAN_CMD_MR_DEREG)
#define LCHAN_IOC_LISTEN	_IO(LCHAN_IOCTL_TYPE, LCHAN_CMD_LISTEN)
#define LCHAN_IOC_CONNECT	_IO(LCHAN_IOCTL_TYPE, LCHAN_CMD_CONNECT)
#define LCHAN_IOC_ACCEPT	_IO(LCHAN_IOCTL_TYPE, LCHAN_CMD_ACCEPT)
#define LCHAN_IOC_CHAN_INFO	_IO(LCHAN_IOCTL_TYPE, LCHAN_CMD_CHAN_INFO)
#define LCHAN_IOC_ENTER		_IO(LCHAN_IOCTL_TYPE, LCHAN_CMD_ENTER)
#define LCHAN_IOC_ESTABLISH	_IO(LCHAN_IOCTL_TYPE, LCHAN_CMD_ESTABLISH)
#define LCHAN_IOC_CTX_SETUP	_IO(LCHAN_IOCTL_TYPE, LCHAN_CMD_CTX_SETUP)

/*
 * LCHAN_IOC_INFO: what the module offers; any process may ask.  First
 * released size: 24 (through features).
 */
struct lchan_info {
	__u32 size;
	__u32 flags;		/* none defined: must be 0 */
	__u32 abi_version;	/* out: LCHAN_ABI_VERSION */
	__u32 max_entries;	/* out: largest ring the module accepts */
	__aligned_u64 features;	/* out: LCHAN_FEATURE_* */
};

/*
 * LCHAN_IOC_CTX_SETUP: choose how the context's channels submit, once,
 * before the first channel.  Without it (or without LCHAN_CTX_POLLER) the
 * application posts with ENTER (doorbell mode).  With LCHAN_CTX_POLLER the
 * context's channels are served by the machine's pool of poller threads,
 * which the administrator sizes and places (module parameters pollers and
 * poller_cpus); this call makes and pins no thread.  A pool thread takes
 * published SQEs/RQEs, so steady traffic needs no system call.  After
 * idle_ms without work (capped at the default: the threads are shared),
 * or at once when another task waits for its CPU, it sets
 * LCHAN_SQ_NEED_WAKEUP in each ring's flags word and sleeps; whoever then
 * publishes work must issue ENTER to wake it.  The protocol:
 *   app:    store-release the tail; full fence; load flags;
 *           if NEED_WAKEUP: ioctl(ENTER)
 *   poller: set NEED_WAKEUP; full fence; load every tail;
 *           sleep only if none moved
 * so either the app sees the flag or the poller sees the tail.
 * attach_fd names another poller context of the same owner whose settings
 * (idle_ms) this one takes (another owner's is EPERM).  cpu is -1 or an
 * online CPU the caller may run on (else EINVAL) and has no other effect:
 * where the pool runs is the administrator's choice.  First released
 * size: 24 (through resv).
 */
#define LCHAN_CTX_POLLER	(1U << 0)

struct lchan_ctx_setup_args {
	__u32 size;
	__u32 flags;		/* LCHAN_CTX_* */
	__u32 idle_ms;		/* 0 or above 1000: 1000 */
	__s32 cpu;		/* -1, or a CPU of the caller: checked only */
	__s32 attach_fd;	/* -1, or a poller context to copy */
	__u32 resv;		/* must be 0 */
};

/* Access rights of a memory region (lchan_mr_reg_args.access). */
#define LCHAN_ACCESS_LOCAL_WRITE	(1U << 0)	/* RECV lands here */
#define LCHAN_ACCESS_REMOTE_WRITE	(1U << 1)
#define LCHAN_ACCESS_REMOTE_READ	(1U << 2)
#define LCHAN_ACCESS_REMOTE_ATOMIC	(1U << 3)
#define LCHAN_ACCESS_ALL		(LCHAN_ACCESS_LOCAL_WRITE | \
					 LCHAN_ACCESS_REMOTE_WRITE | \
					 LCHAN_ACCESS_REMOTE_READ | \
					 LCHAN_ACCESS_REMOTE_ATOMIC)

/*
 * LCHAN_IOC_MR_REG: pin [addr, addr + length) of the caller and register it
 * on the RDMA device that carries channel 'chan_fd'.  The handle is valid in
 * SQEs/RQEs of every channel of this context on that device; 'rkey' is what
 * a peer needs for remote access.  The local key stays in the kernel.  A
 * range that touches a mapping of a channel's rings is EINVAL: no peer may
 * write into the rings.  First released size: 40 (through rkey).
 */
struct lchan_mr_reg_args {
	__u32 size;
	__u32 flags;		/* none defined: must be 0 */
	__aligned_u64 addr;
	__aligned_u64 length;
	__u32 access;		/* LCHAN_ACCESS_* */
	__s32 chan_fd;
	__u32 handle;		/* out, never 0 */
	__u32 rkey;		/* out */
};

/*
 * LCHAN_IOC_MR_DEREG: drop a handle; work in flight keeps the MR alive.
 * First released size: 16 (through resv).
 */
struct lchan_mr_dereg_args {
	__u32 size;
	__u32 flags;		/* none defined: must be 0 */
	__u32 handle;
	__u32 resv;		/* must be 0 */
};

/* An IPv4 or IPv6 endpoint. */
struct lchan_addr {
	__u16 family;		/* AF_INET or AF_INET6; 0 = none */
	__u16 port;		/* host byte order */
	__u32 scope_id;		/* IPv6 interface index, else 0 */
	__u8 addr[16];		/* network order; IPv4 in the first 4 */
};

/*
 * Flags for calls that create a file descriptor.  LCHAN_FD_NONBLOCK on
 * CONNECT (without LCHAN_DEFER_ESTABLISH) is a non-blocking connect: the
 * call returns the channel fd once the address and route are resolved and
 * the connection request is out, in state LCHAN_STATE_CONNECTING.  The fd
 * polls EPOLLOUT once the channel is connected (on iWARP with
 * LCHAN_OPEN_EXCHANGE, once the exchange lets the SQ go), EPOLLHUP when
 * the connect failed; ESTABLISH then says how it ended: EISCONN when
 * connected, EALREADY while under way, else why it failed.  ESTABLISH on
 * a deferred connecting channel whose fd is non-blocking starts the
 * connection the same way and fails with EINPROGRESS.
 */
#define LCHAN_FD_CLOEXEC	(1U << 0)
#define LCHAN_FD_NONBLOCK	(1U << 1)

/*
 * CONNECT/ACCEPT flag: return the channel as soon as its queue pair exists,
 * before the connection is made.  The application can then register memory
 * and post receives, and finishes with LCHAN_IOC_ESTABLISH.  iWARP has no
 * receiver-not-ready retry, so a peer's first SEND must find a posted
 * receive: this is how to guarantee it.
 */
#define LCHAN_DEFER_ESTABLISH	(1U << 8)

/*
 * CONNECT/ACCEPT flag: direct polling.  The channel's completion queue is
 * polled only in calls into the kernel, never by an interrupt, softirq or
 * worker: each ENTER polls it, and with LCHAN_ENTER_GETEVENTS keeps
 * polling (spinning, not sleeping) until min_complete CQEs are ready, the
 * timeout passes, a signal comes or nothing more can complete.  A
 * completion so reaches the ring in the application's own call.  A
 * busy-polling application therefore calls ENTER (lchan_submit()) where
 * it would only read the ring: the ring shows nothing the kernel has not
 * polled.  While a process waits in poll(2) or epoll on the channel, the
 * kernel polls the CQ once a scheduler tick for it.  The kernel's own
 * work polls for itself (a keepalive look, the drain at close).  IB and
 * RoCE only: EOPNOTSUPP on iWARP (LCHAN_FEATURE_DIRECT is not in its
 * channels' features); EINVAL in a poller context.
 */
#define LCHAN_DIRECT_POLL	(1U << 9)

/*
 * CONNECT flag: the peer runs lchan, and either side may send first.  On
 * iWARP (MPA), the accepting side must not send before the connecting
 * side's first message has arrived (siw fails the connection when it
 * does); with this flag the two kernels run an opening exchange of their
 * own, asked for in the connection's private data, that lifts the rule.
 * Without the flag lchan puts nothing on the wire that a plain rdma_cm
 * peer would not expect, and the application protocol must let the
 * connecting side send first, as every iWARP program's must.  A peer that
 * does not answer the request (it does not run lchan) fails the connect
 * with EPROTONOSUPPORT; it has then seen 8 bytes of private data.  An
 * accepting lchan kernel answers by itself: ACCEPT takes no such flag
 * (EINVAL).  Nothing to do on InfiniBand and RoCE: ignored there.
 * lchan(7) gives the wire format.
 */
#define LCHAN_OPEN_EXCHANGE	(1U << 10)

/*
 * CONNECT flags: which way the channel is set up.  With the module's
 * links on, a connect over an InfiniBand or RoCE port in the initial
 * network namespace is set up over the link to the peer's machine when
 * one can serve (one message each way, no CM exchange), else through
 * rdma_cm; what the application sees is the same either way.
 * LCHAN_CONNECT_CM_ONLY always takes rdma_cm.  LCHAN_CONNECT_LINK_ONLY
 * takes the link or fails: EOPNOTSUPP when no link can serve (links off,
 * an iWARP port, another namespace, a peer without the link service, a
 * peer that cannot set the channel up over its link), ETIMEDOUT when the
 * link is not up before the connect's timeout.  Both together: EINVAL.
 * ACCEPT takes neither (EINVAL).
 */
#define LCHAN_CONNECT_CM_ONLY	(1U << 11)
#define LCHAN_CONNECT_LINK_ONLY	(1U << 12)

/*
 * CONNECT/ACCEPT flag: a stream channel.  The fd returned is a socket
 * (SOCK_STREAM, of the addresses' family), a byte stream as TCP's that
 * the kernel carries over the channel with buffers of its own: the
 * socket calls work on it (read, write, send, recv and their vector and
 * message forms with MSG_PEEK, MSG_DONTWAIT, MSG_WAITALL and
 * MSG_NOSIGNAL, poll, select, epoll, shutdown, getsockname,
 * getpeername, the SOL_SOCKET options, SIOCINQ and SIOCOUTQ, sendfile and
 * splice), in any process that holds it; it has no rings.  Both ends must
 * ask for it: the connecting side's CONNECT and the accepting side's
 * ACCEPT; an ACCEPT refuses a request of the other kind on the way (its
 * CONNECT fails with ECONNREFUSED), and a CONNECT whose peer accepts
 * without being a stream (not lchan) fails with EPROTONOSUPPORT.  It is set up through rdma_cm (never over a link) and, on
 * iWARP, with the opening exchange.  The connect blocks until connected;
 * LCHAN_FD_NONBLOCK makes the socket non-blocking.  Not with
 * LCHAN_DEFER_ESTABLISH, LCHAN_DIRECT_POLL, LCHAN_CONNECT_LINK_ONLY nor
 * ring sizes (the kernel sizes the queues), nor in a poller context
 * (EINVAL).  lchan(7), "Stream channels", gives the protocol.
 */
#define LCHAN_FD_STREAM		(1U << 13)

/*
 * CONNECT flag: never over iWARP.  An iWARP connection request is bytes
 * in a TCP connection to the destination port, which a TCP server there
 * that does not run lchan would read as its own protocol's.  A caller that
 * tries lchan first and falls back to TCP asks for this: when the route
 * to the destination is over an iWARP device the connect fails with
 * EPROTONOSUPPORT before anything is sent.
 */
#define LCHAN_CONNECT_NO_IWARP	(1U << 14)

/*
 * LCHAN_IOC_LISTEN: returns a listener fd (poll for EPOLLIN).  First
 * released size: 40 (through sock_fd).
 *
 * With LCHAN_FD_STREAM it returns a stream listener instead: a socket
 * that stands for the caller's listening TCP socket 'sock_fd' (IPv4 or
 * IPv6) and hears lchan peers on the same address and port.  accept(2)
 * on it returns a TCP peer's connection as the TCP socket returns it,
 * and a peer's stream channel (CONNECT with LCHAN_FD_STREAM) as a stream
 * socket; poll, select and epoll see both; the socket calls of a
 * listening socket (getsockname, the options, listen, shutdown) reach
 * the TCP socket.  It holds that socket: closing 'sock_fd' afterwards
 * leaves it listening.  Any process that holds the stream listener can
 * accept on it.  'addr' must be zero; the address comes back in it.
 * The TCP socket not listening, or not TCP: EINVAL; not a socket:
 * ENOTSOCK.  The address not served by an RDMA device that can listen
 * beside TCP's socket (an iWARP device listens in TCP's own port space):
 * the error of that listen (EADDRNOTAVAIL, EADDRINUSE, ENODEV).
 * Without LCHAN_FD_STREAM 'sock_fd' must be 0.
 */
struct lchan_listen_args {
	__u32 size;
	__u32 flags;		/* LCHAN_FD_CLOEXEC, _NONBLOCK, _STREAM */
	struct lchan_addr addr;	/* port 0 picks one: read it back */
	__u32 backlog;		/* 0 = a default */
	__s32 sock_fd;		/* LCHAN_FD_STREAM: see above; else 0 */
};

/*
 * Ring sizes asked for by CONNECT and ACCEPT.  0 picks a default; a count
 * is rounded up to a power of two.  sq_entries and rq_entries may not
 * exceed lchan_info.max_entries (nor the device's queue depth), cq_entries
 * twice that.  cq_entries is raised to at least sq_entries + rq_entries,
 * which is what lets the kernel promise that no completion is ever dropped.
 */
struct lchan_ring_sizes {
	__u32 sq_entries;
	__u32 rq_entries;
	__u32 cq_entries;
	__u32 resv;		/* must be 0 */
};

/*
 * RC transport timing of a channel, given to CONNECT and ACCEPT.  A packet
 * the peer has not acknowledged within the local ACK timeout,
 * 4.096 us * 2^ack_timeout, is sent again, at most retry_count times; then
 * the request completes with LCHAN_CQE_RETRY_EXC_ERR and the channel goes
 * to LCHAN_STATE_ERROR.  A peer that vanished (powered off, link cut) while
 * traffic was in flight is so detected about
 *   (retry_count + 1) * 4.096 us * 2^ack_timeout
 * after the first unacknowledged packet (defaults: 7 * 1.07 s = 7.5 s); a
 * little later in practice, as each wait ends on a timer tick after the
 * resend.  An idle
 * channel sends nothing and detects nothing.
 *
 *   ack_timeout   0 = the default (18: 1.07 s), else 1..31
 *   retry_count   0 = the default (6), else 1..7; rxe reads 7 as "retry
 *                 without end" (the IB reading is 7 retries)
 *
 * Out of range is EINVAL.  IB and RoCE only: an iWARP channel runs over
 * TCP, whose own retransmission timeout decides (minutes); a nonzero value
 * there is EOPNOTSUPP.  The receiver-not-ready retry stays unbounded: it
 * waits for a live peer to post a receive.
 *
 * keepalive_ms finds a peer that vanished while the channel was idle, on
 * every device.  0 = off (the default), else LCHAN_KEEPALIVE_MIN_MS..
 * LCHAN_KEEPALIVE_MAX_MS (out of range is EINVAL).  Every keepalive_ms
 * the kernel looks whether the channel completed anything since its last
 * look; if not, it sends a probe that only the peer can answer (a
 * zero-length RDMA WRITE on IB/RoCE, which the peer acknowledges; a
 * zero-length RDMA READ on iWARP, whose response the peer sends).  A
 * probe unanswered at the next look, or failed, ends the channel: state
 * LCHAN_STATE_ERROR, one CQE { opcode LCHAN_CQE_KEEPALIVE, status
 * LCHAN_CQE_RETRY_EXC_ERR, user_data 0 } (when the CQ ring has room;
 * the state tells in any case), the connection is disconnected and what
 * was posted is flushed.  A peer that vanishes is so found at most
 * 2 * keepalive_ms later on a channel idle for a period before, and at
 * most 3 * keepalive_ms after the last completion in any case (each look
 * may come up to 1/8 of a period late, the kernel timer's slack).  While
 * completions come nothing is sent.  A request that takes longer than
 * keepalive_ms without any completion (a SEND waiting for the peer to
 * post a receive) counts as a dead peer too.
 */
struct lchan_rc_params {
	__u8 ack_timeout;
	__u8 retry_count;
	__u16 resv0;		/* must be 0 */
	__u32 keepalive_ms;	/* 0 = off */
};

#define LCHAN_KEEPALIVE_MIN_MS	100
#define LCHAN_KEEPALIVE_MAX_MS	600000

/*
 * LCHAN_IOC_CONNECT: returns a connected channel fd.  First released
 * size: 80 (through resv; a shorter caller gets the default rc).
 */
struct lchan_connect_args {
	__u32 size;
	/*
	 * LCHAN_FD_*, LCHAN_DEFER_ESTABLISH, LCHAN_DIRECT_POLL,
	 * LCHAN_OPEN_EXCHANGE, LCHAN_CONNECT_CM_ONLY, LCHAN_CONNECT_LINK_ONLY
	 */
	__u32 flags;
	struct lchan_addr dst;
	struct lchan_addr src;	/* family 0: chosen by routing */
	struct lchan_ring_sizes rings;
	__u32 timeout_ms;	/* whole connect; 0 = a default */
	__u32 resv;		/* must be 0 */
	struct lchan_rc_params rc;
};

/*
 * LCHAN_IOC_ACCEPT (on a listener fd): returns a connected channel fd.  It
 * waits for a request unless the listener was made with LCHAN_FD_NONBLOCK
 * (then EAGAIN); LCHAN_FD_* in 'flags' apply to the new channel fd.
 * First released size: 24 (through rings; a shorter caller gets no peer
 * and the default rc).
 */
struct lchan_accept_args {
	__u32 size;
	/* LCHAN_FD_*, LCHAN_DEFER_ESTABLISH, LCHAN_DIRECT_POLL */
	__u32 flags;
	struct lchan_ring_sizes rings;
	struct lchan_addr peer;	/* out */
	struct lchan_rc_params rc;
};

/*
 * LCHAN_IOC_ESTABLISH: finish a deferred connect or accept.  First
 * released size: 16 (through resv).
 */
struct lchan_establish_args {
	__u32 size;
	__u32 flags;		/* none defined: must be 0 */
	__u32 timeout_ms;	/* 0 = a default */
	__u32 resv;		/* must be 0 */
};

/*
 * Where each piece of the ring mapping sits.  Every field is an offset in
 * bytes from the start of the mapping (mmap offset LCHAN_OFF_RINGS of the
 * channel fd, length lchan_chan_info.mmap_size), never a value: head and
 * tail are offsets of __u32 words, each on its own cache line; ring_mask
 * and ring_entries are offsets of the __u32 words that hold the ring's
 * mask (entries - 1) and its number of entries, written once at setup;
 * flags of the __u32 flags word, one for the three rings; overflow (CQ
 * only) of a __u32 that stays 0; entries of the first ring entry.
 *
 * The mapping must be MAP_SHARED (MAP_PRIVATE is EINVAL) and is never
 * executable: PROT_EXEC is EACCES, and so is a later mprotect() that asks
 * for it.  fork() does not copy it.
 */
struct lchan_ring_offsets {
	__u32 head;
	__u32 tail;
	__u32 ring_mask;
	__u32 ring_entries;
	__u32 flags;
	__u32 entries;
	__u32 overflow;		/* CQ only: completions lost; stays 0 */
	__u32 posted;		/* RQ only, 0 elsewhere: see below */
};

/*
 * rq_off.posted is the offset of a __u32 count, kept like head, of the
 * receives the kernel has handed to the queue pair (or answered with an
 * error completion).  head moves when the kernel has read an RQE; posted
 * follows once the receive can match a SEND.  In poller mode it is how the
 * application learns that a receive is really posted, without a system
 * call.
 */

#define LCHAN_OFF_RINGS		0ULL

/*
 * LCHAN_IOC_CHAN_INFO: everything needed to drive the rings; the owner's
 * only (EPERM for another process).  remote_qpn is 0 until the connection
 * tells it, and iWARP (siw) never does.  First released size: 200
 * (through max_read_sge).
 */
struct lchan_chan_info {
	__u32 size;
	__u32 flags;		/* none defined: must be 0 */
	__aligned_u64 mmap_size;
	struct lchan_ring_offsets sq_off;
	struct lchan_ring_offsets rq_off;
	struct lchan_ring_offsets cq_off;
	__aligned_u64 features;	/* LCHAN_FEATURE_* usable on this channel */
	__u32 id;		/* /sys/kernel/lchan/channels/<id> */
	__u32 max_msg_size;	/* largest SEND/RECV length */
	__u32 local_qpn;
	__u32 remote_qpn;
	struct lchan_addr local;
	struct lchan_addr remote;
	__u32 max_send_sge;	/* num_sge limit of an SQE */
	__u32 max_recv_sge;	/* num_sge limit of an RQE */
	__u32 chan_flags;	/* LCHAN_CHAN_* */
	__u32 max_read_sge;	/* num_sge limit of a READ SQE */
};

#define LCHAN_CHAN_POLLER	(1U << 0)	/* a kernel thread submits */
#define LCHAN_CHAN_DIRECT	(1U << 1)	/* LCHAN_DIRECT_POLL */

/*
 * LCHAN_IOC_ENTER: post every SQE and RQE published since the last call,
 * then optionally wait until at least min_complete CQEs are ready.  The
 * wait ends with ETIME when the timeout passes, EINTR on a signal, and
 * ENOTCONN when the channel is down and nothing more can complete.  A tail
 * more than one ring ahead of the kernel's head is refused with EINVAL.
 * First released size: 40 (through state).
 */
#define LCHAN_ENTER_GETEVENTS	(1U << 0)	/* wait for min_complete */
#define LCHAN_ENTER_TIMEOUT	(1U << 1)	/* timeout_ns bounds the wait */

struct lchan_enter_args {
	__u32 size;
	__u32 flags;		/* LCHAN_ENTER_* */
	__u32 min_complete;
	__u32 resv;		/* must be 0 */
	__aligned_u64 timeout_ns;
	__u32 sq_consumed;	/* out: SQEs taken from the ring */
	__u32 rq_consumed;	/* out: RQEs taken from the ring */
	__u32 cq_ready;		/* out: CQEs waiting in the ring */
	__u32 state;		/* out: LCHAN_STATE_* */
};

/*
 * Channel states, also in sysfs as text.  They only move forward.  Once a
 * channel is disconnected or in error, every entry submitted is answered
 * with LCHAN_CQE_WR_FLUSH_ERR.
 */
enum lchan_state {
	LCHAN_STATE_CONNECTING = 1,	/* includes a deferred establish */
	LCHAN_STATE_CONNECTED,
	LCHAN_STATE_DISCONNECTED,	/* peer or local disconnect */
	LCHAN_STATE_ERROR,		/* a request failed, device gone */
};

/* Ring header flags (sq_off.flags word). */
#define LCHAN_SQ_NEED_WAKEUP	(1U << 0)	/* the poller sleeps: ENTER */

/* SQE opcodes. */
enum lchan_op {
	LCHAN_OP_NOP = 0,		/* invalid: always rejected */
	LCHAN_OP_SEND = 1,
	LCHAN_OP_SEND_IMM = 2,
	LCHAN_OP_WRITE = 3,
	LCHAN_OP_WRITE_IMM = 4,		/* consumes a receive at the peer */
	LCHAN_OP_READ = 5,
	LCHAN_OP_CMP_SWAP = 6,		/* 8 bytes, 8-aligned both ends */
	LCHAN_OP_FETCH_ADD = 7,		/* 8 bytes, 8-aligned both ends */
	LCHAN_OP_MAX,
};

/* SQE flags. */
#define LCHAN_SQE_SOLICITED	(1U << 0)	/* wake a peer that waits */
#define LCHAN_SQE_UNSIGNALED	(1U << 1)	/* no CQE unless it fails */
#define LCHAN_SQE_FENCE		(1U << 2)	/* after earlier READs/atomics */
#define LCHAN_SQE_FLAGS_ALL	(LCHAN_SQE_SOLICITED | LCHAN_SQE_UNSIGNALED | \
				 LCHAN_SQE_FENCE)

/* One more local buffer of a multi-SGE entry. */
struct lchan_sge {
	__u32 mr;
	__u32 len;
	__aligned_u64 addr;
};

/* SGEs in one continuation slot of each ring. */
#define LCHAN_SQE_SGES		4
#define LCHAN_RQE_SGES		2

/*
 * A submission entry: one work request for the send queue.  The first
 * buffer is inline (mr, addr, len).  With num_sge = n > 1 the n - 1 others
 * follow in the next ceil((n - 1) / LCHAN_SQE_SGES) slots of the ring, each
 * slot an array of struct lchan_sge (unused ones zero); publish them with
 * the entry.
 */
struct lchan_sqe {
	__u8 opcode;		/* LCHAN_OP_* */
	__u8 flags;		/* LCHAN_SQE_* */
	__u8 num_sge;		/* 0 or 1: the inline buffer only */
	__u8 resv0;		/* must be 0 */
	__u32 mr;		/* local MR handle */
	__aligned_u64 addr;	/* local address inside the MR */
	__u32 len;
	__u32 imm_data;		/* *_IMM: delivered as-is */
	__aligned_u64 user_data; /* echoed in the CQE */
	__aligned_u64 remote_addr; /* WRITE, READ, atomics; else 0 */
	__u32 rkey;		/* WRITE, READ, atomics; else 0 */
	__u32 resv1;		/* must be 0 */
	__aligned_u64 compare_add; /* CMP_SWAP: compare; FETCH_ADD: add */
	__aligned_u64 swap;	/* CMP_SWAP; else 0 */
};

/*
 * A receive entry: buffers for the next incoming SEND (or WRITE_IMM, which
 * takes a receive for its immediate).  More buffers as for SQEs, with
 * LCHAN_RQE_SGES per continuation slot.
 */
struct lchan_rqe {
	__u32 mr;		/* local MR handle, LOCAL_WRITE access */
	__u32 len;
	__aligned_u64 addr;
	__aligned_u64 user_data;
	__u16 flags;		/* none defined: must be 0 */
	__u8 num_sge;		/* 0 or 1: the inline buffer only */
	__u8 resv0;		/* must be 0 */
	__u32 resv;		/* must be 0 */
};

/* CQE opcodes: what completed. */
enum lchan_cqe_op {
	LCHAN_CQE_SEND = 1,
	LCHAN_CQE_SEND_IMM,
	LCHAN_CQE_RECV,		/* a SEND arrived */
	LCHAN_CQE_WRITE,
	LCHAN_CQE_WRITE_IMM,
	LCHAN_CQE_READ,
	LCHAN_CQE_CMP_SWAP,
	LCHAN_CQE_FETCH_ADD,
	LCHAN_CQE_RECV_WRITE_IMM, /* a WRITE_IMM arrived: imm_data, byte_len */
	LCHAN_CQE_KEEPALIVE,	/* the peer stopped answering (keepalive_ms) */
};

/* CQE flags. */
#define LCHAN_CQE_F_IMM		(1U << 0)	/* imm_data is valid */

/*
 * CQE status.  0 is success.  1..21 are the verbs work-completion statuses
 * with the numbers every RDMA user knows from ibv_wc_status.  From 64 on,
 * lchan's own rejections of a ring entry (nothing was posted for it).
 */
enum lchan_cqe_status {
	LCHAN_CQE_OK = 0,
	LCHAN_CQE_LOC_LEN_ERR = 1,
	LCHAN_CQE_LOC_QP_OP_ERR = 2,
	LCHAN_CQE_LOC_PROT_ERR = 4,
	LCHAN_CQE_WR_FLUSH_ERR = 5,
	LCHAN_CQE_REM_INV_REQ_ERR = 9,
	LCHAN_CQE_REM_ACCESS_ERR = 10,
	LCHAN_CQE_REM_OP_ERR = 11,
	LCHAN_CQE_RETRY_EXC_ERR = 12,
	LCHAN_CQE_RNR_RETRY_EXC_ERR = 13,
	LCHAN_CQE_GENERAL_ERR = 21,

	LCHAN_CQE_BAD_OPCODE = 64,	/* opcode unknown */
	LCHAN_CQE_BAD_FLAGS,		/* unknown flag bit */
	LCHAN_CQE_BAD_RESV,		/* a reserved field is not 0 */
	LCHAN_CQE_BAD_MR,		/* handle not owned, or other device */
	LCHAN_CQE_BAD_RANGE,		/* addr/len outside the MR */
	LCHAN_CQE_BAD_LEN,		/* above max_msg_size */
	LCHAN_CQE_BAD_ACCESS,		/* MR lacks the access needed */
	LCHAN_CQE_UNSUPPORTED,		/* valid, but not on this device */
	LCHAN_CQE_BAD_SGE,		/* num_sge or a continuation slot */
	LCHAN_CQE_BAD_ALIGN,		/* atomic: not 8 bytes, 8-aligned */
};

/* A completion entry. */
struct lchan_cqe {
	__aligned_u64 user_data;
	__u32 byte_len;		/* RECV: bytes received */
	__u32 imm_data;		/* valid with LCHAN_CQE_F_IMM */
	__u8 opcode;		/* LCHAN_CQE_* */
	__u8 flags;		/* LCHAN_CQE_F_* */
	__u16 resv0;
	__u32 status;		/* enum lchan_cqe_status */
	__u32 vendor_err;
	__u32 resv1;
};

#ifdef __cplusplus
}
#endif

#endif /* _UAPI_LCHAN_H */
