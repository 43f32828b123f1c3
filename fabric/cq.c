// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * Completion queues.  Each endpoint's channel has one CQ ring with both
 * directions; reading a CQ drains the rings of the endpoints bound to it
 * and files every completion under the CQ its direction was bound to.
 * The wait object is an epoll fd over those channel fds plus an eventfd
 * that another CQ's reader kicks when it files a completion here.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>

#include "lfi.h"

static size_t lfi_cq_entry_size(enum fi_cq_format format)
{
	switch (format) {
	case FI_CQ_FORMAT_CONTEXT:
		return sizeof(struct fi_cq_entry);
	case FI_CQ_FORMAT_MSG:
		return sizeof(struct fi_cq_msg_entry);
	case FI_CQ_FORMAT_DATA:
		return sizeof(struct fi_cq_data_entry);
	case FI_CQ_FORMAT_TAGGED:
		return sizeof(struct fi_cq_tagged_entry);
	default:
		return 0;
	}
}

static void lfi_cq_copy(enum fi_cq_format format, void *dst,
			const struct fi_cq_err_entry *e)
{
	struct fi_cq_tagged_entry t = {
		.op_context = e->op_context,
		.flags = e->flags,
		.len = e->len,
		.buf = e->buf,
		.data = e->data,
		.tag = 0,
	};

	/* Every format is a prefix of the tagged entry. */
	memcpy(dst, &t, lfi_cq_entry_size(format));
}

/* File a completion (fabric lock held). */
int lfi_cq_push(struct lfi_cq *cq, const struct fi_cq_err_entry *e)
{
	if (cq->q_tail - cq->q_head == cq->q_size) {
		size_t n = cq->q_size * 2, i;
		struct lfi_cq_entry *q = calloc(n, sizeof(*q));

		if (!q)
			return -FI_ENOMEM;
		for (i = 0; i < cq->q_size; i++)
			q[i] = cq->q[(cq->q_head + i) & (cq->q_size - 1)];
		free(cq->q);
		cq->q = q;
		cq->q_tail = cq->q_size;
		cq->q_head = 0;
		cq->q_size = n;
	}
	cq->q[cq->q_tail++ & (cq->q_size - 1)].e = *e;
	return 0;
}

/* Another reader filed completions here: wake a waiter of this CQ. */
void lfi_cq_kick(struct lfi_cq *cq)
{
	uint64_t one = 1;

	if (cq->wait.obj != FI_WAIT_NONE &&
	    write(cq->kick_fd, &one, sizeof(one)) < 0)
		LFI_WARN(FI_LOG_CQ, "eventfd write: %d\n", errno);
}

static ssize_t lfi_cq_read_locked(struct lfi_cq *cq, void *buf, size_t count)
{
	size_t size = lfi_cq_entry_size(cq->format), n = 0;

	if (cq->q_head == cq->q_tail)
		lfi_progress_cq(cq);
	while (n < count && cq->q_head != cq->q_tail) {
		struct lfi_cq_entry *c = &cq->q[cq->q_head & (cq->q_size - 1)];

		if (c->e.err)
			break;
		lfi_cq_copy(cq->format, (char *)buf + n * size, &c->e);
		cq->q_head++;
		n++;
	}
	if (n)
		return (ssize_t)n;
	return cq->q_head != cq->q_tail ? -FI_EAVAIL : -FI_EAGAIN;
}

static ssize_t lfi_cq_read(struct fid_cq *cq_fid, void *buf, size_t count)
{
	struct lfi_cq *cq = container_of(cq_fid, struct lfi_cq, cq_fid);
	ssize_t ret;

	pthread_mutex_lock(&cq->dom->fabric->lock);
	ret = lfi_cq_read_locked(cq, buf, count);
	pthread_mutex_unlock(&cq->dom->fabric->lock);
	return ret;
}

static ssize_t lfi_cq_readfrom(struct fid_cq *cq_fid, void *buf, size_t count,
			       fi_addr_t *src_addr)
{
	ssize_t ret = lfi_cq_read(cq_fid, buf, count), i;

	/* Connected endpoints: the source is the peer. */
	for (i = 0; src_addr && i < ret; i++)
		src_addr[i] = FI_ADDR_NOTAVAIL;
	return ret;
}

