/* SPDX-License-Identifier: GPL-2.0 */
/*
 * lchan internal header: objects shared between the module's files, and
 * the prototypes of each file in the order kmod/Kbuild builds them.
 *
 * Locks, and what they protect:
 *   lchan_devices_lock	mutex	the list of devices (lchan_dev.c)
 *   dev->lock		mutex	dev->chans, lsts, pds, nr_chans, dying; the
 *				MR list of each PD on it and the release of
 *				its ib_pd and ib_mr objects
 *   ctx->lock		mutex	ctx->pds, setup_done, has_chans, mode
 *   chan->lock		mutex	cm_id, iwport, cq, qp, posting from the
 *				rings (the kernel's SQ/RQ heads, WR slots
 *				taken), establish and teardown
 *   chan->cq_lock	spin	the CQ ring tail and its claims (inflight;
 *				a submit claims a batch in one section and
 *				returns the spares in one more), WR slots
 *				freed, starved flags, stats; always _bh (the
 *				CQ handler runs in softirq or in a
 *				workqueue) and never held across a call into
 *				the device
 *   lst->mutex		mutex	lst->cm_id: close and device removal both
 *				shut the listener down
 *   lst->lock		spin	the backlog of connection requests
 *   lchan_listen_table_lock spin	the listeners set-ups over links
 *				look in (lchan_listen.c)
 *   st->rx_mutex,	mutex	a stream channel's readers, and its writers
 *   st->tx_mutex		(lchan_stream.c), one at a time
 *   st->lock		spin	a stream's lists, counts and credits; always
 *				_bh, taken by its completion handlers
 *   lchan_pool_lock	mutex	the poller threads, their CPUs, which thread
 *				serves which channel (lchan_poller.c)
 *   poller->lock	mutex	poller->chans and the rings' flags words
 *   lchan_link_svc.lock mutex	the link service's cm id, the links
 *				parameter's effect (lchan_link_cm.c)
 *   lchan_links_lock	mutex	the table of links (lchan_link.c)
 *   link->mutex	mutex	a link's cm id, PD, CQ, QP, buffers, device
 *				binding and sysfs directory
 *   link->lock		spin	a link's state, error, pending requests,
 *				request ids, send buffers, counters and
 *				rate; always _bh (the link's CQ handlers
 *				may run in softirq)
 * and rdma_cm's handler lock of each cm_id (rdma_lock_handler(), held
 * while our cm handler runs; rdma_destroy_id() waits for it).
 *
 * Nesting, outer first (each line nests in the one it is indented under):
 *   lchan_pool_lock
 *     poller->lock
 *       chan->lock			the poller only trylocks it
 *         rdma_cm handler lock	accept, establish, rdma_destroy_id()
 *           lst->lock			cm handler of a request not accepted
 *         lchan_devices_lock
 *           dev->lock
 *         ctx->lock
 *           dev->lock
 *         chan->cq_lock
 *         socket lock			binding and releasing chan->iwport
 *         socket spinlock, BHs off	lchan_iwarp_sock_read(), and under it
 *					what siw's receive path takes
 *         lchan_links_lock		connect asks for a link
 *         link->mutex			a QP made without a cm id goes to
 *					RTR on the link's path (lchan_qp.c)
 *   st->rx_mutex or st->tx_mutex
 *     chan->lock			a stream posts
 *       st->lock
 *   lst->mutex
 *     rdma_cm handler lock		rdma_destroy_id() of the listening id
 *   lchan_listen_table_lock
 *     lst->lock			a peer's cancel of a set-up over a link
 *   lchan_link_svc.lock
 *     rdma_cm handler lock		rdma_destroy_id() of the service's id
 *       lchan_links_lock		a peer's link request
 *         link->lock			a link it replaces goes down
 *   link->mutex
 *     rdma_cm handler lock		connect, accept, rdma_destroy_id()
 *       link->lock			the link's cm handler
 *     lchan_devices_lock		binding to the device
 *       dev->lock
 *     ctx->lock			an accepting channel's PD
 *       dev->lock
 *   Device removal and a link's end take dev->lock, lchan_links_lock and
 *   link->mutex one after the other, not nested.
 *   link->lock is innermost: under it only a post to the link's QP.
 * The cm handlers take no mutex of a channel's or a link's: teardown
 * calls rdma_destroy_id() with chan->lock or link->mutex held; a link's
 * works take link->mutex, and are cancelled only without it but for the
 * look, which never takes it.  A channel's works take chan->lock, so they are
 * cancelled only without it; a poller thread takes poller->lock and
 * chan->lock, so it is stopped only with neither held (it never takes
 * lchan_pool_lock, which is held to stop it).
 */
#ifndef LCHAN_H
#define LCHAN_H

#include <linux/kobject.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/wait.h>
#include <linux/xarray.h>
#include <linux/completion.h>
#include <linux/workqueue.h>
#include <linux/socket.h>
#include <linux/file.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>

#include "../uapi/lchan.h"
#include "lchan_compat.h"
#include "lchan_link_wire.h"

/*
 * What a user's call makes the kernel hold is charged to the caller's
 * memory cgroup.  At the cgroup's limit the call fails with -ENOMEM,
 * quietly, rather than waking the cgroup's OOM killer
 * (__GFP_RETRY_MAYFAIL gives up where the killer would be called).
 * What others allocate for the call is checked for first (lchan_charge.c).
 */
#define LCHAN_GFP_USER	(GFP_KERNEL_ACCOUNT | __GFP_RETRY_MAYFAIL | \
			 __GFP_NOWARN)

#define LCHAN_MAX_ENTRIES	4096
#define LCHAN_DEFAULT_ENTRIES	128
#define LCHAN_DEFAULT_BACKLOG	16
#define LCHAN_MAX_BACKLOG	1024
/*
 * What every listener asks of rdma_listen(), whatever its own backlog
 * (which lchan keeps itself): iw_cm holds at most this many connect
 * requests that lchan has not yet seen, and siw mishandles one that iw_cm
 * cannot hold (it puts its listening endpoint once too often, which closes
 * the listening socket).  ib_cm has no such queue.
 */
#define LCHAN_CM_LISTEN_DEPTH	LCHAN_MAX_BACKLOG
#define LCHAN_POLLER_IDLE_MS	1000
#define LCHAN_CONNECT_TIMEOUT_MS	10000
#define LCHAN_MAX_TIMEOUT_MS	600000
/* RC timing of IB and RoCE channels (uapi lchan_rc_params). */
#define LCHAN_ACK_TIMEOUT_DEFAULT	18	/* 4.096 us * 2^18 = 1.07 s */
#define LCHAN_ACK_TIMEOUT_MAX		31
#define LCHAN_RETRY_COUNT_DEFAULT	6	/* rxe reads 7 as unbounded */
#define LCHAN_RETRY_COUNT_MAX		7
/* IB/RoCE: 7 waits for a receive without bound, as a socket would. */
#define LCHAN_RNR_RETRY_COUNT		7
/* READs and atomics in flight each way; rdma_cm's field is a u8. */
#define LCHAN_RD_ATOMIC_MAX		16
#define LCHAN_RESOLVE_TIMEOUT_MS	2000
/* Resolutions again from a port TCP chose (lchan_iwarp_port.c). */
#define LCHAN_IWARP_PORT_TRIES	8
/* After the peer's disconnect, how long sends in flight may still complete. */
#define LCHAN_CM_DISCONNECT_LINGER_MS	100
/* After completions, ask a device that can drop CQ events again (siw). */
#define LCHAN_CQ_RECHECK_MS	10
/* How often an accepted iWARP channel looks again at its socket. */
#define LCHAN_PEER_FIRST_LOOK_MS	200
/*
 * Requests of the kernel's own beside the ring's: the drain marker of each
 * queue at teardown, the iWARP opening exchange (lchan_iwarp.c), three per
 * channel and at most two on one queue, and one keepalive probe on the SQ
 * (lchan_keepalive.c).
 */
