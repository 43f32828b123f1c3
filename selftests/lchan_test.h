/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared helpers of the lchan selftests: which device a variant runs on,
 * module loading, and a connected channel pair inside one process.
 *
 * The guest rig exports LCHAN_<KIND>_DEV, _ADDR, _ADDR6 and
 * LCHAN_SPARE_<KIND>_NETDEV; without them, or without the device, a test
 * SKIPs.
 */
#ifndef LCHAN_TEST_H
#define LCHAN_TEST_H

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdarg.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <poll.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <sys/types.h>
#include <unistd.h>
#include <time.h>
#include <dirent.h>
#include <libgen.h>
#include <limits.h>
#include <grp.h>

#include "liblchan.h"
#include "lchan_ksft.h"

struct lchan_t_dev {
	char kind[8];		/* "rxe" or "siw" */
	char dev[64];
	char addr[64];
	char addr6[80];
	char spare_netdev[64];
};

static inline int lchan_t_getenv(char *dst, size_t len, const char *fmt,
				 const char *kind)
{
	char name[64], upper[8];
	const char *val;
	size_t i;

	for (i = 0; kind[i] && i < sizeof(upper) - 1; i++)
		upper[i] = kind[i] - 'a' + 'A';
	upper[i] = 0;
	snprintf(name, sizeof(name), fmt, upper);
	val = getenv(name);
	if (!val || !*val)
		return -ENOENT;
	snprintf(dst, len, "%s", val);
	return 0;
}

/* Fill @d for @kind; -ENODEV when this machine does not have it. */
static inline int lchan_t_dev_lookup(const char *kind, struct lchan_t_dev *d)
{
	char path[160];

	memset(d, 0, sizeof(*d));
	snprintf(d->kind, sizeof(d->kind), "%s", kind);
	if (lchan_t_getenv(d->dev, sizeof(d->dev), "LCHAN_%s_DEV", kind) ||
	    lchan_t_getenv(d->addr, sizeof(d->addr), "LCHAN_%s_ADDR", kind))
		return -ENODEV;
	lchan_t_getenv(d->addr6, sizeof(d->addr6), "LCHAN_%s_ADDR6", kind);
	lchan_t_getenv(d->spare_netdev, sizeof(d->spare_netdev),
		       "LCHAN_SPARE_%s_NETDEV", kind);
	snprintf(path, sizeof(path), "/sys/class/infiniband/%s", d->dev);
	return access(path, F_OK) ? -ENODEV : 0;
}

/* The variants every fixture runs over. */
#define LCHAN_T_VARIANTS(fixture)			\
	FIXTURE_VARIANT(fixture) { const char *kind; };	\
	FIXTURE_VARIANT_ADD(fixture, rxe) { .kind = "rxe" }; \
	FIXTURE_VARIANT_ADD(fixture, siw) { .kind = "siw" }

/* Setup that SKIPs without the device. */
#define LCHAN_T_NEED_DEV(d, kind) do {					\
	const char *_only = getenv("LCHAN_T_ONLY");			\
									\
	if (_only && *_only && strcmp(_only, kind))			\
		LCHAN_T_SETUP_SKIP("LCHAN_T_ONLY=%s", _only);		\
	if (lchan_t_dev_lookup(kind, d))				\
		LCHAN_T_SETUP_SKIP("no %s device (LCHAN_* environment)", kind); \
} while (0)

static inline int lchan_t_module_loaded(void)
{
	return access("/sys/module/lchan", F_OK) == 0;
}