static ssize_t lfi_cq_readerr(struct fid_cq *cq_fid, struct fi_cq_err_entry *buf,
			      uint64_t flags)
{
	struct lfi_cq *cq = container_of(cq_fid, struct lfi_cq, cq_fid);
	ssize_t ret = -FI_EAGAIN;

	(void)flags;
	pthread_mutex_lock(&cq->dom->fabric->lock);
	if (cq->q_head != cq->q_tail) {
		struct lfi_cq_entry *c = &cq->q[cq->q_head & (cq->q_size - 1)];

		if (c->e.err) {
			/* lchan's CQE status is prov_errno; no err_data. */
			void *err_data = buf->err_data;

			*buf = c->e;
			buf->err_data = err_data;
			buf->err_data_size = 0;
			cq->q_head++;
			ret = 1;
		}
	}
	pthread_mutex_unlock(&cq->dom->fabric->lock);
	return ret;
}

static ssize_t lfi_cq_sreadfrom(struct fid_cq *cq_fid, void *buf, size_t count,
				fi_addr_t *src_addr, const void *cond,
				int timeout)
{
	struct lfi_cq *cq = container_of(cq_fid, struct lfi_cq, cq_fid);
	long long end = lfi_wait_deadline(timeout);
	struct epoll_event e[4];
	ssize_t ret;

	(void)cond;
	if (cq->wait.obj == FI_WAIT_NONE)
		return -FI_EINVAL;
	for (;;) {
		int left, n, i;

		ret = lfi_cq_readfrom(cq_fid, buf, count, src_addr);
		if (ret != -FI_EAGAIN)
			return ret;
		left = lfi_wait_left(end);
		if (!left)
			return -FI_EAGAIN;
		n = epoll_wait(cq->wait.epfd, e, 4, left);
		if (n < 0 && errno != EINTR)
			return -errno;
		for (i = 0; i < n; i++)
			if (e[i].data.ptr == NULL) {
				uint64_t v;

				if (read(cq->kick_fd, &v, sizeof(v)) < 0 &&
				    errno != EAGAIN)
					return -errno;
			}
		if (n > 0 && cq->signaled) {
			cq->signaled = false;
			return -FI_EAGAIN;
		}
	}
}

static ssize_t lfi_cq_sread(struct fid_cq *cq_fid, void *buf, size_t count,
			    const void *cond, int timeout)
{
	return lfi_cq_sreadfrom(cq_fid, buf, count, NULL, cond, timeout);
}

static int lfi_cq_signal(struct fid_cq *cq_fid)
{
	struct lfi_cq *cq = container_of(cq_fid, struct lfi_cq, cq_fid);

	cq->signaled = true;
	lfi_cq_kick(cq);
	return 0;
}

static const char *lfi_cq_strerror(struct fid_cq *cq, int prov_errno,
				   const void *err_data, char *buf, size_t len)
{
	const char *s = lchan_cqe_status_str((unsigned)prov_errno);

	(void)cq; (void)err_data;
	if (buf && len) {
		snprintf(buf, len, "%s", s);
		return buf;
	}
	return s;
}

static struct fi_ops_cq lfi_cq_ops = {
	.size = sizeof(struct fi_ops_cq),
	.read = lfi_cq_read,
	.readfrom = lfi_cq_readfrom,
	.readerr = lfi_cq_readerr,
	.sread = lfi_cq_sread,
	.sreadfrom = lfi_cq_sreadfrom,
	.signal = lfi_cq_signal,
	.strerror = lfi_cq_strerror,
};

static int lfi_cq_control(struct fid *fid, int command, void *arg)
{
	struct lfi_cq *cq = container_of(fid, struct lfi_cq, cq_fid.fid);

	return lfi_wait_control(&cq->wait, command, arg);
}

static int lfi_cq_close(struct fid *fid)
{
	struct lfi_cq *cq = container_of(fid, struct lfi_cq, cq_fid.fid);
	int ret = lfi_fabric_release(cq->dom->fabric, &cq->neps,
				     &cq->dom->refs);

	if (ret)
		return ret;
	lfi_wait_close(&cq->wait);
	close(cq->kick_fd);
	free(cq->eps);
	free(cq->q);
	free(cq);
	return 0;
}

static struct fi_ops lfi_cq_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = lfi_cq_close,
	.bind = lfi_unsupported_bind,
	.control = lfi_cq_control,
	.ops_open = lfi_unsupported_ops_open,
	.tostr = lfi_unsupported_tostr,
	.ops_set = lfi_unsupported_ops_set,
};