#define LCHAN_QP_OWN_PER_QUEUE	4
#define LCHAN_CQ_OWN		6

#define LCHAN_FEATURES	(LCHAN_FEATURE_SEND | LCHAN_FEATURE_SEND_IMM | \
			 LCHAN_FEATURE_IPV6 | LCHAN_FEATURE_ENTER_WAIT | \
			 LCHAN_FEATURE_POLL | LCHAN_FEATURE_WRITE | \
			 LCHAN_FEATURE_READ | LCHAN_FEATURE_WRITE_IMM | \
			 LCHAN_FEATURE_ATOMIC | LCHAN_FEATURE_MULTI_SGE | \
			 LCHAN_FEATURE_UNSIGNALED | LCHAN_FEATURE_FENCE | \
			 LCHAN_FEATURE_POLLER | LCHAN_FEATURE_READ_FENCE | \
			 LCHAN_FEATURE_DIRECT | LCHAN_FEATURE_STREAM)

/*
 * Steps of a channel's life that tracepoint lchan_chan_step marks: from
 * the connect or accept call to the file, and from the close to the
 * channel's end.  The cm events in between have their own tracepoint.
 */
enum lchan_step {
	LCHAN_STEP_ALLOC = 1,		/* connect or accept began */
	LCHAN_STEP_BIND,		/* address known: PD, QP, CQ, rings */
	LCHAN_STEP_QP_READY,		/* QP, CQ and rings made */
	LCHAN_STEP_FD,			/* the channel has its file */
	LCHAN_STEP_CLOSE,		/* the last user is gone */
	LCHAN_STEP_DISCONNECTED,	/* rdma_disconnect() returned */
	LCHAN_STEP_DRAINED,		/* the QP's work is flushed */
	LCHAN_STEP_DESTROYED,		/* QP, CQ, cm id, rings freed */
};

/*
 * How a channel's rings reach the device: ENTER rings the doorbell, a pool
 * thread polls the rings (the context's choice, lchan_poller.c), or the
 * caller polls a CQ without events (the channel's, lchan_direct.c).
 */
enum lchan_mode {
	LCHAN_MODE_DOORBELL = 0,
	LCHAN_MODE_POLLER,
	LCHAN_MODE_DIRECT,
};

/*
 * What one RDMA driver needs of lchan that the verbs do not say, an entry
 * of lchan_quirk.c's table.
 */
struct lchan_quirk {
	enum rdma_driver_id driver_id;	/* the key: ib_device ops.driver_id */
	bool cq_recheck;		/* may drop a CQ event */
	enum ib_poll_context cq_poll;	/* how our CQs are polled */
};

struct lchan_channel;
struct lchan_stream;

/*
 * What a transport does beyond the generic path, chosen when a channel
 * binds to its device (chan->tp, lchan_transport.c).  IB and RoCE need
 * nothing of their own; iWARP's table is in lchan_iwarp.c.  A NULL
 * operation does nothing and succeeds.
 */
struct lchan_transport_ops {
	u64 features_off;		/* LCHAN_FEATURE_* it cannot offer */
	bool rc_timing;			/* has ACK timeout and retry count */
	bool probe_by_read;		/* keepalive probes with a READ */
	/* Whether a listener's connection request asks for the exchange. */
	bool (*request_wants)(const struct rdma_conn_param *conn);
	/* Before the QP: what connect's @flags ask of it.  lock held. */
	void (*choose)(struct lchan_channel *chan, u32 flags);
	/* The QP is made and nothing is posted yet.  lock held. */
	int (*prepare_qp)(struct lchan_channel *chan);
	/* Connect's and accept's connection parameters. */
	void (*conn_param)(struct lchan_channel *chan,
			   struct rdma_conn_param *param);
	/* ESTABLISHED: 0 when the peer's reply suits.  cm handler. */
	int (*check_reply)(struct lchan_channel *chan,
			   const struct rdma_conn_param *conn);
	/* The channel is connected.  cm handler. */
	void (*connected)(struct lchan_channel *chan);
	/* A submit on a connected channel, before the SQ.  lock held. */
	void (*submit)(struct lchan_channel *chan);
	/* Whether the SQ waits for the transport; changes under lock. */
	bool (*sq_held)(const struct lchan_channel *chan);
	/* Connect and establish, once connected: until the SQ opens. */
	int (*wait_open)(struct lchan_channel *chan, unsigned long deadline);
	/* A connecting id resolved: hold its local port.  lock held. */
	int (*hold_port)(struct lchan_channel *chan);
	/*
	 * The cm cannot withdraw a request in flight: the id's teardown
	 * waits until the provider answers it.
	 */
	bool request_held;
	/* The device's connect charges the caller's cgroup (lchan_charge.c). */
	bool connect_charges;
};

/* An RDMA device as lchan sees it: /sys/kernel/lchan/devices/<name>. */
struct lchan_dev {
	struct kobject kobj;		/* lifetime of this struct */
	struct ib_device *ibdev;
	struct list_head node;		/* lchan_devices */
	struct mutex lock;		/* chans, lsts, pds, links */
	struct list_head chans;
	struct list_head lsts;
	struct list_head pds;
	struct list_head links;		/* lchan_link.c */
	bool dying;			/* under lock: no new users */
	u32 nr_chans;			/* under lock */
	const struct lchan_quirk *quirk;	/* its driver's (lchan_quirk.c) */
	bool post_bh_off;		/* post with BHs disabled (lchan_compat.h) */
	/*
	 * Each port's largest message, read once: a port query takes the
	 * RTNL lock on Ethernet ports and may log, too slow for a connect.
	 */
	u32 port_max_msg[];		/* index: port number */
};

/*
 * A process's context (lchan_ctx.c), behind its /dev/lchan file
 * (lchan_ctl.c): owner of PDs and MRs.
 */
struct lchan_context {
	struct kref ref;
	enum lchan_mode mode;		/* doorbell or poller; before chans */
	u32 poll_idle_ms;		/* poller mode: spin after work */
	bool setup_done;		/* under lock */
	bool has_chans;			/* under lock */
	struct mm_struct *mm;		/* owner; grabbed, for identity */
	pid_t tgid;
	char comm[TASK_COMM_LEN];	/* the owner's program */
	struct mutex lock;		/* pds */
	struct list_head pds;
	struct xarray mrs;		/* handle -> struct lchan_region */
};