static inline int lchan_t_insmod(void)
{
	const char *ko = getenv("LCHAN_KO");
	int fd, ret;

	if (!ko)
		return -ENOENT;
	fd = open(ko, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ret = syscall(SYS_finit_module, fd, "", 0);
	ret = ret ? -errno : 0;
	close(fd);
	return ret;
}

static inline int lchan_t_rmmod(void)
{
	return syscall(SYS_delete_module, "lchan", O_NONBLOCK) ? -errno : 0;
}

/*
 * The count of a volume test: @full, divided by LCHAN_T_DIVIDE when set.
 * The debug-kernel lane, where RDMA is 20 to 70 times slower, sets it;
 * the test logs the count it ran.
 */
static inline unsigned lchan_t_count(unsigned full)
{
	const char *v = getenv("LCHAN_T_DIVIDE");
	unsigned long div = v && *v ? strtoul(v, NULL, 10) : 1;

	if (div <= 1)
		return full;
	return full / div ? (unsigned)(full / div) : 1;
}

/* A count a test takes from its environment, or @def when unset. */
static inline unsigned lchan_t_env_uint(const char *name, unsigned def)
{
	const char *v = getenv(name);

	return v && *v ? (unsigned)strtoul(v, NULL, 10) : def;
}

static inline double lchan_t_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Wait up to @secs for @path to exist (@want 1) or be gone (@want 0). */
static inline int lchan_t_wait_path(const char *path, int want, double secs)
{
	double end = lchan_t_now() + secs;

	do {
		if ((access(path, F_OK) == 0) == want)
			return 0;
		usleep(20000);
	} while (lchan_t_now() < end);
	return -ETIMEDOUT;
}

/*
 * Wait until @chan's connection is down (POLLRDHUP or POLLHUP): the
 * seconds it took, or -1 after @secs.
 */
static inline double lchan_t_wait_down(const struct lchan_chan *chan,
				       double secs)
{
	struct pollfd pfd = { .fd = chan->fd, .events = POLLRDHUP };
	double t0 = lchan_t_now();

	while (lchan_t_now() - t0 < secs)
		if (poll(&pfd, 1, 50) > 0 &&
		    (pfd.revents & (POLLRDHUP | POLLHUP)))
			return lchan_t_now() - t0;
	return -1;
}

/*
 * Start argv[0] with stdout and stderr into a fresh file @log, in a
 * process group of its own (a kill of the group ends what it started).
 * The child's pid, or -errno.
 */
static inline pid_t lchan_t_spawn_logged(char *const argv[], const char *log)
{
	pid_t pid = fork();
	int fd;

	if (pid)
		return pid < 0 ? -errno : pid;
	fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		_exit(126);
	dup2(fd, 1);
	dup2(fd, 2);
	setpgid(0, 0);
	execv(argv[0], argv);
	_exit(127);
}

/* Every line of the file @log into the test's output, each after @tag. */
static inline void lchan_t_dump_log(struct __test_metadata *_metadata,
				    const char *tag, const char *log)
{
	char line[512];
	FILE *f = fopen(log, "r");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		TH_LOG("%s: %s", tag, line);
	}
	fclose(f);
}

static inline int lchan_t_read_sysfs(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return -errno;
	n = fread(buf, 1, len - 1, f);
	fclose(f);
	buf[n] = 0;
	while (n && (buf[n - 1] == '\n'))
		buf[--n] = 0;
	return 0;
}

/* Write @val to the file at @path (sysfs, cgroupfs, tracefs); 0 or -errno. */
static inline int lchan_t_write_file(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC), ret = 0;
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, val, strlen(val));
	if (n < 0)
		ret = -errno;
	else if (n != (ssize_t)strlen(val))
		ret = -EIO;
	close(fd);
	if (ret)
		errno = -ret;
	return ret;
}

/* A number in /sys/kernel/lchan/channels/<id>/, or ~0 when unreadable. */
static inline unsigned long long lchan_t_chan_attr(const struct lchan_chan *chan,
						   const char *name)
{
	char path[160], buf[64];

	snprintf(path, sizeof(path), "/sys/kernel/lchan/channels/%u/%s",
		 chan->info.id, name);
	if (lchan_t_read_sysfs(path, buf, sizeof(buf)))
		return ~0ULL;
	return strtoull(buf, NULL, 0);
}


/* Forked children cannot use the harness: they exit with a step number. */
static inline int __attribute__((format(printf, 2, 3)))
lchan_t_child_fail(int step, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "# child step %d: ", step);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return step;
}

/* A child's exit status, or 128 + the signal that ended it. */
static inline int lchan_t_wait_child(pid_t pid)
{
	int status;

	if (waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) :
	       128 + WTERMSIG(status);
}

/* A failed wait: the children it leaves (pid > 0) must not outlive it. */
static inline void lchan_t_kill_children(const pid_t *pid, unsigned n)
{
	unsigned i;

	for (i = 0; i < n; i++)
		if (pid[i] > 0)
			kill(pid[i], SIGKILL);
	for (i = 0; i < n; i++)
		if (pid[i] > 0)
			waitpid(pid[i], NULL, 0);
}

/*
 * Lines of `rdma resource show @kind` ("qp", "cq"): the objects of that
 * kind the devices hold, or -1 without the rdma tool.
 */
static inline int lchan_t_rdma_res_count(const char *kind)
{
	char cmd[64], line[512];
	int n = 0;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "rdma resource show %s 2>/dev/null", kind);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		n++;
	pclose(f);
	return n;
}

/* Entries of the folder @path (sysfs: channels, links); 0 without it. */
static inline unsigned lchan_t_count_dir(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *de;
	unsigned n = 0;

	if (!d)
		return 0;
	while ((de = readdir(d)))
		n += de->d_name[0] != '.';
	closedir(d);
	return n;
}
/*
 * Everything a channel can tell about where it stands, on stderr as TAP
 * diagnostics: the rings as the library sees them and every attribute of
 * its sysfs directory (the kernel's view: posted, held back, starved).
 */