/* Bind @ep (fabric lock held); its channel fd is watched once it has one. */
int lfi_cq_add_ep(struct lfi_cq *cq, struct lfi_ep *ep)
{
	int i;

	for (i = 0; i < cq->neps; i++)
		if (cq->eps[i] == ep)
			return 0;
	if (cq->neps == cq->eps_cap) {
		int cap = cq->eps_cap ? cq->eps_cap * 2 : 4;
		struct lfi_ep **eps = realloc(cq->eps, cap * sizeof(*eps));

		if (!eps)
			return -FI_ENOMEM;
		cq->eps = eps;
		cq->eps_cap = cap;
	}
	cq->eps[cq->neps++] = ep;
	return 0;
}

/* Unbind @ep (fabric lock held). */
void lfi_cq_del_ep(struct lfi_cq *cq, struct lfi_ep *ep)
{
	int i;

	for (i = 0; i < cq->neps; i++)
		if (cq->eps[i] == ep) {
			cq->eps[i] = cq->eps[--cq->neps];
			break;
		}
}

/* @ep has a channel now: wake this CQ's waiters on its completions. */
int lfi_cq_watch(struct lfi_cq *cq, struct lfi_ep *ep)
{
	struct epoll_event e = { .events = EPOLLIN, .data.ptr = ep };

	if (cq->wait.obj == FI_WAIT_NONE)
		return 0;
	if (epoll_ctl(cq->wait.epfd, EPOLL_CTL_ADD, ep->chan.fd, &e) &&
	    errno != EEXIST)
		return -errno;
	return 0;
}

void lfi_cq_unwatch(struct lfi_cq *cq, struct lfi_ep *ep)
{
	if (cq->wait.obj != FI_WAIT_NONE)
		epoll_ctl(cq->wait.epfd, EPOLL_CTL_DEL, ep->chan.fd, NULL);
}

int lfi_cq_open(struct fid_domain *domain, struct fi_cq_attr *attr,
		struct fid_cq **cq_fid, void *context)
{
	struct lfi_domain *dom = to_lfi_domain(domain);
	struct epoll_event e = { .events = EPOLLIN, .data.ptr = NULL };
	struct lfi_cq *cq;
	size_t size = 64;
	int ret;

	if (attr->flags & ~FI_AFFINITY)
		return -FI_EINVAL;
	if (attr->wait_cond != FI_CQ_COND_NONE)
		return -FI_ENOSYS;
	cq = calloc(1, sizeof(*cq));
	if (!cq)
		return -FI_ENOMEM;
	cq->format = attr->format == FI_CQ_FORMAT_UNSPEC ?
		     FI_CQ_FORMAT_CONTEXT : attr->format;
	if (!lfi_cq_entry_size(cq->format)) {
		ret = -FI_ENOSYS;
		goto err_free_cq;
	}
	while (size < attr->size)
		size *= 2;
	cq->q_size = size;
	cq->q = calloc(size, sizeof(*cq->q));
	if (!cq->q) {
		ret = -FI_ENOMEM;
		goto err_free_cq;
	}
	ret = lfi_wait_open(&cq->wait, attr->wait_obj);
	if (ret)
		goto err_free_q;
	cq->kick_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (cq->kick_fd < 0) {
		ret = -FI_ENOMEM;
		goto err_close_wait;
	}
	if (epoll_ctl(cq->wait.epfd, EPOLL_CTL_ADD, cq->kick_fd, &e)) {
		ret = -FI_ENOMEM;
		goto err_close_kick;
	}
	cq->dom = dom;
	cq->cq_fid.fid.fclass = FI_CLASS_CQ;
	cq->cq_fid.fid.context = context;
	cq->cq_fid.fid.ops = &lfi_cq_fi_ops;
	cq->cq_fid.ops = &lfi_cq_ops;
	pthread_mutex_lock(&dom->fabric->lock);
	dom->refs++;
	pthread_mutex_unlock(&dom->fabric->lock);
	*cq_fid = &cq->cq_fid;
	return 0;

err_close_kick:
	close(cq->kick_fd);
err_close_wait:
	lfi_wait_close(&cq->wait);
err_free_q:
	free(cq->q);
err_free_cq:
	free(cq);
	return ret;
}
