/* SPDX-License-Identifier: LGPL-2.1-or-later OR MIT */
/*
 * liblchan message layer: whole messages over a channel, like a
 * SOCK_SEQPACKET socket.  The library owns the receive buffers, the credits
 * and the completions; the caller sends and receives messages.
 *
 * One message channel is used by one thread at a time (no locks inside).
 * All calls return -errno on failure.
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
 *   lchan_msg_recv() returns the length of the next message, 0 once the
 *   peer closed and every message it sent before was received, -EAGAIN
 *   (LCHAN_MSG_DONTWAIT or timeout_ms 0), -ETIMEDOUT (timeout_ms > 0; -1
 *   waits for ever), -EMSGSIZE when the message does not fit in cap (it
 *   stays queued), -ECONNRESET when the connection failed.
 *   Large messages from or into memory the caller did not register are
 *   registered for the transfer: -ENOMEM when that fails (RLIMIT_MEMLOCK).
 *   The _mr variants take the caller's region instead: REMOTE_READ access
 *   for sending, LOCAL_WRITE for receiving.
 *   lchan_msg_close() sends end of stream after everything sent before,
 *   waits (at most 10 s) until those SENDs completed, and frees all.
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

#ifdef __cplusplus
extern "C" {
#endif

struct lchan_chan;
struct lchan_ctx;
struct lchan_listener;
struct lchan_mr;
struct lchan_msg;

/* Options; zero means "default" everywhere. */
struct lchan_msg_opts {
	size_t max_msg;		/* largest message; default 4 MiB */
	unsigned nbufs;		/* receive buffers = credits; default 32 */
	unsigned nsend;		/* send bounce buffers; default 32 */
	unsigned buf_size;	/* payload per buffer; bigger messages go by
				 * RDMA READ; default 8192 */
	unsigned timeout_ms;	/* connect/establish; 0 = a default */
	unsigned flags;		/* LCHAN_MSG_O_* */
};

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

int lchan_msg_connect(struct lchan_ctx *ctx, const char *host,
		      const char *port, const struct lchan_msg_opts *opts,
		      struct lchan_msg **m);
int lchan_msg_accept(struct lchan_ctx *ctx, struct lchan_listener *lst,
		     const struct lchan_msg_opts *opts, struct lchan_msg **m);
int lchan_msg_close(struct lchan_msg *m);

ssize_t lchan_msg_send(struct lchan_msg *m, const void *buf, size_t len,
		       unsigned flags);
ssize_t lchan_msg_recv(struct lchan_msg *m, void *buf, size_t cap,
		       unsigned flags, int timeout_ms);
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
