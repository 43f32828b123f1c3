/* SPDX-License-Identifier: LGPL-2.1-or-later OR MIT */
/*
 * liblchan message layer: whole messages over a channel, like a
 * SOCK_SEQPACKET socket.  The library owns the receive buffers, the credits
 * and the completions; the caller sends and receives messages.
 *
 * One message channel is used by one thread at a time (no locks inside).
 * All calls return -errno on failure.  A call that makes a message
 * channel or a listener sets *m (*l) to NULL when it fails, and closing
 * NULL does nothing.  A message channel or listener keeps a descriptor of
 * its own for the context it was made on: the caller may close the
 * context at any time.
 *
 * Semantics:
 *   lchan_msg_send() returns len once the buffer may be reused.  A message
 *   of up to buf_size bytes is copied and the call returns at once; a
 *   bigger one is read by the peer with RDMA READ, so the call returns
 *   when the peer's lchan_msg_recv() has taken it.  LCHAN_MSG_DONTWAIT
 *   only avoids waiting for a credit (-EAGAIN: the peer has not taken
 *   enough messages yet).  Two peers that both send large messages and
 *   neither receives wait for each other, as two TCP peers do once both
 *   socket buffers are full.  -EPIPE after the peer closed, -EMSGSIZE
 *   above max_msg.
 *   lchan_msg_sendv() sends one message gathered from an iovec, waiting
 *   at most timeout_ms in all (-1: without end; 0: as DONTWAIT) for a
 *   credit and, for a large message, for the peer to take it; a timeout
 *   once a large message was offered fails the channel (-ETIMEDOUT from
 *   then on), as the peer may or may not have it.  A large message from
 *   more than one buffer is gathered into one first (a copy).
 *   lchan_msg_recv() returns the length of the next message, 0 once the
 *   peer closed and every message it sent before was received, -EAGAIN
 *   (LCHAN_MSG_DONTWAIT or timeout_ms 0), -ETIMEDOUT (timeout_ms > 0,
 *   the wait as a whole; -1 waits for ever), -EMSGSIZE when the message
 *   does not fit in cap (it stays queued: lchan_msg_peek_len() tells its
 *   length), -ECONNRESET when the connection failed.  lchan_msg_recvv()
 *   is the same, scattering the message over an iovec.  Once a large
 *   message's bytes are moving, the call waits for them: their time is
 *   set by their size.
 *   lchan_msg_peek_len() waits as lchan_msg_recv() does and returns the
 *   next message's length without taking it.
 *   Large messages from or into memory the caller did not register are
 *   registered for the transfer: -ENOMEM when that fails (RLIMIT_MEMLOCK).
 *   The _mr variants take the caller's region instead: REMOTE_READ access
 *   for sending, LOCAL_WRITE for receiving.
 *   lchan_msg_close() sends end of stream after everything sent before,
 *   waits (at most 10 s) until those SENDs completed, and frees all.
 *
 * A server listens with lchan_msg_listen() and takes connections with
 * lchan_msg_accept(), waiting up to timeout_ms (0: -EAGAIN at once, -1:
 * without end); the listener's fd is readable (POLLIN) when a connection
 * waits.  Each accepted channel has the options given to the listen.
 *
 * Readiness: lchan_msg_fd() is the channel fd.  It is readable (POLLIN)
 * whenever a completion waits in the ring, which is the only thing that
 * can change this layer's state.  Completions are taken by the library in
 * lchan_msg_progress(), lchan_msg_send() and lchan_msg_recv(); after taking
 * them the fd is quiet again even if whole messages are queued.  So an
 * event loop calls lchan_msg_progress() (or lchan_msg_poll_events()) before
 * it sleeps and sleeps only when that returns 0; always wait for POLLIN on
 * the fd, also when waiting to send.  Events at this layer:
 *   POLLIN   a whole message can be received, or end of stream / an error
 *            is there to be reported by lchan_msg_recv()
 *   POLLOUT  lchan_msg_send() of a small message would not block
 *   POLLHUP  the peer closed (after its last message was received)
 *   POLLERR  the connection failed
 */
#ifndef LIBLCHAN_MSG_H
#define LIBLCHAN_MSG_H

#include <stddef.h>
#include <sys/types.h>
#include <sys/uio.h>