/* One protection domain per (context, device). */
struct lchan_pd {
	struct kref ref;		/* ctx list + each MR + each chan */
	struct lchan_context *ctx;	/* not counted: ctx outlives it */
	struct lchan_dev *dev;		/* counted */
	struct ib_pd *ibpd;		/* NULL once the device is gone */
	struct list_head ctx_node;	/* ctx->pds */
	struct list_head dev_node;	/* dev->pds */
	struct list_head mrs;		/* under dev->lock */
};

struct lchan_region {
	struct kref ref;		/* handle table + work in flight */
	struct lchan_pd *pd;		/* counted */
	struct ib_mr *ibmr;		/* NULL once revoked */
	struct list_head pd_node;	/* pd->mrs */
	u64 addr;
	u64 length;
	u32 access;			/* LCHAN_ACCESS_* */
	u32 lkey;
	struct work_struct free_work;	/* dereg needs process context */
	struct rcu_head rcu;		/* lookups run under RCU */
};

#define LCHAN_MAX_SGE	16
/*
 * The SGE lists of the requests one post call hands the device.  A device
 * copies them into its own queue before the call returns, so they live in
 * one small array per channel, not in every WR slot; a batch whose lists
 * do not fit is posted in more than one call.
 */
#define LCHAN_POST_SGES	64

/* Kernel side of one posted work request. */
struct lchan_wr {
	struct ib_cqe cqe;
	u64 user_data;
	u8 opcode;			/* LCHAN_CQE_* */
	u8 num_sge;
	bool signaled;			/* the device will complete it */
	bool hidden;			/* signaled only for reclaim: no CQE */
	bool completed;			/* CQE written, references dropped */
	u32 length;			/* bytes over all SGEs */
	u32 ring_idx;			/* its first entry's index in the ring */
	union {
		struct ib_rdma_wr rdma;	/* .wr is the ib_send_wr of any op */
		struct ib_atomic_wr atomic;
		struct ib_recv_wr recv;
	};
	struct ib_sge *sge;		/* in ring.post_sge until posted */
	struct lchan_region *mr[LCHAN_MAX_SGE];	/* references while posted */
};

/*
 * One submission queue of a ring (the SQ or the RQ): its index words in
 * the mapping, the kernel's copy of its head, and a WR slot per entry
 * (lchan_flow.c says how the slots are counted).
 */
struct lchan_queue {
	u32 *head, *tail;		/* in the mapping */
	u32 *posted;			/* in the mapping; RQ only, else NULL */
	u32 entries;
	u32 head_k;			/* kernel copy of *head; under chan->lock */
	u32 answered;			/* head_k past this take's last reject */
	/*
	 * Flushes wait for the device's completions of this queue: set by a
	 * taker under cq_lock, cleared under chan->lock once they are written.
	 */
	bool deferred;
	struct lchan_wr *wr;		/* entries slots */
	u32 wr_post, wr_done;		/* taker, handler; released, acquired */
	bool starved;			/* under cq_lock: entries wait for slots */
};

/*
 * The shared ring mapping and the kernel's private state for it.  Each index
 * in the mapping has one writer; the kernel keeps its own indices here and
 * never reads them back from the mapping.  The SQE and RQE arrays stay here,
 * typed: only lchan_wr.c reads them, each array with its own parser.
 */
struct lchan_ring {
	void *mem;			/* vmap() of pages, mapped by the app */
	size_t size;
	struct page **pages;		/* charged to the caller's memcg */
	unsigned int nr_pages;
	struct lchan_chan_info info;	/* offsets, filled at setup */

	struct lchan_queue sq, rq;
	struct ib_sge *post_sge;	/* LCHAN_POST_SGES; under chan->lock */
	struct lchan_sqe *sqes;
	struct lchan_rqe *rqes;

	u32 *cq_head, *cq_tail;
	struct lchan_cqe *cqes;
	u32 cq_entries;
	u32 cq_tail_k;			/* under chan->cq_lock */
	u32 inflight;			/* under cq_lock: CQ slots claimed */
};

struct lchan_stats {
	u64 send_ops, send_bytes;
	u64 recv_ops, recv_bytes;
	u64 err_cqes;
	u64 enters;
	u64 cq_recovered;		/* under chan->lock: dropped events */
};

/* rdma_cm ids point back at one of these. */
enum lchan_cm_kind {
	LCHAN_CM_CHAN = 1,
	LCHAN_CM_LISTENER,
	LCHAN_CM_LINK,			/* lchan_link_cm.c's handler */
	LCHAN_CM_LINK_SERVICE,
};

/*
 * The connection as the connect pipeline (lchan_connect.c) sets it up and
 * the cm handler (lchan_cm.c) reports on it.
 */
struct lchan_conn {
	bool passive;			/* accepted, not connected */
	bool established_once;
	bool was_connected;		/* ESTABLISHED came; before done */
	/*
	 * rdma_connect or rdma_accept is out and the cm handler has not
	 * reported how it went; cleared before chan->wq is woken.
	 */
	bool in_flight;
	struct work_struct end_work;	/* the end, once the request is answered */
	/* Set-up handshake with the cm handler. */
	struct completion done;
	int status;			/* written before complete() */
	u32 remote_qpn;
	struct sockaddr_storage local, remote;
	u32 port_num;
	/*
	 * Set up over a link, not through rdma_cm (lchan_link_chan.c): the
	 * channel has no cm id once connected.  Fixed before sysfs shows it.
	 */
	bool over_link;
	struct lchan_link *link;	/* counted until established, or NULL */
	u32 psn;			/* over a link: our starting PSN */
	u8 retry, rnr_retry, rd_atomic;	/* over a link: for RTS */
	u32 sq_room, rq_room;		/* requests the QP was made for */
	/* In force on IB/RoCE, 0 on iWARP; under lock, READ_ONCE in sysfs. */
	u8 ack_timeout;
	u8 retry_count;
};

/* What the device offers the channel, fixed when it binds. */
struct lchan_caps {
	u32 max_msg_size;
	u32 max_send_sge, max_recv_sge, max_read_sge;
	u32 empty_lkey;			/* the PD's: a zero-length READ's SGE */
	u64 features;			/* LCHAN_FEATURE_* on this device */
};

/*
 * A channel's parts.  Each is set up by its file's lchan_<file>_init() and
 * stopped by its lchan_<file>_stop(), both called from lchan_parts.c only;
 * no other file touches its members, but for sysfs, which reads them.
 */

/*
 * Keepalive (lchan_keepalive.c).  ms is set before the channel connects
 * and read lockless; heard is written by every completion and read by the
 * keepalive work, a plain stamp.
 */
struct lchan_keepalive {
	u32 ms;				/* 0: off */
	unsigned long heard;		/* jiffies; READ/WRITE_ONCE */
	unsigned long looked;		/* jiffies of the last look; work */
	bool probing;			/* a probe is out: release/acquire */
	unsigned long flags;		/* LCHAN_KA_* bits */
	u64 probes;			/* under lock, read lockless */
	struct ib_cqe cqe;
	struct delayed_work work;
};

