// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * liblchan set-up and teardown: contexts, memory regions, listeners and
 * channels (connect, accept, establish, ring mapping, close).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "liblchan.h"

static int lchan_errno(void)
{
	return errno ? -errno : -EIO;
}

int lchan_ctx_open(struct lchan_ctx *ctx)
{
	ctx->fd = open(LCHAN_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	return ctx->fd < 0 ? lchan_errno() : 0;
}

/*
 * Make @ctx a poller context (before its first channel): the kernel's pool
 * of poller threads submits for its channels.  @share: take that
 * context's settings.
 */
int lchan_ctx_setup_poller(struct lchan_ctx *ctx, unsigned idle_ms, int cpu,
			   const struct lchan_ctx *share)
{
	struct lchan_ctx_setup_args req = {
		.size = sizeof(req),
		.flags = LCHAN_CTX_POLLER,
		.idle_ms = idle_ms,
		.cpu = cpu,
		.attach_fd = share ? share->fd : -1,
	};

	return ioctl(ctx->fd, LCHAN_IOC_CTX_SETUP, &req) ? lchan_errno() : 0;
}

int lchan_ctx_close(struct lchan_ctx *ctx)
{
	int ret = 0;

	if (ctx->fd >= 0 && close(ctx->fd))
		ret = lchan_errno();
	ctx->fd = -1;
	return ret;
}

int lchan_query(struct lchan_ctx *ctx, struct lchan_info *info)
{
	memset(info, 0, sizeof(*info));
	info->size = sizeof(*info);
	return ioctl(ctx->fd, LCHAN_IOC_INFO, info) ? lchan_errno() : 0;
}

int lchan_mr_reg(struct lchan_ctx *ctx, struct lchan_chan *chan, void *addr,
		 size_t length, unsigned access, struct lchan_mr *mr)
{
	struct lchan_mr_reg_args req = {
		.size = sizeof(req),
		.addr = (uintptr_t)addr,
		.length = length,
		.access = access,
		.chan_fd = chan->fd,
	};

	memset(mr, 0, sizeof(*mr));
	if (ioctl(ctx->fd, LCHAN_IOC_MR_REG, &req))
		return lchan_errno();
	mr->handle = req.handle;
	mr->rkey = req.rkey;
	mr->addr = addr;
	mr->length = length;
	return 0;
}

int lchan_mr_dereg(struct lchan_ctx *ctx, struct lchan_mr *mr)
{
	struct lchan_mr_dereg_args req = {
		.size = sizeof(req),
		.handle = mr->handle,
	};

	/* Handle 0 is never given out: an empty region. */
	if (!mr->handle)
		return 0;
	if (ioctl(ctx->fd, LCHAN_IOC_MR_DEREG, &req))
		return lchan_errno();
	mr->handle = 0;
	return 0;
}

int lchan_listen(struct lchan_ctx *ctx, const char *host, const char *port,
		 int backlog, unsigned flags, struct lchan_listener *lst)
{
	struct lchan_listen_args req = {
		.size = sizeof(req),
		.flags = flags | LCHAN_FD_CLOEXEC,
		.backlog = backlog > 0 ? (unsigned)backlog : 0,
	};
	int ret, fd;

	lst->fd = -1;
	memset(&lst->addr, 0, sizeof(lst->addr));
	ret = lchan_addr_parse(host, port, &req.addr);
	if (ret)
		return ret;
	fd = ioctl(ctx->fd, LCHAN_IOC_LISTEN, &req);
	if (fd < 0)
		return lchan_errno();
	lst->fd = fd;
	lst->addr = req.addr;
	return 0;
}

int lchan_listener_close(struct lchan_listener *lst)
{
	int ret = 0;

	if (lst->fd >= 0 && close(lst->fd))
		ret = lchan_errno();
	lst->fd = -1;
	return ret;
}

static void lchan_opts_to_sizes_rc(const struct lchan_opts *opts,
				   struct lchan_ring_sizes *rings,
				   struct lchan_rc_params *rc)
{
	if (!opts)
		return;
	rings->sq_entries = opts->sq_entries;
	rings->rq_entries = opts->rq_entries;
	rings->cq_entries = opts->cq_entries;
	if (opts->flags & LCHAN_OPTS_RC) {
		rc->ack_timeout = opts->ack_timeout;
		rc->retry_count = opts->retry_count;
	}
	if (opts->flags & LCHAN_OPTS_KEEPALIVE)
		rc->keepalive_ms = opts->keepalive_ms;
}

/* The kernel's flags of the new fd: the library's own bit stays here. */
static unsigned lchan_opts_fd_flags(const struct lchan_opts *opts)
{
	return ((opts ? opts->flags : 0) &
		~(LCHAN_OPTS_RC | LCHAN_OPTS_KEEPALIVE)) | LCHAN_FD_CLOEXEC;
}

/* What a failed connect or accept leaves: closing it does nothing. */
static void lchan_chan_empty(struct lchan_chan *chan)
{
	memset(chan, 0, sizeof(*chan));
	chan->fd = -1;
}

/* Map the rings of a fresh channel fd and fill in the ring views. */
static int lchan_chan_setup(struct lchan_chan *chan, int fd)
{
	struct lchan_chan_info *info = &chan->info;
	char *map;
	int ret;

	memset(chan, 0, sizeof(*chan));
	chan->fd = fd;
	info->size = sizeof(*info);
	if (ioctl(fd, LCHAN_IOC_CHAN_INFO, info)) {
		ret = lchan_errno();
		goto err_close;
	}
	map = mmap(NULL, info->mmap_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		   fd, LCHAN_OFF_RINGS);
	if (map == MAP_FAILED) {
		ret = lchan_errno();
		goto err_close;
	}
	chan->map = map;
	chan->map_size = info->mmap_size;

	chan->sq.khead = (unsigned *)(map + info->sq_off.head);
	chan->sq.ktail = (unsigned *)(map + info->sq_off.tail);
	chan->sq.mask = *(unsigned *)(map + info->sq_off.ring_mask);
	chan->sq.entries = *(unsigned *)(map + info->sq_off.ring_entries);
	chan->sq.sqes = (struct lchan_sqe *)(map + info->sq_off.entries);
	chan->sq.kflags = (unsigned *)(map + info->sq_off.flags);
	chan->sq.tail = *chan->sq.ktail;
	chan->sq.published = chan->sq.tail;

	chan->rq.khead = (unsigned *)(map + info->rq_off.head);
	chan->rq.ktail = (unsigned *)(map + info->rq_off.tail);
	chan->rq.mask = *(unsigned *)(map + info->rq_off.ring_mask);
	chan->rq.entries = *(unsigned *)(map + info->rq_off.ring_entries);
	chan->rq.rqes = (struct lchan_rqe *)(map + info->rq_off.entries);
	chan->rq.kposted = info->rq_off.posted ?
			   (unsigned *)(map + info->rq_off.posted) : NULL;
	chan->rq.tail = *chan->rq.ktail;
	chan->rq.published = chan->rq.tail;

	chan->cq.khead = (unsigned *)(map + info->cq_off.head);
	chan->cq.ktail = (unsigned *)(map + info->cq_off.tail);
	chan->cq.mask = *(unsigned *)(map + info->cq_off.ring_mask);
	chan->cq.entries = *(unsigned *)(map + info->cq_off.ring_entries);
	chan->cq.cqes = (struct lchan_cqe *)(map + info->cq_off.entries);
	chan->cq.head = *chan->cq.khead;
	return 0;

err_close:
	close(fd);
	chan->fd = -1;
	return ret;
}

int lchan_accept(struct lchan_listener *lst, const struct lchan_opts *opts,
		 struct lchan_chan *chan)
{
	struct lchan_accept_args req = {
		.size = sizeof(req),
		.flags = lchan_opts_fd_flags(opts),
	};
	int fd;

	lchan_chan_empty(chan);
	lchan_opts_to_sizes_rc(opts, &req.rings, &req.rc);
	fd = ioctl(lst->fd, LCHAN_IOC_ACCEPT, &req);
	if (fd < 0)
		return lchan_errno();
	return lchan_chan_setup(chan, fd);
}

int lchan_connect_addr(struct lchan_ctx *ctx, const struct lchan_addr *dst,
		       const struct lchan_opts *opts, struct lchan_chan *chan)
{
	struct lchan_connect_args req = {
		.size = sizeof(req),
		.flags = lchan_opts_fd_flags(opts),
		.dst = *dst,
		.timeout_ms = opts ? opts->timeout_ms : 0,
	};
	int fd;

	int ret;

	lchan_chan_empty(chan);
	lchan_opts_to_sizes_rc(opts, &req.rings, &req.rc);
	fd = ioctl(ctx->fd, LCHAN_IOC_CONNECT, &req);
	if (fd < 0)
		return lchan_errno();
	ret = lchan_chan_setup(chan, fd);
	if (ret || !(req.flags & LCHAN_FD_NONBLOCK) ||
	    (req.flags & LCHAN_DEFER_ESTABLISH))
		return ret;
	/*
	 * A non-blocking connect: -EINPROGRESS leaves a valid channel,
	 * connecting, as a socket's connect does; one that failed already
	 * leaves none.
	 */
	ret = lchan_connect_result(chan);
	if (ret && ret != -EINPROGRESS)
		lchan_chan_close(chan);
	return ret;
}

int lchan_connect(struct lchan_ctx *ctx, const char *host, const char *port,
		  const struct lchan_opts *opts, struct lchan_chan *chan)
{
	struct lchan_addr dst;
	int ret;

	lchan_chan_empty(chan);
	if (!host || !*host)
		return -EDESTADDRREQ;
	ret = lchan_addr_parse(host, port, &dst);
	if (ret)
		return ret;
	return lchan_connect_addr(ctx, &dst, opts, chan);
}

/*
 * Stream channels: the kernel's LCHAN_FD_STREAM, whose fd is a socket.
 * The options' ring sizes must be 0 (the kernel sizes the queues).
 */
int lchan_stream_connect(struct lchan_ctx *ctx, const struct lchan_addr *dst,
			 const struct lchan_opts *opts)
{
	struct lchan_connect_args req = {
		.size = sizeof(req),
		.flags = lchan_opts_fd_flags(opts) | LCHAN_FD_STREAM,
		.dst = *dst,
		.timeout_ms = opts ? opts->timeout_ms : 0,
	};
	int fd;

	lchan_opts_to_sizes_rc(opts, &req.rings, &req.rc);
	fd = ioctl(ctx->fd, LCHAN_IOC_CONNECT, &req);
	return fd < 0 ? lchan_errno() : fd;
}

int lchan_stream_accept(struct lchan_listener *lst,
			const struct lchan_opts *opts, struct lchan_addr *peer)
{
	struct lchan_accept_args req = {
		.size = sizeof(req),
		.flags = lchan_opts_fd_flags(opts) | LCHAN_FD_STREAM,
	};
	int fd;

	lchan_opts_to_sizes_rc(opts, &req.rings, &req.rc);
	fd = ioctl(lst->fd, LCHAN_IOC_ACCEPT, &req);
	if (fd < 0)
		return lchan_errno();
	if (peer)
		*peer = req.peer;
	return fd;
}

int lchan_stream_listen(struct lchan_ctx *ctx, int sock_fd, unsigned flags,
			struct lchan_addr *addr)
{
	struct lchan_listen_args req = {
		.size = sizeof(req),
		.flags = flags | LCHAN_FD_STREAM | LCHAN_FD_CLOEXEC,
		.sock_fd = sock_fd,
	};
	int fd;

	fd = ioctl(ctx->fd, LCHAN_IOC_LISTEN, &req);
	if (fd < 0)
		return lchan_errno();
	if (addr)
		*addr = req.addr;
	return fd;
}

/* The QP numbers are known once connected. */
static int lchan_chan_refresh(struct lchan_chan *chan)
{
	chan->info.size = sizeof(chan->info);
	return ioctl(chan->fd, LCHAN_IOC_CHAN_INFO, &chan->info) ?
	       lchan_errno() : 0;
}

int lchan_establish(struct lchan_chan *chan, unsigned timeout_ms)
{
	struct lchan_establish_args req = {
		.size = sizeof(req),
		.timeout_ms = timeout_ms,
	};

	if (ioctl(chan->fd, LCHAN_IOC_ESTABLISH, &req))
		return lchan_errno();
	return lchan_chan_refresh(chan);
}

/*
 * How a non-blocking connect (or establish) is doing: 0 once connected,
 * -EINPROGRESS while under way, else why it failed.
 */
int lchan_connect_result(struct lchan_chan *chan)
{
	struct lchan_establish_args req = { .size = sizeof(req) };
	int ret;

	if (!ioctl(chan->fd, LCHAN_IOC_ESTABLISH, &req))
		return lchan_chan_refresh(chan);
	ret = lchan_errno();
	if (ret == -EISCONN)
		return lchan_chan_refresh(chan);
	return ret == -EALREADY ? -EINPROGRESS : ret;
}

/* Unmap and close: the kernel disconnects and flushes. */
int lchan_chan_close(struct lchan_chan *chan)
{
	int ret = 0;

	if (chan->map && munmap(chan->map, chan->map_size))
		ret = lchan_errno();
	chan->map = NULL;
	if (chan->fd >= 0 && close(chan->fd) && !ret)
		ret = lchan_errno();
	chan->fd = -1;
	return ret;
}