static inline void lchan_t_dump_chan(const char *who,
				     const struct lchan_chan *chan)
{
	char dir[96], path[384], val[96], line[2048];
	struct dirent *de;
	size_t n = 0;
	DIR *d;

	fprintf(stderr, "# %s: chan %u fd %d: sq tail %u published %u khead %u"
		" of %u, rq tail %u published %u khead %u of %u, cq head %u"
		" ktail %u of %u\n", who, chan->info.id, chan->fd,
		chan->sq.tail, chan->sq.published,
		chan->sq.khead ? __atomic_load_n(chan->sq.khead, __ATOMIC_ACQUIRE) : 0,
		chan->sq.entries, chan->rq.tail, chan->rq.published,
		chan->rq.khead ? __atomic_load_n(chan->rq.khead, __ATOMIC_ACQUIRE) : 0,
		chan->rq.entries, chan->cq.head,
		chan->cq.ktail ? __atomic_load_n(chan->cq.ktail, __ATOMIC_ACQUIRE) : 0,
		chan->cq.entries);
	snprintf(dir, sizeof(dir), "/sys/kernel/lchan/channels/%u",
		 chan->info.id);
	d = opendir(dir);
	if (!d) {
		fprintf(stderr, "# %s: %s: %s\n", who, dir, strerror(errno));
		return;
	}
	line[0] = 0;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (lchan_t_read_sysfs(path, val, sizeof(val)))
			continue;
		n += snprintf(line + n, n < sizeof(line) ? sizeof(line) - n : 0,
			      " %s=%s", de->d_name, val);
	}
	closedir(d);
	fprintf(stderr, "# %s: sysfs%s\n", who, line);
}

/*
 * The TCP sockets of this network namespace with their send and receive
 * queues (/proc/net/tcp, tcp6): siw runs each connection over one, so a
 * message that left one channel and never reached the other shows as bytes
 * queued on a socket, or as none.
 */
static inline void lchan_t_dump_tcp(void)
{
	static const char *const files[] = { "/proc/net/tcp", "/proc/net/tcp6" };
	char line[512];
	unsigned i;

	for (i = 0; i < 2; i++) {
		FILE *f = fopen(files[i], "r");

		if (!f)
			continue;
		while (fgets(line, sizeof(line), f))
			fprintf(stderr, "# %s: %s", files[i] + 10, line);
		fclose(f);
	}
}

/*
 * Where each thread of process @pid waits in the kernel (its
 * /proc/PID/task/TID/stack; needs root), on stderr as TAP diagnostics.
 */
static inline void lchan_t_dump_stacks(const char *who, pid_t pid)
{
	char path[320], line[256];
	struct dirent *de;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return;
	while ((de = readdir(d))) {
		FILE *f;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%s/wchan",
			 (int)pid, de->d_name);
		if (lchan_t_read_sysfs(path, line, sizeof(line)))
			line[0] = 0;
		fprintf(stderr, "# %s: thread %s waits in %s:\n", who,
			de->d_name, line[0] ? line : "(running)");
		snprintf(path, sizeof(path), "/proc/%d/task/%s/stack",
			 (int)pid, de->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		while (fgets(line, sizeof(line), f))
			fprintf(stderr, "#   %s", line);
		fclose(f);
	}
	closedir(d);
}

/*
 * Seconds a test may go without progress before it is a stall (default 30;
 * LCHAN_T_STALL_S overrides, e.g. for the debug kernel).  A stall fails in
 * that time, not at the program's limit, and explains itself.
 */
static inline double lchan_t_stall_secs(void)
{
	const char *v = getenv("LCHAN_T_STALL_S");
	double s = v && *v ? strtod(v, NULL) : 0;

	return s > 0 ? s : 30;
}

/*
 * Join @n threads while watching @nprog progress counters (written by
 * those threads).  When none moves for lchan_t_stall_secs(), call @dump
 * and return -ETIMEDOUT with the threads still running (the caller fails
 * the test; the process ends them).  0 once all are joined.
 */
static inline int lchan_t_join_watch(pthread_t *thr, unsigned n,
				     unsigned *const *prog, unsigned nprog,
				     void (*dump)(void *), void *arg)
{
	double stall = lchan_t_stall_secs(), last = lchan_t_now();
	unsigned long long sum = ~0ULL;
	unsigned i, joined = 0;
	char done[64] = { 0 };

	if (n > sizeof(done))
		return -EINVAL;
	while (joined < n) {
		unsigned long long now_sum = 0;

		for (i = 0; i < n; i++)
			if (!done[i] && !pthread_tryjoin_np(thr[i], NULL)) {
				done[i] = 1;
				joined++;
			}
		for (i = 0; i < nprog; i++)
			now_sum += __atomic_load_n(prog[i], __ATOMIC_RELAXED);
		if (now_sum != sum) {
			sum = now_sum;
			last = lchan_t_now();
		} else if (joined < n && lchan_t_now() - last > stall) {
			fprintf(stderr, "# stall: no progress in %.0f s (progress %llu)\n",
				stall, sum);
			if (dump)
				dump(arg);
			return -ETIMEDOUT;
		}
		if (joined < n)
			usleep(50000);
	}
	return 0;
}