/* iWARP opening exchange (lchan_iwarp.c); cqe for all of it. */
struct lchan_iwarp_open {
	bool exchange;			/* runs it; set before the QP */
	struct ib_cqe cqe;
	bool to_send;			/* active: first SEND unposted; lock */
	bool heard;			/* the peer's first: release/acquire */
	bool sq_held;			/* SQ waits for the exchange; lock */
	u32 reads;			/* passive: reads that found data */
	struct delayed_work look_work;	/* passive: reads the socket */
};

/* Direct polling (lchan_direct.c). */
struct lchan_direct {
	struct delayed_work look_work;	/* polls while poll(2) waits */
};

/* A CQ that may drop events (lchan_quirk.c). */
struct lchan_cq_recheck {
	struct delayed_work work;
	u32 handled;			/* completions */
	u32 mark;			/* handled when the work was queued */
};

/* Membership of the poller pool (lchan_poller.c). */
struct lchan_pool_member {
	struct lchan_poller *poller;	/* pool thread; READ/WRITE_ONCE */
	struct list_head node;		/* poller->chans */
	u64 ns;				/* pool CPU time; READ/WRITE_ONCE */
	u32 sq_seen, rq_seen;		/* heads at the pool's last look */
};

struct lchan_channel {
	enum lchan_cm_kind kind;	/* first: id->context dispatch */
	struct kobject kobj;		/* lifetime; sysfs channels/<id> */
	u32 id;
	bool sysfs_added;
	struct lchan_context *ctx;	/* counted */
	struct lchan_dev *dev;		/* counted, once known */
	struct lchan_pd *pd;		/* counted, once known */
	const struct lchan_transport_ops *tp;	/* the device's, once bound */
	struct list_head dev_node;	/* dev->chans, under dev->lock */
	pid_t tgid;			/* the owner, set before sysfs */
	char comm[TASK_COMM_LEN];	/* its program */

	struct mutex lock;		/* resources, posting, teardown */
	struct rdma_cm_id *cm_id;
	struct socket *iwport;		/* lchan_iwarp_port.c */
	struct ib_cq *cq;
	struct ib_qp *qp;
	int state;			/* enum lchan_state; READ/WRITE_ONCE */
	enum lchan_mode mode;		/* the context's; direct before the CQ */
	struct lchan_conn conn;
	struct lchan_caps caps;

	/* The channel's parts, each the business of its own file. */
	struct lchan_keepalive ka;
	struct lchan_iwarp_open iw;
	struct lchan_direct direct;
	struct lchan_cq_recheck recheck;
	struct lchan_pool_member pool;

	wait_queue_head_t wq;
	spinlock_t cq_lock;
	struct work_struct repost_work;	/* posts SQEs that waited */
	struct lchan_ring ring;
	/* under cq_lock (a stream channel's: st->lock), read lockless */
	struct lchan_stats stats;
	/* A stream channel's byte stream (lchan_stream.c); under lock. */
	struct lchan_stream *stream;
};

/* A pending connection request waiting in a listener's backlog. */
struct lchan_conn_req {
	struct list_head node;
	struct rdma_cm_id *cm_id;	/* NULL for a channel over a link */
	struct lchan_channel *chan;	/* set up over a link: in RTR */
	struct lchan_link *link;	/* its link, counted */
	u64 link_req;			/* the peer's request id */
	u32 remote_qpn;			/* from the request (IB/RoCE) */
	bool open_exchange;		/* iWARP: the request has the hello */
	bool stream;			/* the request is a stream's */
	bool dead;			/* peer gave up: destroy on accept */
};

struct lchan_listen_point {
	enum lchan_cm_kind kind;	/* first: id->context dispatch */
	struct kref ref;
	struct lchan_context *ctx;	/* counted */
	struct mutex mutex;		/* cm_id: close vs device removal */
	struct rdma_cm_id *cm_id;
	struct lchan_dev *dev;		/* bound device, counted, or NULL */
	struct list_head dev_node;
	spinlock_t lock;		/* backlog */
	struct list_head backlog;
	u32 nr_backlog, max_backlog;
	bool dead;			/* device gone or closing */
	bool v6only;			/* an IPv6 wildcard hears no IPv4 */
	wait_queue_head_t wq;
	/* In the table set-ups over links look in (lchan_listen.c). */
	struct list_head table_node;
	struct sockaddr_storage addr;	/* bound: address and port */
};

/* What a channel set up over a link knows of the peer's QP. */
struct lchan_qp_peer {
	u32 qpn;
	u32 psn;			/* its starting send PSN */
	u8 mtu;				/* enum ib_mtu */
	u8 rd_in;			/* READs it may have toward us */
};

/*
 * Links (Documentation/link.md): one RC connection per local and peer
 * address between the lchan modules of two machines, for channel set-up.
 * The bounds of one link's messages, each side's:
 */
#define LCHAN_LINK_MAX		1024	/* links of the module, both roles */
#define LCHAN_LINK_PENDING	32	/* our requests awaiting a reply */
#define LCHAN_LINK_INREQS	32	/* the peer's set-ups in process */
#define LCHAN_LINK_REPLIES	32	/* our replies in flight */
#define LCHAN_LINK_SENDS	(LCHAN_LINK_PENDING + LCHAN_LINK_REPLIES)
/* The peer's requests and replies in flight toward us. */
#define LCHAN_LINK_RECVS	(LCHAN_LINK_PENDING + LCHAN_LINK_REPLIES)
#define LCHAN_LINK_BUF		256	/* bytes per send or receive buffer */
#define LCHAN_LINK_RATE		20000	/* the peer's requests a second */
#define LCHAN_LINK_BURST	32	/* ... saved up at most */
#define LCHAN_LINK_LOOK_MS	1000	/* keepalive and idle look */
/* 4.096 us * 2^15 = 134 ms, sent again 6 times: about 0.94 s. */
#define LCHAN_LINK_ACK_TIMEOUT	15
#define LCHAN_LINK_RETRY_COUNT	6
#define LCHAN_LINK_PORT_DEFAULT	7471	/* rdma_cm's RDMA_PS_IB space */
#define LCHAN_LINK_IDLE_MS_DEFAULT	600000

/* Forward only, but refused may go down and nothing else comes back. */
enum lchan_link_state {
	LCHAN_LINK_RESOLVING = 1,	/* active: address and route */
	LCHAN_LINK_CONNECTING,		/* active: rdma_connect sent */
	LCHAN_LINK_ACCEPTING,		/* passive: a peer's request */
	LCHAN_LINK_UP,
	LCHAN_LINK_REFUSED,		/* active: the peer cannot; kept */
	LCHAN_LINK_DOWN,		/* released; leaving the table */
};

/* One request of ours awaiting its reply (lchan_link_msg.c). */
struct lchan_link_pending {
	u64 id;
	u8 type;			/* the request's */
	bool done;			/* under link->lock; READ_ONCE to wait */
	int status;			/* 0: the reply is in reply */
	u64 sent_ns;
	struct lchan_link_msg reply;
};

