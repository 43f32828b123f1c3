/* SPDX-License-Identifier: LGPL-2.1-or-later OR MIT */
/*
 * liblchan message layer: whole messages over a channel, like a
 * SOCK_SEQPACKET socket.  The library owns the receive buffers, the credits
 * and the completions; the caller sends and receives messages.
 *
 * One message channel is used by one thread at a time (no locks inside).
 * All calls return -errno on failure.
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

/* Send and receive flags. */
#define LCHAN_MSG_DONTWAIT	(1U << 0)	/* -EAGAIN instead of blocking */

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

#ifdef __cplusplus
}
#endif

#endif /* LIBLCHAN_MSG_H */