/* The kernel's ephemeral port range, from which connects take ports. */
static inline int lchan_t_ephemeral_range(unsigned *low, unsigned *high)
{
	FILE *f = fopen("/proc/sys/net/ipv4/ip_local_port_range", "r");
	int n;

	if (!f)
		return -errno;
	n = fscanf(f, "%u %u", low, high);
	fclose(f);
	return n == 2 ? 0 : -EINVAL;
}

/*
 * A port no other test of this run uses, and below the ephemeral range:
 * a connecting channel elsewhere may hold any port in that range, and a
 * listener on it is then refused.
 */
static inline unsigned lchan_t_port(void)
{
	static unsigned next;
	unsigned low = 32768, high, slots;

	lchan_t_ephemeral_range(&low, &high);
	slots = low > 20008 ? (low - 20000) / 8 : 1;
	return 20000 + (getpid() % slots) * 8 + (next++ % 8);
}

/*
 * A connected pair in one process: a thread accepts while the caller
 * connects.  Both sides defer the establish so @prepare (may be NULL) can
 * register memory and post receives first, which iWARP needs.  On failure
 * neither channel is left open, and the error is the side's that failed
 * first: a connect the peer refused or reset reports why the accept failed.
 */
typedef int (*lchan_t_prepare_fn)(struct lchan_ctx *ctx,
				  struct lchan_chan *chan, void *arg);

struct lchan_t_side {
	struct lchan_ctx *ctx;
	struct lchan_chan *chan;
	struct lchan_listener *lst;
	struct lchan_opts opts;
	lchan_t_prepare_fn prepare;
	void *arg;
	int cancel_fd;		/* eventfd: the connecting side gave up */
	int ret;
};

static inline void *lchan_t_accept_thread(void *p)
{
	struct lchan_t_side *s = p;
	struct pollfd pfd[2] = {
		{ .fd = s->lst->fd, .events = POLLIN },
		{ .fd = s->cancel_fd, .events = POLLIN },
	};

	/* The listener is non-blocking: a blocked accept cannot be undone. */
	do {
		s->ret = poll(pfd, 2, 20000) < 0 ? -errno : 0;
		if (!s->ret && pfd[1].revents)
			s->ret = -ECANCELED;
		if (!s->ret)
			s->ret = lchan_accept(s->lst, &s->opts, s->chan);
	} while (s->ret == -EAGAIN || s->ret == -EINTR);
	if (s->ret)
		return NULL;
	if (s->prepare)
		s->ret = s->prepare(s->ctx, s->chan, s->arg);
	if (!s->ret)
		s->ret = lchan_establish(s->chan, 10000);
	/* A pair that failed leaves no channel open (and none charged). */
	if (s->ret)
		lchan_chan_close(s->chan);
	return NULL;
}

static inline int lchan_t_pair(struct lchan_ctx *sctx, struct lchan_ctx *cctx,
			       const char *host, const struct lchan_opts *opts,
			       struct lchan_chan *srv, struct lchan_chan *cli,
			       lchan_t_prepare_fn prepare, void *sarg,
			       void *carg)
{
	struct lchan_listener lst;
	struct lchan_t_side side = { 0 };
	char port[16];
	bool connected;
	pthread_t thr;
	int ret;

	/* Port 0: the kernel picks one no other channel holds. */
	ret = lchan_listen(sctx, host, "0", 4, LCHAN_FD_NONBLOCK, &lst);
	if (ret)
		return ret;
	snprintf(port, sizeof(port), "%u", lst.addr.port);
	side.cancel_fd = eventfd(0, EFD_CLOEXEC);
	if (side.cancel_fd < 0) {
		lchan_listener_close(&lst);
		return -errno;
	}
	side.ctx = sctx;
	side.chan = srv;
	side.lst = &lst;
	if (opts)
		side.opts = *opts;
	side.opts.flags |= LCHAN_DEFER_ESTABLISH;
	side.prepare = prepare;
	side.arg = sarg;
	if (pthread_create(&thr, NULL, lchan_t_accept_thread, &side)) {
		lchan_listener_close(&lst);
		close(side.cancel_fd);
		return -EAGAIN;
	}

	{
		struct lchan_opts copts = opts ? *opts : (struct lchan_opts){ 0 };

		/* Both ends are lchan: either may send first on iWARP. */
		copts.flags |= LCHAN_DEFER_ESTABLISH | LCHAN_OPEN_EXCHANGE;
		ret = lchan_connect(cctx, host, port, &copts, cli);
		connected = !ret;
		if (!ret && prepare)
			ret = prepare(cctx, cli, carg);
		if (!ret)
			ret = lchan_establish(cli, 10000);
	}
	if (ret) {
		uint64_t one = 1;

		if (connected)
			lchan_chan_close(cli);
		if (write(side.cancel_fd, &one, sizeof(one)) < 0)
			ret = ret ? ret : -errno;
		pthread_join(thr, NULL);
		if (!side.ret)
			lchan_chan_close(srv);
		lchan_listener_close(&lst);
		close(side.cancel_fd);
		if ((ret == -ECONNREFUSED || ret == -ECONNRESET) && side.ret &&
		    side.ret != -ECANCELED)
			ret = side.ret;
		return ret;
	}
	pthread_join(thr, NULL);
	lchan_listener_close(&lst);
	close(side.cancel_fd);
	if (side.ret) {
		lchan_chan_close(cli);
		return side.ret;
	}
	return 0;
}