/* A send or receive buffer of a link: part of one DMA mapping. */
struct lchan_link_buf {
	struct ib_cqe cqe;
	void *va;
	u64 dma;
};

/* A link's buffers (lchan_link_msg.c); made and freed under link->mutex. */
struct lchan_link_ring {
	void *rx_mem, *tx_mem;
	u64 rx_dma, tx_dma;
	bool rx_mapped, tx_mapped;
	u32 lkey;			/* the link PD's local_dma_lkey */
	struct lchan_link_buf rx[LCHAN_LINK_RECVS];
	struct lchan_link_buf tx[LCHAN_LINK_SENDS];
};

/* Counted under link->lock, read lockless in sysfs. */
struct lchan_link_stats {
	u64 setups_done, setups_failed;
	u64 refused;			/* messages refused, requests not served */
	u64 stale;			/* replies and cancels that came late */
};

struct lchan_link {
	enum lchan_cm_kind kind;	/* first: id->context dispatch */
	struct kobject kobj;		/* lifetime; sysfs links/<id> */
	u32 id;				/* in the table, once published */
	bool active;			/* made here; else accepted */
	bool published;			/* under lchan_links_lock */
	int sysfs;			/* under mutex: LCHAN_LINK_SYSFS_* */
	/* Fixed before the link is published; ports 0. */
	struct sockaddr_storage local, peer;

	struct mutex mutex;		/* what follows, to the lock */
	struct rdma_cm_id *cm_id;
	struct lchan_dev *dev;		/* counted till release; WRITE_ONCE */
	u32 port_num;			/* READ_ONCE in sysfs */
	struct list_head dev_node;	/* dev->links, under dev->lock */
	struct ib_pd *pd;
	struct ib_cq *cq;
	struct ib_qp *qp;
	struct lchan_link_ring *ring;

	spinlock_t lock;		/* _bh; what follows, to the works */
	int state;			/* enum lchan_link_state; READ_ONCE */
	int error;			/* why it left up, or 0 */
	u8 version;			/* the hello's; before up, READ_ONCE */
	u64 next_id;			/* our next request's id */
	u64 peer_id;			/* the peer's last request's id */
	struct lchan_link_pending *pending[LCHAN_LINK_PENDING];
	u32 nr_pending;			/* WRITE_ONCE: waiters read it */
	struct lchan_link_pending echo;	/* the keepalive's */
	bool echo_out;			/* echo is pending */
	DECLARE_BITMAP(tx_busy, LCHAN_LINK_SENDS);
	u32 tokens;			/* of the peer's request rate */
	u64 refilled_ns;		/* when the tokens were last refilled */
	u32 users;			/* our requests in flight */
	u32 inreqs;			/* the peer's set-ups in process here */
	struct list_head inreq_list;	/* ... waiting for inreq_work */
	struct lchan_link_stats stats;
	/* The peer's path, from the link's cm id once up. */
	u8 peer_gid[16];
	u16 peer_lid;

	unsigned long used;		/* jiffies of the last use; READ/WRITE_ONCE */
	unsigned long heard;		/* of the last receive; READ/WRITE_ONCE */
	bool heard_once;		/* the peer spoke; READ/WRITE_ONCE */
	unsigned long up_at;		/* jiffies it came up; look only */
	unsigned long looked;		/* of the last look; look only */
	unsigned long refused_at;	/* of its refusal; look only */
	u32 rtt_us;			/* the last echo's; READ/WRITE_ONCE */
	wait_queue_head_t wq;		/* replies, room, state */
	unsigned long events;		/* LCHAN_LINK_EV_* for the work */
	struct work_struct work;	/* steps under mutex */
	struct delayed_work look;	/* keepalive, idle and refusal expiry */
	/* The peer's set-ups and cancels, in their order (lchan_link_msg.c). */
	struct work_struct inreq_work;
};

/* What the link's work is asked to do (link->events bits). */
enum {
	LCHAN_LINK_EV_START,		/* active: resolve the peer */
	LCHAN_LINK_EV_ROUTE,		/* active: route resolved, connect */
	LCHAN_LINK_EV_ACCEPT,		/* passive: accept the peer's request */
	LCHAN_LINK_EV_END,		/* refused or down: tear down */
};

enum {
	LCHAN_LINK_SYSFS_NONE = 0,
	LCHAN_LINK_SYSFS_ADDED,
	LCHAN_LINK_SYSFS_GONE,		/* never again */
};

#define lchan_dbg_link(link, fmt, ...) \
	pr_debug("LINK[%u] %s: " fmt, (link)->id, __func__, ##__VA_ARGS__)

static inline struct lchan_link *to_lchan_link(struct kobject *kobj)
{
	return container_of(kobj, struct lchan_link, kobj);
}

/*
 * One ioctl call as its handler sees it (lchan_ioctl.c).  A command has
 * one name: its handler is lchan_ioctl_<command>(), its argument check
 * lchan_ioctl_<command>_check() and its outcome hook
 * lchan_ioctl_<command>_done(), and they sit in the file of the object
 * the command works on: the one exception to the rule that a function's
 * prefix names its file, so that a uapi struct, a kernel handler and a
 * library call never share a name.
 */
struct lchan_ucmd {
	struct file *file;		/* the file the ioctl came on */
	void __user *ubuffer;		/* the caller's argument */
	u32 user_size;			/* its size field at copy-in */
	u32 size;			/* the kernel's struct */
	void *cmd;			/* the argument, copied in */
};

/* Every ioctl argument struct: the dispatcher's buffer holds any. */
union lchan_ioctl_buf {
	struct lchan_info info;
	struct lchan_ctx_setup_args ctx_setup;
	struct lchan_mr_reg_args mr_reg;
	struct lchan_mr_dereg_args mr_dereg;
	struct lchan_listen_args listen;
	struct lchan_connect_args connect;
	struct lchan_accept_args accept;
	struct lchan_establish_args establish;
	struct lchan_chan_info chan_info;
	struct lchan_enter_args enter;
};

/*
 * A row of a file type's ioctl table.  @check, if set, validates the
 * argument alone and runs before the owner check of an @owner_only
 * command; @done, if set, sees the outcome of every call whose argument
 * was copied in.
 */
struct lchan_ioctl_op {
	unsigned int size;		/* the kernel's struct */
	unsigned int min_size;		/* the first released layout */
	unsigned int ioctl_num;
	bool owner_only;		/* current->mm must be the context's */
	int (*check)(const struct lchan_ucmd *ucmd);
	long (*execute)(struct lchan_ucmd *ucmd);
	void (*done)(const struct lchan_ucmd *ucmd, long ret);
};

/*
 * A row for command @_ioctl run by @_fn, whose argument is @_struct and
 * whose first released layout ended with member @_last.  More members of
 * struct lchan_ioctl_op may follow as designated initializers.
 */
#define LCHAN_IOCTL_OP(_ioctl, _fn, _struct, _last, ...) {		\
	.size = sizeof(_struct) +					\
		BUILD_BUG_ON_ZERO(sizeof(union lchan_ioctl_buf) <	\
				  sizeof(_struct)),			\
	.min_size = offsetofend(_struct, _last),			\
	.ioctl_num = _ioctl,						\
	.execute = _fn,							\
	__VA_ARGS__							\
}