#ifdef __cplusplus
extern "C" {
#endif

struct lchan_chan;
struct lchan_ctx;
struct lchan_listener;
struct lchan_mr;
struct lchan_msg;
struct lchan_msg_listener;

/* Options; zero means "default" everywhere. */
struct lchan_msg_opts {
	size_t max_msg;		/* largest message; default 4 MiB */
	unsigned nbufs;		/* receive buffers = credits; default 32 */
	unsigned nsend;		/* send bounce buffers; default 32 */
	unsigned buf_size;	/* payload per buffer; bigger messages go by
				 * RDMA READ; default 8192 */
	unsigned timeout_ms;	/* connect/establish; 0 = a default */
	unsigned flags;		/* LCHAN_MSG_OPT_* */
};

/*
 * Option flag: direct polling (LCHAN_DIRECT_POLL).  The channel's
 * completions reach its ring only in the calls of this layer, and no
 * interrupt or hand-off stands between a completion and the waiting call.
 * A wait spins: with LCHAN_MSG_BUSY_POLL in ENTERs that each post what is
 * filled and look at the device once, without it in one ENTER that posts
 * and polls in the kernel until what it needs is there.  A process that
 * waits in poll(2) or epoll on lchan_msg_fd() sees completions once a
 * scheduler tick, so an event loop calls lchan_msg_progress().
 * InfiniBand and RoCE only: connect and accept fail with -EOPNOTSUPP on
 * iWARP, and with -EINVAL in a context with a kernel poller.
 */
#define LCHAN_MSG_OPT_DIRECT	(1U << 0)

/*
 * Send and receive flags.  BUSY_POLL: the call waits by spinning on the
 * completion ring, not by sleeping in poll(2).  It costs a CPU while it
 * waits; with a kernel poller (lchan_ctx_setup_poller) steady traffic of
 * small messages then makes no system call at all.  The bytes of a large
 * message (above buf_size) it waits for by spinning 50 us, then sleeping:
 * their time is set by their size, not by a wake-up.
 */
#define LCHAN_MSG_DONTWAIT	(1U << 0)	/* -EAGAIN instead of blocking */
#define LCHAN_MSG_BUSY_POLL	(1U << 1)	/* wait without sleeping */
/*
 * Send flag: another call on this channel follows at once, so the message
 * may be posted by it instead of by a system call of its own: a receive
 * that waits posts it in the ENTER that waits (one kernel crossing per
 * round trip on a direct channel).  Any later call on the channel (send,
 * receive, peek, progress, close) posts it at the latest; until then the
 * peer does not see it.
 */
#define LCHAN_MSG_MORE		(1U << 2)

int lchan_msg_connect(struct lchan_ctx *ctx, const char *host,
		      const char *port, const struct lchan_msg_opts *opts,
		      struct lchan_msg **m);
int lchan_msg_listen(struct lchan_ctx *ctx, const char *host,
		     const char *port, int backlog,
		     const struct lchan_msg_opts *opts,
		     struct lchan_msg_listener **l);
int lchan_msg_accept(struct lchan_msg_listener *l, int timeout_ms,
		     struct lchan_msg **m);
int lchan_msg_listener_fd(const struct lchan_msg_listener *l);
unsigned lchan_msg_listener_port(const struct lchan_msg_listener *l);
int lchan_msg_listener_close(struct lchan_msg_listener *l);
int lchan_msg_close(struct lchan_msg *m);

ssize_t lchan_msg_send(struct lchan_msg *m, const void *buf, size_t len,
		       unsigned flags);
ssize_t lchan_msg_recv(struct lchan_msg *m, void *buf, size_t cap,
		       unsigned flags, int timeout_ms);
ssize_t lchan_msg_sendv(struct lchan_msg *m, const struct iovec *iov,
			int iovcnt, unsigned flags, int timeout_ms);
ssize_t lchan_msg_recvv(struct lchan_msg *m, const struct iovec *iov,
			int iovcnt, unsigned flags, int timeout_ms);
ssize_t lchan_msg_peek_len(struct lchan_msg *m, unsigned flags,
			   int timeout_ms);
ssize_t lchan_msg_send_mr(struct lchan_msg *m, const struct lchan_mr *mr,
			  const void *buf, size_t len, unsigned flags);
ssize_t lchan_msg_recv_mr(struct lchan_msg *m, const struct lchan_mr *mr,
			  void *buf, size_t cap, unsigned flags,
			  int timeout_ms);

int lchan_msg_fd(const struct lchan_msg *m);
int lchan_msg_progress(struct lchan_msg *m);
int lchan_msg_poll_events(const struct lchan_msg *m);
struct lchan_chan *lchan_msg_chan(struct lchan_msg *m);
int lchan_msg_describe(const struct lchan_msg *m, char *buf, size_t len);

#ifdef __cplusplus
}
#endif

#endif /* LIBLCHAN_MSG_H */