/*
 * A connected pair of stream channels (LCHAN_FD_STREAM) over @host: a
 * thread accepts while the caller connects; both sockets get @ms as their
 * SO_RCVTIMEO and SO_SNDTIMEO.  -errno on failure, with neither open.
 */
struct lchan_t_stream_accept {
	struct lchan_listener *lst;
	int fd;
};

static inline void *lchan_t_stream_accept_one(void *p)
{
	struct lchan_t_stream_accept *a = p;
	struct pollfd pfd = { .fd = a->lst->fd, .events = POLLIN };

	do {
		a->fd = poll(&pfd, 1, 20000) <= 0 ? -ETIMEDOUT :
			lchan_stream_accept(a->lst, NULL, NULL);
	} while (a->fd == -EAGAIN || a->fd == -EINTR);
	return NULL;
}

static inline void lchan_t_sock_timeouts(int fd, int ms)
{
	struct timeval tv = { ms / 1000, (ms % 1000) * 1000 };

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

static inline int lchan_t_stream_pair(struct lchan_ctx *sctx,
				      struct lchan_ctx *cctx, const char *host,
				      int *srv, int *cli, int ms)
{
	struct lchan_t_stream_accept a = { 0 };
	struct lchan_listener lst;
	pthread_t thr;
	int ret;

	*srv = *cli = -1;
	/* Port 0: the kernel picks one; lst.addr is where it listens. */
	ret = lchan_listen(sctx, host, "0", 4, LCHAN_FD_NONBLOCK, &lst);
	if (ret)
		return ret;
	a.lst = &lst;
	if (pthread_create(&thr, NULL, lchan_t_stream_accept_one, &a)) {
		lchan_listener_close(&lst);
		return -EAGAIN;
	}
	*cli = lchan_stream_connect(cctx, &lst.addr, NULL);
	pthread_join(thr, NULL);
	lchan_listener_close(&lst);
	*srv = a.fd;
	if (*cli < 0 || *srv < 0) {
		ret = *cli < 0 ? *cli : *srv;
		if (*cli >= 0)
			close(*cli);
		if (*srv >= 0)
			close(*srv);
		*cli = *srv = -1;
		return ret;
	}
	lchan_t_sock_timeouts(*srv, ms);
	lchan_t_sock_timeouts(*cli, ms);
	return 0;
}

/*
 * A connect made from a thread (pthread_create(..., lchan_t_peer_connect,
 * peer)) while the test drives the other side: @ctx opened by the caller,
 * the result in @ret; a channel it got is closed at once.
 */
struct lchan_t_peer {
	struct lchan_ctx ctx;
	struct lchan_chan chan;
	const char *host;
	char port[16];
	unsigned timeout_ms;
	int ret;
};

static inline void *lchan_t_peer_connect(void *p)
{
	struct lchan_t_peer *peer = p;
	struct lchan_opts opts = { .timeout_ms = peer->timeout_ms };

	peer->ret = lchan_connect(&peer->ctx, peer->host, peer->port, &opts,
				  &peer->chan);
	if (!peer->ret)
		lchan_chan_close(&peer->chan);
	return NULL;
}

/*
 * The libfabric provider for the fabric tests: 0 when LCHAN_FABRIC names
 * the directory of liblchan-fi.so and lchan is loaded, with
 * FI_PROVIDER_PATH set to it (libfabric reads it once, at its first
 * call); else -1 and why not in @why.
 */
static inline int lchan_t_fabric_provider(char *why, size_t len)
{
	const char *dir = getenv("LCHAN_FABRIC");
	char so[300];

	if (!dir || !*dir) {
		snprintf(why, len, "LCHAN_FABRIC does not name the provider's directory");
		return -1;
	}
	snprintf(so, sizeof(so), "%s/liblchan-fi.so", dir);
	if (access(so, R_OK)) {
		snprintf(why, len, "no %s", so);
		return -1;
	}
	if (!lchan_t_module_loaded()) {
		snprintf(why, len, "lchan not loaded");
		return -1;
	}
	setenv("FI_PROVIDER_PATH", dir, 1);
	return 0;
}

/* @rel resolved against the directory of this program, into @buf. */
static inline void lchan_t_beside_me(char *buf, size_t len, const char *rel)
{
	char exe[PATH_MAX];
	ssize_t n;

	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = 0;
	snprintf(buf, len, "%s/%s", dirname(exe), rel);
}

/* A program the test runs, its stdout into a pipe. */
struct lchan_t_child {
	pid_t pid;
	int out_fd;
};

/* Start @argv[0] with @envp (NULL: this environment), stdout to a pipe. */
static inline int lchan_t_spawn(struct lchan_t_child *c, char *const argv[],
				char *const envp[])
{
	int pfd[2];

	if (pipe(pfd))
		return -1;
	c->pid = fork();
	if (c->pid < 0)
		return -1;
	if (c->pid == 0) {
		dup2(pfd[1], 1);
		close(pfd[0]);
		close(pfd[1]);
		if (envp)
			execve(argv[0], argv, envp);
		else
			execv(argv[0], argv);
		_exit(127);
	}
	close(pfd[1]);
	c->out_fd = pfd[0];
	return 0;
}

/*
 * Its whole stdout into @out (a string, cut to @len - 1 bytes), then its
 * exit status, 128 when a signal ended it, or -1.
 */
static inline int lchan_t_collect(struct lchan_t_child *c, char *out,
				  size_t len)
{
	size_t got = 0;
	ssize_t n;
	int status;

	while (got < len - 1 &&
	       (n = read(c->out_fd, out + got, len - 1 - got)) > 0)
		got += n;
	out[got] = 0;
	close(c->out_fd);
	if (waitpid(c->pid, &status, 0) != c->pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

/* A program's output in the log: each line of @out behind "#   ". */
static inline void lchan_t_show_lines(const char *out)
{
	const char *p = out;

	while (*p) {
		int n = (int)strcspn(p, "\n");

		printf("#   %.*s\n", n, p);
		p += n;
		if (*p)
			p++;
	}
	fflush(stdout);
}

/* Tests that pin several MiB: siw applies RLIMIT_MEMLOCK even to root. */
static inline void lchan_t_raise_memlock(void)
{
	struct rlimit rl = { RLIM_INFINITY, RLIM_INFINITY };

	setrlimit(RLIMIT_MEMLOCK, &rl);
}

/*
 * Become nobody (uid and gid 65534, no groups), with a 1 MiB memlock limit
 * set first, as an unprivileged user's would be.  0 or -1.
 */
static inline int lchan_t_become_nobody(void)
{
	struct rlimit rl = { 1 << 20, 1 << 20 };

	if (setrlimit(RLIMIT_MEMLOCK, &rl) || setgroups(0, NULL) ||
	    setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534))
		return -1;
	return 0;
}

/*
 * One end of a test channel: a context, the channel, and one registered
 * buffer split into receive slots followed by send slots.
 */
struct lchan_t_ep {
	struct lchan_ctx ctx;
	struct lchan_chan chan;
	struct lchan_mr mr;
	uint8_t *buf;
	size_t slot;		/* bytes per slot */
	unsigned nrecv;		/* receive slots, posted at prepare */
	unsigned nsend;		/* send slots */
	unsigned access;	/* MR access; LOCAL_WRITE when 0 */
	bool publish_only;	/* prepare publishes the receives, no ENTER */
	unsigned long long recv_posted;
	bool flushed[2];	/* a flush was reaped: [0] SQ, [1] RQ */
};

static inline uint8_t *lchan_t_recv_slot(struct lchan_t_ep *ep, unsigned i)
{
	return ep->buf + (size_t)(i % ep->nrecv) * ep->slot;
}

static inline uint8_t *lchan_t_send_slot(struct lchan_t_ep *ep, unsigned i)
{
	return ep->buf + ((size_t)ep->nrecv + i % ep->nsend) * ep->slot;
}

static inline int lchan_t_post_recv(struct lchan_t_ep *ep, unsigned i)
{
	struct lchan_rqe *rqe = lchan_get_rqe(&ep->chan);

	if (!rqe)
		return -ENOSPC;
	lchan_prep_recv(rqe, &ep->mr, lchan_t_recv_slot(ep, i), ep->slot, i);
	ep->recv_posted++;
	return 0;
}

/* lchan_t_pair() prepare hook: register the buffer, post every receive. */
static inline int lchan_t_ep_prepare(struct lchan_ctx *ctx,
				     struct lchan_chan *chan, void *arg)
{
	struct lchan_t_ep *ep = arg;
	size_t len = ep->slot * (ep->nrecv + ep->nsend);
	unsigned i;
	int ret;

	/* A new channel: the order check starts afresh. */
	ep->flushed[0] = ep->flushed[1] = false;

	if (!ep->buf) {
		ep->buf = aligned_alloc(4096, (len + 4095) & ~(size_t)4095);
		if (!ep->buf)
			return -ENOMEM;
		memset(ep->buf, 0, len);
	}
	ret = lchan_mr_reg(ctx, chan, ep->buf, len,
			   ep->access ? ep->access : LCHAN_ACCESS_LOCAL_WRITE,
			   &ep->mr);
	if (ret)
		return ret;
	for (i = 0; i < ep->nrecv; i++) {
		ret = lchan_t_post_recv(ep, i);
		if (ret)
			return ret;
	}
	if (ep->publish_only) {
		lchan_publish(chan);
		return 0;
	}
	ret = lchan_submit(chan);
	return ret < 0 ? ret : 0;
}

static inline int lchan_t_ep_pair(struct lchan_t_ep *srv, struct lchan_t_ep *cli,
				  const char *host,
				  const struct lchan_opts *opts)
{
	int ret;

	ret = lchan_ctx_open(&srv->ctx);
	if (ret)
		return ret;
	ret = lchan_ctx_open(&cli->ctx);
	if (ret)
		return ret;
	return lchan_t_pair(&srv->ctx, &cli->ctx, host, opts, &srv->chan,
			    &cli->chan, lchan_t_ep_prepare, srv, cli);
}

static inline void lchan_t_ep_close(struct lchan_t_ep *ep)
{
	if (ep->chan.map || ep->chan.fd > 0)
		lchan_chan_close(&ep->chan);
	if (ep->ctx.fd > 0)
		lchan_ctx_close(&ep->ctx);
	free(ep->buf);
	ep->buf = NULL;
}

/*
 * One queue's completions come in order, as verbs keep them: once a
 * request of a queue was flushed, none of that queue's older requests may
 * still complete successfully after it.  -EPROTO when one does.
 */
static inline int lchan_t_order_check(struct lchan_t_ep *ep,
				      const struct lchan_cqe *cqe)
{
	bool rq = cqe->opcode == LCHAN_CQE_RECV ||
		  cqe->opcode == LCHAN_CQE_RECV_WRITE_IMM;

	if (cqe->opcode == LCHAN_CQE_KEEPALIVE)
		return 0;
	if (cqe->status == LCHAN_CQE_WR_FLUSH_ERR)
		ep->flushed[rq] = true;
	else if (cqe->status == LCHAN_CQE_OK && ep->flushed[rq]) {
		fprintf(stderr, "# %s 0x%llx succeeded after a flush of its queue\n",
			rq ? "receive" : "send",
			(unsigned long long)cqe->user_data);
		return -EPROTO;
	}
	return 0;
}

/*
 * Take the next CQE (copied out), waiting up to @timeout_ms.  -EPROTO
 * when it breaks its queue's order (lchan_t_order_check()).
 */
static inline int lchan_t_reap(struct lchan_t_ep *ep, struct lchan_cqe *out,
			       int timeout_ms)
{
	struct lchan_cqe *cqe;
	int ret;

	ret = lchan_wait_cqe(&ep->chan, &cqe, timeout_ms);
	if (ret)
		return ret;
	*out = *cqe;
	lchan_cqe_seen(&ep->chan);
	return lchan_t_order_check(ep, out);
}

/* The byte at offset @j of test message @i. */
static inline uint8_t lchan_t_pattern(unsigned i, size_t j)
{
	return (uint8_t)(i * 131u + j * 7u + (j >> 8) + 1);
}

static inline void lchan_t_fill(uint8_t *p, unsigned i, size_t len)
{
	size_t j;

	for (j = 0; j < len; j++)
		p[j] = lchan_t_pattern(i, j);
}

/* Offset of the first wrong byte, or -1 when all are right. */
static inline long lchan_t_check(const uint8_t *p, unsigned i, size_t len)
{
	size_t j;

	for (j = 0; j < len; j++)
		if (p[j] != lchan_t_pattern(i, j))
			return (long)j;
	return -1;
}

/*
 * lchan_t_check() until it passes or 2 s went by.  On iWARP a WRITE
 * completes once sent, so the data may land at the peer a little later.
 */
static inline long lchan_t_wait_check(const uint8_t *p, unsigned i,
				      size_t len)
{
	double end = lchan_t_now() + 2;
	long bad;

	while ((bad = lchan_t_check(p, i, len)) != -1 && lchan_t_now() < end)
		usleep(1000);
	return bad;
}

/* Wait up to 2 s for a 32-bit word written by the peer to read @want. */
static inline uint32_t lchan_t_wait_u32(const volatile uint32_t *p,
					uint32_t want)
{
	double end = lchan_t_now() + 2;

	while (*p != want && lchan_t_now() < end)
		usleep(1000);
	return *p;
}

/*
 * The poller pool (lchan_poller.c): its threads, named lchan-poll/<n>.
 * Fills up to @max pids; returns how many there are, or -1.
 */
static inline int lchan_t_poller_pids(pid_t *pids, int max)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d))) {
		char path[300], comm[64];

		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/comm", e->d_name);
		if (lchan_t_read_sysfs(path, comm, sizeof(comm)) ||
		    strncmp(comm, "lchan-poll/", 11))
			continue;
		if (n < max)
			pids[n] = atoi(e->d_name);
		n++;
	}
	closedir(d);
	return n;
}

