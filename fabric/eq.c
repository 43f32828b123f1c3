// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * Event queues: connection events in a software queue.  The wait object
 * is an epoll fd over the fds that can make events: listeners (readable
 * when a request waits: FI_CONNREQ) and channels (hung up: FI_SHUTDOWN).
 * The connecting side's channel is watched from fi_connect on: its
 * ACCEPT (FI_CONNECTED) or REJECT, or its failure, arrive there.
 * fi_accept queues FI_CONNECTED itself, and fi_shutdown FI_SHUTDOWN: one
 * per connection, whichever end goes first.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>

#include "lfi.h"

static void lfi_eq_free_event(struct lfi_eq_event *ev)
{
	if (ev->info)
		fi_freeinfo(ev->info);
	free(ev);
}

static struct lfi_eq_event *lfi_eq_new(struct lfi_eq *eq)
{
	struct lfi_eq_event *ev = calloc(1, sizeof(*ev));

	if (!ev)
		return NULL;
	if (eq->tail)
		eq->tail->next = ev;
	else
		eq->head = ev;
	eq->tail = ev;
	return ev;
}

/* Queue an event (fabric lock held); @info passes to the queue. */
int lfi_eq_push(struct lfi_eq *eq, uint32_t event, struct fid *fid,
		struct fi_info *info, const void *data, size_t datalen)
{
	struct lfi_eq_event *ev = lfi_eq_new(eq);

	if (!ev)
		return -FI_ENOMEM;
	ev->event = event;
	ev->fid = fid;
	ev->info = info;
	ev->datalen = datalen < LFI_CM_DATA_MAX ? datalen : LFI_CM_DATA_MAX;
	if (ev->datalen)
		memcpy(ev->data, data, ev->datalen);
	return 0;
}

/* An error event; @data (a peer's reject data) becomes its err_data. */
int lfi_eq_push_err(struct lfi_eq *eq, struct fid *fid, void *context,
		    int err, int prov_errno, const void *data, size_t datalen)
{
	struct lfi_eq_event *ev = lfi_eq_new(eq);

	if (!ev)
		return -FI_ENOMEM;
	ev->err = true;
	ev->err_entry.fid = fid;
	ev->err_entry.context = context;
	ev->err_entry.err = err;
	ev->err_entry.prov_errno = prov_errno;
	ev->datalen = datalen < LFI_CM_DATA_MAX ? datalen : LFI_CM_DATA_MAX;
	if (ev->datalen)
		memcpy(ev->data, data, ev->datalen);
	return 0;
}

/* Watch @fd for @events on behalf of @owner (a pep or ep fid). */
int lfi_eq_watch(struct lfi_eq *eq, int fd, uint32_t events, void *owner)
{
	struct epoll_event e = { .events = events, .data.ptr = owner };

	if (epoll_ctl(eq->wait.epfd, EPOLL_CTL_ADD, fd, &e))
		return -errno;
	return 0;
}

int lfi_eq_rewatch(struct lfi_eq *eq, int fd, uint32_t events, void *owner)
{
	struct epoll_event e = { .events = events, .data.ptr = owner };

	if (epoll_ctl(eq->wait.epfd, EPOLL_CTL_MOD, fd, &e))
		return -errno;
	return 0;
}

void lfi_eq_unwatch(struct lfi_eq *eq, int fd)
{
	epoll_ctl(eq->wait.epfd, EPOLL_CTL_DEL, fd, NULL);
}

/*
 * Drop the events queued for @fid (lock held): it is closing, and an
 * event naming it would hand the reader a freed object.
 */
void lfi_eq_forget(struct lfi_eq *eq, const struct fid *fid)
{
	struct lfi_eq_event **p = &eq->head, *ev;

	eq->tail = NULL;
	while ((ev = *p)) {
		if (ev->fid == fid || (ev->err && ev->err_entry.fid == fid)) {
			*p = ev->next;
			lfi_eq_free_event(ev);
			continue;
		}
		eq->tail = ev;
		p = &ev->next;
	}
}

static ssize_t lfi_eq_read_locked(struct lfi_eq *eq, uint32_t *event,
				  void *buf, size_t len, uint64_t flags)
{
	struct lfi_eq_event *ev;
	struct fi_eq_cm_entry *cm = buf;
	size_t n;

	if (eq->err_last) {
		lfi_eq_free_event(eq->err_last);
		eq->err_last = NULL;
	}
	if (!eq->head)
		lfi_progress_eq(eq);
	ev = eq->head;
	if (!ev)
		return -FI_EAGAIN;
	if (ev->err)
		return -FI_EAVAIL;
	if (len < sizeof(*cm))
		return -FI_ETOOSMALL;
	*event = ev->event;
	cm->fid = ev->fid;
	cm->info = ev->info;
	n = len - sizeof(*cm) < ev->datalen ? len - sizeof(*cm) : ev->datalen;
	memcpy(cm->data, ev->data, n);
	if (flags & FI_PEEK)
		return (ssize_t)(sizeof(*cm) + n);
	ev->info = NULL;
	eq->head = ev->next;
	if (!eq->head)
		eq->tail = NULL;
	lfi_eq_free_event(ev);
	return (ssize_t)(sizeof(*cm) + n);
}

static ssize_t lfi_eq_read(struct fid_eq *eq_fid, uint32_t *event, void *buf,
			   size_t len, uint64_t flags)
{
	struct lfi_eq *eq = container_of(eq_fid, struct lfi_eq, eq_fid);
	ssize_t ret;

	pthread_mutex_lock(&eq->fabric->lock);
	ret = lfi_eq_read_locked(eq, event, buf, len, flags);
	pthread_mutex_unlock(&eq->fabric->lock);
	return ret;
}