/* A command only the context's owner may run; @_check comes first. */
#define LCHAN_IOCTL_OWNER_OP(_ioctl, _check, _fn, _struct, _last, ...)	\
	LCHAN_IOCTL_OP(_ioctl, _fn, _struct, _last,			\
		       .owner_only = true, .check = _check, __VA_ARGS__)

#define lchan_dbg_chan(chan, fmt, ...) \
	pr_debug("CHAN[%u] %s: " fmt, (chan)->id, __func__, ##__VA_ARGS__)

static inline struct lchan_channel *to_lchan_channel(struct kobject *kobj)
{
	return container_of(kobj, struct lchan_channel, kobj);
}

static inline struct lchan_dev *to_lchan_dev(struct kobject *kobj)
{
	return container_of(kobj, struct lchan_dev, kobj);
}

/* lchan_cq.c */
void lchan_cq_free(struct ib_cq *cq);
void lchan_cq_wait_frees(void);
int lchan_cq_init(void);
void lchan_cq_exit(void);

/* lchan_wq.c */
extern struct workqueue_struct *lchan_wq;
int lchan_wq_init(void);
void lchan_wq_exit(void);

/* lchan_dev.c */
struct lchan_dev *lchan_dev_alloc(struct ib_device *ibdev);
void lchan_dev_publish(struct lchan_dev *dev);
void lchan_dev_retire(struct lchan_dev *dev);
struct lchan_dev *lchan_dev_get(struct ib_device *ibdev);
void lchan_dev_put(struct lchan_dev *dev);
int lchan_dev_join(struct lchan_dev *dev, struct list_head *node,
		   struct list_head *list);
int lchan_dev_add_chan(struct lchan_dev *dev, struct lchan_channel *chan,
		       struct lchan_pd *pd);
void lchan_dev_del_chan(struct lchan_channel *chan);

/* lchan_ioctl.c */
long lchan_ioctl_dispatch(struct file *file, unsigned int cmd,
			  unsigned long arg, const struct lchan_ioctl_op *ops,
			  size_t nr_ops, struct lchan_context *owner);
long lchan_ioctl_respond(struct lchan_ucmd *ucmd);

/* lchan_sysfs.c */
int lchan_sysfs_init(void);
void lchan_sysfs_exit(void);
int lchan_sysfs_add_dev(struct lchan_dev *dev);
void lchan_sysfs_del_dev(struct lchan_dev *dev);
int lchan_sysfs_add_chan(struct lchan_channel *chan);
void lchan_sysfs_del_chan(struct lchan_channel *chan);
const char *lchan_sysfs_state_name(int state);
int lchan_sysfs_add_link(struct lchan_link *link);
void lchan_sysfs_del_link(struct lchan_link *link);

/* lchan_ctx.c */
struct lchan_context *lchan_ctx_new(void);
void lchan_ctx_put(struct lchan_context *ctx);
bool lchan_ctx_owned(const struct lchan_context *ctx);
struct lchan_pd *lchan_ctx_get_pd(struct lchan_context *ctx,
				  struct lchan_dev *dev);
void lchan_ctx_put_pd(struct lchan_pd *pd);
void lchan_ctx_revoke_pds(struct lchan_dev *dev);
void lchan_ctx_mode(struct lchan_context *ctx, enum lchan_mode *mode,
		    u32 *idle_ms);
int lchan_ctx_set_mode(struct lchan_context *ctx, enum lchan_mode mode,
		       u32 idle_ms);
enum lchan_mode lchan_ctx_fix_mode(struct lchan_context *ctx);

/* lchan_ctl.c */
extern const struct file_operations lchan_ctl_fops;
long lchan_ioctl_info(struct lchan_ucmd *ucmd);
long lchan_ioctl_ctx_setup(struct lchan_ucmd *ucmd);

/* lchan_region.c */
void lchan_region_put(struct lchan_region *mr);
struct lchan_region *lchan_region_lookup(struct lchan_context *ctx,
					 u32 handle);
void lchan_region_drop_all(struct lchan_context *ctx);
void lchan_region_revoke_pd(struct lchan_pd *pd);

/* lchan_mr.c */
int lchan_ioctl_mr_reg_check(const struct lchan_ucmd *ucmd);
long lchan_ioctl_mr_reg(struct lchan_ucmd *ucmd);
void lchan_ioctl_mr_reg_done(const struct lchan_ucmd *ucmd, long ret);
int lchan_ioctl_mr_dereg_check(const struct lchan_ucmd *ucmd);
long lchan_ioctl_mr_dereg(struct lchan_ucmd *ucmd);

/* lchan_chan.c */
void lchan_chan_set_owner(struct lchan_channel *chan);
struct lchan_channel *lchan_chan_alloc(struct lchan_context *ctx);
void lchan_chan_put(struct lchan_channel *chan);
void lchan_chan_queue_delayed(struct lchan_channel *chan,
			      struct delayed_work *dwork, unsigned int ms);
void lchan_chan_set_state(struct lchan_channel *chan, int state);
bool lchan_chan_done(struct lchan_channel *chan);
bool lchan_chan_settled(struct lchan_channel *chan);
bool lchan_chan_wait_over(struct lchan_channel *chan, u32 min);

/* lchan_parts.c */
void lchan_parts_init(struct lchan_channel *chan);
void lchan_parts_attach(struct lchan_channel *chan);
void lchan_parts_detach(struct lchan_channel *chan);
void lchan_parts_stop(struct lchan_channel *chan);

/* lchan_qp.c */
int lchan_qp_create(struct lchan_channel *chan,
		    const struct lchan_ring_sizes *sizes);
int lchan_qp_create_bare(struct lchan_channel *chan, u32 sq, u32 rq);
int lchan_qp_add_ring(struct lchan_channel *chan,
		      const struct lchan_ring_sizes *sizes);
int lchan_qp_remake(struct lchan_channel *chan);
int lchan_qp_init(struct lchan_channel *chan, struct lchan_link *link);
int lchan_qp_ready(struct lchan_channel *chan, struct lchan_link *link,
		   const struct lchan_qp_peer *peer);
int lchan_qp_link_mtu(struct lchan_link *link, enum ib_mtu *mtu);
int lchan_qp_send_ready(struct lchan_channel *chan, u32 psn, u8 retry,
			u8 rnr_retry, u8 rd_atomic);
u32 lchan_qp_new_psn(void);
void lchan_qp_teardown(struct lchan_channel *chan);
void lchan_qp_kill_dev(struct lchan_dev *dev);

/* lchan_file.c */
void lchan_file_abort(struct lchan_channel *chan);
long lchan_ioctl_chan_info(struct lchan_ucmd *ucmd);
long lchan_ioctl_enter(struct lchan_ucmd *ucmd);
struct lchan_channel *lchan_file_chan(int fd, struct fd *f);
int lchan_file_install(struct lchan_channel *chan, u32 flags);

/* lchan_stream.c */
int lchan_stream_check(u32 flags, const struct lchan_ring_sizes *rings);
struct lchan_stream *lchan_stream_start(struct lchan_channel *chan,
					const struct lchan_rc_params *rc,
					u32 flags, const unsigned long *deadline);
int lchan_stream_finish(struct lchan_stream *st, unsigned long deadline);
wait_queue_head_t *lchan_stream_wq(struct lchan_stream *st);
bool lchan_stream_answered(struct lchan_stream *st);
struct lchan_stream *lchan_stream_open(struct lchan_channel *chan,
				       const struct lchan_rc_params *rc,
				       u32 flags, const unsigned long *deadline);
int lchan_stream_install(struct lchan_stream *st, u32 flags);
int lchan_stream_sock_fd(u32 flags, void (*setup)(struct socket *, void *),
			 void *arg, bool *set_up);
void lchan_stream_graft(struct lchan_stream *st, struct socket *sock,
			bool tcp_port);
void lchan_stream_abort(struct lchan_stream *st);
void lchan_stream_qp_gone(struct lchan_channel *chan);
int lchan_stream_init(void);
void lchan_stream_exit(void);

/* lchan_connect.c */
struct lchan_channel *lchan_connect_new(struct lchan_context *ctx);
int lchan_connect_bind_dev(struct lchan_channel *chan, struct ib_device *ibdev,
			   u32 port_num);
int lchan_connect_set_rc(struct lchan_channel *chan,
			 const struct lchan_rc_params *rc);
bool lchan_connect_held(struct lchan_channel *chan);
int lchan_connect_check_fd_flags(u32 flags, u32 allowed);
int lchan_connect_check_open(u32 flags, const struct lchan_ring_sizes *rings,
			     const struct lchan_rc_params *rc);
int lchan_connect_open(struct lchan_channel *chan,
		       const struct lchan_ring_sizes *rings,
		       const struct lchan_rc_params *rc, u32 flags,
		       const unsigned long *deadline);
int lchan_connect_request(struct lchan_channel *chan);
int lchan_connect_wait(struct lchan_channel *chan, unsigned long deadline);
bool lchan_connect_answered(struct lchan_channel *chan);
int lchan_ioctl_establish_check(const struct lchan_ucmd *ucmd);
long lchan_ioctl_establish(struct lchan_ucmd *ucmd);
int lchan_ioctl_connect_check(const struct lchan_ucmd *ucmd);
long lchan_ioctl_connect(struct lchan_ucmd *ucmd);

/* lchan_cm.c */
int lchan_cm_addr_to_sockaddr(const struct lchan_addr *a,
			      struct sockaddr_storage *ss);
void lchan_cm_sockaddr_to_addr(const struct sockaddr_storage *ss,
			       struct lchan_addr *a);
void lchan_cm_copy_sockaddr(struct sockaddr_storage *dst,
			    const struct sockaddr *src);
void lchan_cm_data_arrived(struct lchan_channel *chan);
int lchan_cm_handler(struct rdma_cm_id *id, struct rdma_cm_event *event);

/* lchan_listen.c */
int lchan_listen_cm_event(struct lchan_listen_point *lst, struct rdma_cm_id *id,
			  struct rdma_cm_event *event);
void lchan_listen_kill_dev(struct lchan_dev *dev);
int lchan_ioctl_accept_check(const struct lchan_ucmd *ucmd);
long lchan_ioctl_accept(struct lchan_ucmd *ucmd);
int lchan_ioctl_listen_check(const struct lchan_ucmd *ucmd);
long lchan_ioctl_listen(struct lchan_ucmd *ucmd);
void lchan_listen_link_setup(struct lchan_link *link,
			     const struct lchan_link_msg *msg);
bool lchan_listen_link_cancel(struct lchan_link *link, u64 req_id);
struct lchan_listen_point *lchan_listen_open(struct lchan_context *ctx,
					     struct sockaddr_storage *ss,
					     u32 backlog, bool v6only);
void lchan_listen_close(struct lchan_listen_point *lst);
bool lchan_listen_pending(struct lchan_listen_point *lst);
bool lchan_listen_wildcard(const struct sockaddr_storage *addr);
struct lchan_stream *lchan_listen_next_stream(struct lchan_listen_point *lst);

/* lchan_stream_timewait.c */
void lchan_stream_timewait(struct net *net,
			   const struct sockaddr_storage *local);
void lchan_stream_timewait_exit(void);

/* lchan_stream_addrs.c */
int lchan_stream_addrs(struct net *net, __be16 port, bool v4, bool v6,
		       struct sockaddr_storage *out, int max);

/* lchan_stream_listen.c */
long lchan_stream_listen_new(struct lchan_ucmd *ucmd);
int lchan_stream_listen_init(void);
void lchan_stream_listen_exit(void);

/* lchan_charge.c */
int lchan_charge_room(void);

/* lchan_ring.c */
int lchan_ring_sizes_check(const struct lchan_ring_sizes *sizes);
int lchan_ring_alloc(struct lchan_channel *chan,
		     const struct lchan_ring_sizes *sizes);
void lchan_ring_free(struct lchan_ring *ring);
size_t lchan_ring_kmem_bytes(const struct lchan_ring *ring);
int lchan_ring_mmap(struct lchan_channel *chan, struct vm_area_struct *vma);
bool lchan_ring_is_mapping(const struct vm_area_struct *vma);
s64 lchan_ring_pending(u32 tail, u32 head_k, u32 entries);
u32 lchan_ring_cq_ready(struct lchan_channel *chan);
u32 lchan_ring_held(const struct lchan_ring *ring, const struct lchan_queue *q);
void lchan_ring_put_cqe(struct lchan_channel *chan,
			const struct lchan_cqe *src);
void lchan_ring_wake(struct lchan_channel *chan);
void lchan_ring_reject(struct lchan_channel *chan, u8 opcode, u64 user_data,
		       u32 status);

/* lchan_wr.c */
void lchan_wr_put_mrs(struct lchan_wr *wr);
u32 lchan_wr_read_sqe(struct lchan_channel *chan, u32 head, u32 avail,
		      struct lchan_wr *wr, u32 *slots);
u32 lchan_wr_read_rqe(struct lchan_channel *chan, u32 head, u32 avail,
		      struct lchan_wr *wr, u32 *slots);

/* lchan_flow.c */
u32 lchan_flow_claim_cq(struct lchan_channel *chan, u32 want);
void lchan_flow_unclaim_cq(struct lchan_channel *chan, u32 count);
struct lchan_wr *lchan_flow_get_wr(struct lchan_channel *chan,
				   struct lchan_queue *q);
bool lchan_flow_recv_done(struct lchan_channel *chan, struct lchan_wr *wr);
bool lchan_flow_send_owned(struct lchan_channel *chan,
			   const struct lchan_wr *wr);
bool lchan_flow_send_done(struct lchan_channel *chan, struct lchan_wr *wr,
			  bool quiet);
bool lchan_flow_defer(struct lchan_channel *chan, struct lchan_queue *q);
bool lchan_flow_flush_due(struct lchan_channel *chan, struct lchan_queue *q);
void lchan_flow_retire_all(struct lchan_channel *chan);

/* WR slots of @q in use: posted and not yet freed. */
static inline u32 lchan_flow_outstanding(const struct lchan_queue *q)
{
	return READ_ONCE(q->wr_post) - READ_ONCE(q->wr_done);
}

/* lchan_post.c */
void lchan_post_kick(struct lchan_channel *chan);
void lchan_post_init(struct lchan_channel *chan);
void lchan_post_stop(struct lchan_channel *chan);
void lchan_post_break(struct lchan_channel *chan);
int lchan_post_submit(struct lchan_channel *chan, u32 *sq_done, u32 *rq_done);
bool lchan_post_has_work(struct lchan_channel *chan);
int lchan_post_own_send(struct lchan_channel *chan,
			const struct ib_send_wr *wr);

/* lchan_quirk.c */
const struct lchan_quirk *lchan_quirk_get(const struct ib_device *ibdev);
void lchan_quirk_recheck_soon(struct lchan_channel *chan);
void lchan_quirk_init(struct lchan_channel *chan);
void lchan_quirk_stop(struct lchan_channel *chan);

/* lchan_poller.c */
int lchan_poller_init(void);
void lchan_poller_exit(void);
void lchan_poller_kick_chan(struct lchan_channel *chan);
void lchan_poller_member_init(struct lchan_channel *chan);
void lchan_poller_add_chan(struct lchan_channel *chan);
void lchan_poller_del_chan(struct lchan_channel *chan);
int lchan_poller_index(const struct lchan_channel *chan);

/* lchan_keepalive.c */
void lchan_keepalive_init(struct lchan_channel *chan);
void lchan_keepalive_set(struct lchan_channel *chan, u32 ms);
void lchan_keepalive_start(struct lchan_channel *chan);
void lchan_keepalive_stop(struct lchan_channel *chan);

/* A completion came: the peer is there.  Any context, every completion. */
static inline void lchan_keepalive_heard(struct lchan_channel *chan)
{
	WRITE_ONCE(chan->ka.heard, jiffies);
}

/* lchan_direct.c */
void lchan_direct_poll(struct lchan_channel *chan);
int lchan_direct_wait(struct lchan_channel *chan, u32 min, bool timed,
		      u64 timeout_ns);
void lchan_direct_poll_wait(struct lchan_channel *chan);
void lchan_direct_init(struct lchan_channel *chan);
void lchan_direct_drain(struct lchan_channel *chan);
void lchan_direct_stop(struct lchan_channel *chan);

/* lchan_hello.c */
#define LCHAN_HELLO_STREAM	0x01	/* the request or reply of a stream */
void lchan_hello_param(struct rdma_conn_param *param, u8 flags);
int lchan_hello_read(const struct rdma_conn_param *conn);
bool lchan_hello_says_stream(const struct rdma_conn_param *conn);

/* lchan_iwarp.c */
extern const struct lchan_transport_ops lchan_iwarp_transport;
void lchan_iwarp_init(struct lchan_channel *chan);
void lchan_iwarp_stop(struct lchan_channel *chan);

/* lchan_transport.c */
extern const struct lchan_transport_ops lchan_transport_ib;
const struct lchan_transport_ops *lchan_transport_get(struct ib_device *ibdev,
						      u32 port);
const char *lchan_transport_name(struct ib_device *ibdev);
bool lchan_transport_request_wants(struct rdma_cm_id *id,
				   const struct rdma_conn_param *conn);
int lchan_transport_hold_port(struct lchan_channel *chan);
bool lchan_transport_sq_held(const struct lchan_channel *chan);
bool lchan_transport_opening(const struct lchan_channel *chan);

/* lchan_iwarp_port.c */
int lchan_iwarp_port_hold(struct lchan_channel *chan);
int lchan_iwarp_port_pick(struct sockaddr_storage *addr, struct socket **sockp);
void lchan_iwarp_port_release(struct lchan_channel *chan);

/* lchan_iwarp_sock.c */
int lchan_iwarp_sock_read(struct lchan_channel *chan);

/* lchan_link_wire.c: lchan_link_wire.h */

/* lchan_link.c */
bool lchan_link_enabled(void);
u16 lchan_link_service_port(void);
void lchan_link_put(struct lchan_link *link);
int lchan_link_addr_key(struct sockaddr_storage *key,
			const struct sockaddr *addr);
u16 lchan_link_addr_port(const struct sockaddr_storage *addr);
void lchan_link_queue(struct lchan_link *link, int ev);
bool lchan_link_end(struct lchan_link *link, int err, bool refused);
void lchan_link_down(struct lchan_link *link, int err);
void lchan_link_refuse(struct lchan_link *link, int err);
void lchan_link_established(struct lchan_link *link, struct rdma_cm_id *id,
			    u8 version);
int lchan_link_bind(struct lchan_link *link, struct ib_device *ibdev,
		    u32 port_num);
struct lchan_link *lchan_link_get(const struct sockaddr *src,
				  const struct sockaddr *dst);
struct lchan_link *lchan_link_accepted(struct rdma_cm_id *id, u8 version);
int lchan_link_path_src(struct lchan_link *link, u8 *gid, u16 *lid);
void lchan_link_kill_dev(struct lchan_dev *dev);
void lchan_link_init(void);
void lchan_link_exit(void);

/* lchan_link_cm.c */
void lchan_link_cm_start(struct lchan_link *link);
void lchan_link_cm_connect(struct lchan_link *link);
void lchan_link_cm_accept(struct lchan_link *link);
void lchan_link_cm_disconnect(struct lchan_link *link);
void lchan_link_cm_destroy(struct lchan_link *link);
int lchan_link_cm_service(bool on);
int lchan_link_cm_init(bool on);
void lchan_link_cm_exit(void);

/* lchan_link_chan.c */
int lchan_link_chan_reach(struct lchan_channel *chan, u32 flags,
			  unsigned long deadline);
int lchan_link_chan_connect(struct lchan_channel *chan,
			    unsigned long deadline);
int lchan_link_chan_leave(struct lchan_channel *chan);
struct lchan_channel *lchan_link_chan_build(struct lchan_listen_point *lst,
					    struct lchan_link *link,
					    const struct lchan_link_setup *s,
					    struct lchan_link_reply *r);
int lchan_link_chan_accept(struct lchan_channel *chan,
			   const struct lchan_ring_sizes *rings,
			   const struct lchan_rc_params *rc, u32 flags);

/* lchan_link_msg.c */
void lchan_link_msg_count(struct lchan_link *link, u64 *counter);
void lchan_link_msg_inreq_work(struct work_struct *work);
void lchan_link_msg_fail(struct lchan_link *link, int err);
int lchan_link_send(struct lchan_link *link, const struct lchan_link_msg *msg);
int lchan_link_echo(struct lchan_link *link);
int lchan_link_call(struct lchan_link *link, struct lchan_link_msg *msg,
		    struct lchan_link_msg *reply, unsigned long deadline);
int lchan_link_msg_create(struct lchan_link *link);
void lchan_link_msg_destroy(struct lchan_link *link);

#endif /* LCHAN_H */