/* Clock ticks of CPU time (utime + stime) of task @pid, or -1. */
static inline long long lchan_t_task_ticks(pid_t pid)
{
	unsigned long long ut, st;
	char path[64], buf[1024], *p;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	if (lchan_t_read_sysfs(path, buf, sizeof(buf)))
		return -1;
	/* After "pid (comm) ": state is field 3, utime 14, stime 15. */
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u"
			 " %llu %llu", &ut, &st) != 2)
		return -1;
	return (long long)(ut + st);
}

/* The Cpus_allowed_list of task @pid into @buf; 0 or -errno. */
static inline int lchan_t_task_cpus(pid_t pid, char *buf, size_t len)
{
	char path[64], line[256];
	FILE *f;
	int ret = -ENOENT;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Cpus_allowed_list: %255s", line) == 1) {
			snprintf(buf, len, "%s", line);
			ret = 0;
			break;
		}
	fclose(f);
	return ret;
}

#define LCHAN_T_PARAM_DIR "/sys/module/lchan/parameters/"

/* Module parameter @name into @buf (@len bytes); 0 or -errno. */
static inline int lchan_t_get_param(const char *name, char *buf, size_t len)
{
	char path[128];

	snprintf(path, sizeof(path), LCHAN_T_PARAM_DIR "%s", name);
	return lchan_t_read_sysfs(path, buf, len);
}

