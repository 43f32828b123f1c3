// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * The wait object of a CQ or an EQ: an epoll fd over the fds that make
 * its entries.  It exists whatever the application asked for, because
 * reading polls it too; FI_WAIT_NONE only keeps it from the application.
 */
#include <errno.h>
#include <time.h>
#include <unistd.h>
#include <sys/epoll.h>

#include "lfi.h"

/* -FI_ENOSYS for a wait object other than an fd. */
int lfi_wait_open(struct lfi_wait *w, enum fi_wait_obj asked)
{
	switch (asked) {
	case FI_WAIT_NONE:
	case FI_WAIT_UNSPEC:
	case FI_WAIT_FD:
		break;
	default:
		return -FI_ENOSYS;
	}
	w->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (w->epfd < 0)
		return -FI_ENOMEM;
	w->obj = asked == FI_WAIT_NONE ? FI_WAIT_NONE : FI_WAIT_FD;
	return 0;
}

void lfi_wait_close(struct lfi_wait *w)
{
	close(w->epfd);
	w->epfd = -1;
}

/* fi_control of a CQ or EQ: FI_GETWAIT and FI_GETWAITOBJ. */
int lfi_wait_control(const struct lfi_wait *w, int command, void *arg)
{
	switch (command) {
	case FI_GETWAIT:
		if (w->obj == FI_WAIT_NONE)
			return -FI_ENODATA;
		*(int *)arg = w->epfd;
		return 0;
	case FI_GETWAITOBJ:
		*(enum fi_wait_obj *)arg = w->obj;
		return 0;
	}
	return -FI_ENOSYS;
}

static long long lfi_wait_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The deadline of a wait of @timeout_ms from now; -1 (none) for < 0. */
long long lfi_wait_deadline(int timeout_ms)
{
	return timeout_ms < 0 ? -1 : lfi_wait_now_ms() + timeout_ms;
}

/* Milliseconds left until @deadline, as epoll_wait takes them: -1 none. */
int lfi_wait_left(long long deadline)
{
	long long left;

	if (deadline < 0)
		return -1;
	left = deadline - lfi_wait_now_ms();
	return left > 0 ? (int)left : 0;
}