static ssize_t lfi_eq_readerr(struct fid_eq *eq_fid,
			      struct fi_eq_err_entry *buf, uint64_t flags)
{
	struct lfi_eq *eq = container_of(eq_fid, struct lfi_eq, eq_fid);
	struct lfi_eq_event *ev;
	ssize_t ret = -FI_EAGAIN;

	pthread_mutex_lock(&eq->fabric->lock);
	ev = eq->head;
	if (ev && ev->err) {
		void *user_data = buf->err_data;
		size_t user_size = buf->err_data_size;

		*buf = ev->err_entry;
		/* Into the caller's buffer if it gave one, else ours. */
		if (user_data && user_size) {
			buf->err_data = user_data;
			buf->err_data_size = user_size < ev->datalen ?
					     user_size : ev->datalen;
			memcpy(user_data, ev->data, buf->err_data_size);
		} else {
			buf->err_data = ev->datalen ? ev->data : NULL;
			buf->err_data_size = ev->datalen;
		}
		if (!(flags & FI_PEEK)) {
			eq->head = ev->next;
			if (!eq->head)
				eq->tail = NULL;
			/* Freed at the next read: err_data stays valid. */
			if (eq->err_last)
				lfi_eq_free_event(eq->err_last);
			eq->err_last = ev;
		}
		ret = sizeof(*buf);
	}
	pthread_mutex_unlock(&eq->fabric->lock);
	return ret;
}

static ssize_t lfi_eq_write(struct fid_eq *eq_fid, uint32_t event,
			    const void *buf, size_t len, uint64_t flags)
{
	struct lfi_eq *eq = container_of(eq_fid, struct lfi_eq, eq_fid);
	const struct fi_eq_entry *e = buf;
	ssize_t ret;

	if (len < sizeof(struct fi_eq_cm_entry) || flags)
		return -FI_EINVAL;
	pthread_mutex_lock(&eq->fabric->lock);
	ret = lfi_eq_push(eq, event, e->fid, NULL, NULL, 0);
	pthread_mutex_unlock(&eq->fabric->lock);
	return ret ? ret : (ssize_t)len;
}

static ssize_t lfi_eq_sread(struct fid_eq *eq_fid, uint32_t *event, void *buf,
			    size_t len, int timeout, uint64_t flags)
{
	struct lfi_eq *eq = container_of(eq_fid, struct lfi_eq, eq_fid);
	long long end = lfi_wait_deadline(timeout);
	struct epoll_event e;
	ssize_t ret;

	for (;;) {
		int left;

		ret = lfi_eq_read(eq_fid, event, buf, len, flags);
		if (ret != -FI_EAGAIN)
			return ret;
		left = lfi_wait_left(end);
		if (!left)
			return -FI_EAGAIN;
		if (epoll_wait(eq->wait.epfd, &e, 1, left) < 0 &&
		    errno != EINTR)
			return -errno;
	}
}

static const char *lfi_eq_strerror(struct fid_eq *eq, int prov_errno,
				   const void *err_data, char *buf, size_t len)
{
	const char *s = fi_strerror(prov_errno < 0 ? -prov_errno : prov_errno);

	(void)eq; (void)err_data;
	if (buf && len) {
		snprintf(buf, len, "%s", s);
		return buf;
	}
	return s;
}

static struct fi_ops_eq lfi_eq_ops = {
	.size = sizeof(struct fi_ops_eq),
	.read = lfi_eq_read,
	.readerr = lfi_eq_readerr,
	.write = lfi_eq_write,
	.sread = lfi_eq_sread,
	.strerror = lfi_eq_strerror,
};

static int lfi_eq_control(struct fid *fid, int command, void *arg)
{
	struct lfi_eq *eq = container_of(fid, struct lfi_eq, eq_fid.fid);

	return lfi_wait_control(&eq->wait, command, arg);
}

static int lfi_eq_close(struct fid *fid)
{
	struct lfi_eq *eq = container_of(fid, struct lfi_eq, eq_fid.fid);
	struct lfi_eq_event *ev;
	int ret = lfi_fabric_release(eq->fabric, &eq->refs, &eq->fabric->refs);

	if (ret)
		return ret;
	while ((ev = eq->head)) {
		eq->head = ev->next;
		lfi_eq_free_event(ev);
	}
	if (eq->err_last)
		lfi_eq_free_event(eq->err_last);
	lfi_wait_close(&eq->wait);
	free(eq);
	return 0;
}

static struct fi_ops lfi_eq_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = lfi_eq_close,
	.bind = lfi_unsupported_bind,
	.control = lfi_eq_control,
	.ops_open = lfi_unsupported_ops_open,
	.tostr = lfi_unsupported_tostr,
	.ops_set = lfi_unsupported_ops_set,
};

int lfi_eq_open(struct fid_fabric *fabric, struct fi_eq_attr *attr,
		struct fid_eq **eq_fid, void *context)
{
	struct lfi_fabric *fab = to_lfi_fabric(fabric);
	struct lfi_eq *eq;
	int ret;

	if (attr->flags & ~FI_WRITE)
		return -FI_EINVAL;
	eq = calloc(1, sizeof(*eq));
	if (!eq)
		return -FI_ENOMEM;
	ret = lfi_wait_open(&eq->wait, attr->wait_obj);
	if (ret) {
		free(eq);
		return ret;
	}
	eq->fabric = fab;
	eq->eq_fid.fid.fclass = FI_CLASS_EQ;
	eq->eq_fid.fid.context = context;
	eq->eq_fid.fid.ops = &lfi_eq_fi_ops;
	eq->eq_fid.ops = &lfi_eq_ops;
	pthread_mutex_lock(&fab->lock);
	fab->refs++;
	pthread_mutex_unlock(&fab->lock);
	*eq_fid = &eq->eq_fid;
	return 0;
}