/* Write module parameter @name; 0 or -errno. */
static inline int lchan_t_set_param(const char *name, const char *val)
{
	char path[128];

	snprintf(path, sizeof(path), LCHAN_T_PARAM_DIR "%s", name);
	return lchan_t_write_file(path, val);
}

/*
 * The poller pool's threads on @pool_cpu, this process (and the threads it
 * starts after) on @own_cpu, or with @own_cpu -1 on every other online CPU.
 * The pool's CPU list before goes to @saved (@len bytes), for
 * lchan_t_set_param("poller_cpus", saved) at teardown.  As an administrator
 * would set it for the test's purpose; -EPERM without root.
 */
static inline int lchan_t_pool_place(char *saved, size_t len, int pool_cpu,
				     int own_cpu)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	char want[16];
	cpu_set_t cpus;
	int cpu;

	if (geteuid())
		return -EPERM;
	if (lchan_t_get_param("poller_cpus", saved, len))
		return -ENOENT;
	snprintf(want, sizeof(want), "%d", pool_cpu);
	if (lchan_t_set_param("poller_cpus", want))
		return -EINVAL;
	CPU_ZERO(&cpus);
	for (cpu = 0; cpu < ncpu; cpu++)
		if (own_cpu < 0 ? cpu != pool_cpu : cpu == own_cpu)
			CPU_SET(cpu, &cpus);
	return sched_setaffinity(0, sizeof(cpus), &cpus) ? -errno : 0;
}

/* lchan_t_pool_place() in a test body: SKIP without root; else it works. */
#define LCHAN_T_POOL_PLACE(saved, pool_cpu, own_cpu) do {		\
	int _ret = lchan_t_pool_place(saved, sizeof(saved), pool_cpu,	\
				      own_cpu);				\
									\
	if (_ret == -EPERM)						\
		SKIP(return, "needs root to place the poller pool");	\
	ASSERT_EQ(0, _ret) TH_LOG("placing the pool: %s", strerror(-_ret)); \
} while (0)

/* The pool on the last CPU and the test on the others: a CPU of its own. */
#define LCHAN_T_POOL_OWN_CPU(saved) do {				\
	long _ncpu = sysconf(_SC_NPROCESSORS_ONLN);			\
									\
	if (_ncpu < 2)							\
		SKIP(return, "needs a CPU for the pool and one for the test"); \
	LCHAN_T_POOL_PLACE(saved, _ncpu - 1, -1);			\
} while (0)

#endif /* LCHAN_TEST_H */
