/* SPDX-License-Identifier: LGPL-2.1-or-later OR MIT */
/*
 * liblchan-fi: lchan as a libfabric core provider named "lchan".
 *
 * Object map (libfabric -> lchan):
 *   fabric   one open of /dev/lchan (a context): every domain, listener and
 *            channel of the fabric lives in it, so a channel accepted on a
 *            passive endpoint can use the memory regions of any domain.
 *   domain   one RDMA device (rxe0, siw0, ...) of that context.
 *   pep      an lchan listener (non-blocking, polled by the EQ).
 *   ep       FI_EP_MSG: one lchan channel, made with LCHAN_DEFER_ESTABLISH
 *            so receives posted before the connection go in first.
 *   mr       an lchan memory region.  lchan registers memory through a
 *            channel of the device, so a region made before the domain's
 *            first channel is registered when that channel appears; its key
 *            reads FI_KEY_NOTAVAIL until then.
 *   cq       a software queue filled from the CQ rings of its endpoints;
 *            its wait object is an epoll fd over their channel fds.
 *   eq       a software queue; its wait object is an epoll fd over the
 *            listener fds and the channel fds (a connect's answer or
 *            failure, FI_SHUTDOWN).
 *
 * Locking: one mutex per fabric serialises every call (FI_THREAD_SAFE).
 * Functions called with it held say so.
 */
#ifndef LFI_H
#define LFI_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <net/if.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_collective.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>
#include <rdma/providers/fi_prov.h>
#include <rdma/providers/fi_log.h>

#include <liblchan.h>

#define LFI_PROV_NAME		"lchan"
#define LFI_FABRIC_NAME		"lchan"
#define LFI_VERSION		FI_VERSION(0, 1)
#define LFI_DEF_QUEUE		256	/* tx/rx size when the app has none */
#define LFI_MAX_QUEUE		4096	/* lchan's largest ring */
#define LFI_INJECT_SIZE		64	/* bytes copied by fi_inject */
#define LFI_IOV_LIMIT		4
#define LFI_RMA_IOV_LIMIT	1
/* rxe's per-message limit; every other device takes more. */
#define LFI_MAX_MSG_SIZE	(8u << 20)
#define LFI_MAX_DEVS		32

/*
 * Connection data.  lchan's connect carries none, so the provider sends
 * it in the channel's first messages, one each way, before the
 * application's: the connecting side's CONNECT (answered by ACCEPT or
 * REJECT) goes out as soon as the channel is established, and each side
 * posts the receive for the other's first, ahead of its own receives.
 */
#define LFI_CM_DATA_MAX		56
#define LFI_CM_MAGIC		0x6c636d31	/* "lcm1" */

enum lfi_cm_type {
	LFI_CM_CONNECT = 1,
	LFI_CM_ACCEPT,
	LFI_CM_REJECT,
};

struct lfi_cm_msg {
	uint32_t magic;
	uint8_t type;		/* enum lfi_cm_type */
	uint8_t len;		/* bytes of data */
	uint16_t resv;
	uint8_t data[LFI_CM_DATA_MAX];
};

_Static_assert(sizeof(struct lfi_cm_msg) == 64, "cm message layout");

/* user_data of a ring entry: the op slot, receive and CM bits. */
#define LFI_UD_RX		(1ULL << 63)
#define LFI_UD_CM		(1ULL << 62)

extern struct fi_provider lfi_prov;

#define LFI_WARN(subsys, ...) FI_WARN(&lfi_prov, subsys, __VA_ARGS__)
#define LFI_INFO(subsys, ...) FI_INFO(&lfi_prov, subsys, __VA_ARGS__)

/* Provider parameters (FI_LCHAN_*), read once per fabric. */
struct lfi_params {
	int poller;		/* FI_LCHAN_POLLER: kernel submission thread */
	int direct;		/* FI_LCHAN_DIRECT: direct polling on IB/RoCE */
	int poller_idle_ms;	/* FI_LCHAN_POLLER_IDLE_MS */
	int connect_timeout_ms;	/* FI_LCHAN_CONNECT_TIMEOUT_MS */
};

/* An RDMA device lchan serves, with the addresses of its netdev. */
struct lfi_dev {
	char name[64];
	char netdev[IF_NAMESIZE];
	bool iwarp;
	int naddrs;
	struct sockaddr_storage addrs[8];
};

/* dev.c */
int lfi_dev_scan(struct lfi_dev *devs, int max);
/* Log why opening /dev/lchan failed with @err (<0): lchan not loaded, or else. */
void lfi_dev_open_failed(int err);
const struct lfi_dev *lfi_dev_by_ip(const struct lfi_dev *devs, int n,
				    const struct sockaddr *sa);
int lfi_dev_route(const struct sockaddr *dst, struct sockaddr_storage *src);

/* addr.c */
size_t lfi_addr_len(const struct sockaddr *sa);
size_t lfi_addr_from_lchan(const struct lchan_addr *la,
			   struct sockaddr_storage *ss);
bool lfi_addr_is_any(const struct sockaddr *sa);
int lfi_addr_copy_out(const void *addr, size_t len, void *buf,
		      size_t *buflen);

/* info.c */
int lfi_info_get(uint32_t version, const char *node, const char *service,
		 uint64_t flags, const struct fi_info *hints,
		 struct fi_info **info);

/* unsupported.c: the operations lchan does not offer. */
int lfi_unsupported_bind(struct fid *fid, struct fid *bfid, uint64_t flags);
int lfi_unsupported_control(struct fid *fid, int command, void *arg);
int lfi_unsupported_ops_open(struct fid *fid, const char *name,
			     uint64_t flags, void **ops, void *context);
int lfi_unsupported_tostr(const struct fid *fid, char *buf, size_t len);
int lfi_unsupported_ops_set(struct fid *fid, const char *name,
			    uint64_t flags, void *ops, void *context);
ssize_t lfi_unsupported_cancel(fid_t fid, void *context);
int lfi_unsupported_setopt(fid_t fid, int level, int optname,
			   const void *optval, size_t optlen);
int lfi_unsupported_tx_ctx(struct fid_ep *sep, int index,
			   struct fi_tx_attr *attr, struct fid_ep **tx_ep,
			   void *context);
int lfi_unsupported_rx_ctx(struct fid_ep *sep, int index,
			   struct fi_rx_attr *attr, struct fid_ep **rx_ep,
			   void *context);
ssize_t lfi_unsupported_size_left(struct fid_ep *ep);
int lfi_unsupported_av_open(struct fid_domain *d, struct fi_av_attr *attr,
			    struct fid_av **av, void *context);
int lfi_unsupported_scalable_ep(struct fid_domain *d, struct fi_info *info,
				struct fid_ep **sep, void *context);
int lfi_unsupported_cntr_open(struct fid_domain *d, struct fi_cntr_attr *attr,
			      struct fid_cntr **cntr, void *context);
int lfi_unsupported_poll_open(struct fid_domain *d, struct fi_poll_attr *attr,
			      struct fid_poll **pollset);
int lfi_unsupported_stx_ctx(struct fid_domain *d, struct fi_tx_attr *attr,
			    struct fid_stx **stx, void *context);
int lfi_unsupported_srx_ctx(struct fid_domain *d, struct fi_rx_attr *attr,
			    struct fid_ep **rx_ep, void *context);
int lfi_unsupported_query_atomic(struct fid_domain *d, enum fi_datatype dt,
				 enum fi_op op, struct fi_atomic_attr *attr,
				 uint64_t flags);
int lfi_unsupported_query_collective(struct fid_domain *d,
				     enum fi_collective_op coll,
				     struct fi_collective_attr *attr,
				     uint64_t flags);
int lfi_unsupported_wait_open(struct fid_fabric *fabric,
			      struct fi_wait_attr *attr,
			      struct fid_wait **waitset);
int lfi_unsupported_join(struct fid_ep *ep, const void *addr, uint64_t flags,
			 struct fid_mc **mc, void *context);
extern struct fi_ops_tagged lfi_unsupported_tagged_ops;
extern struct fi_ops_atomic lfi_unsupported_atomic_ops;
extern struct fi_ops_collective lfi_unsupported_collective_ops;

/* fabric.c */
struct lfi_fabric {
	struct fid_fabric fabric_fid;
	pthread_mutex_t lock;
	struct lchan_ctx ctx;
	struct lfi_params params;
	int refs;		/* domains, EQs, peps */
};

int lfi_fabric_open(struct fi_fabric_attr *attr, struct fid_fabric **fabric,
		    void *context);
/* lchan connect/accept flags the fabric's parameters ask for on @info. */
unsigned lfi_fabric_chan_flags(const struct lfi_fabric *fab,
			       const struct fi_info *info);
int lfi_fabric_release(struct lfi_fabric *fab, const int *refs,
		       int *parent_refs);

static inline struct lfi_fabric *to_lfi_fabric(struct fid_fabric *f)
{
	return (struct lfi_fabric *)f;
}

/* domain.c */
struct lfi_mr;
struct lfi_ep;

struct lfi_domain {
	struct fid_domain domain_fid;
	struct lfi_fabric *fabric;
	char name[64];
	bool iwarp;
	struct fi_info *info;		/* as opened */
	struct lfi_mr *mrs;		/* every open region */
	struct lfi_ep *eps;		/* every open endpoint */
	struct lchan_chan *anchor;	/* a channel to register through */
	int refs;			/* CQs, endpoints, regions */
};

int lfi_domain_open(struct fid_fabric *fabric, struct fi_info *info,
		    struct fid_domain **domain, void *context);
int lfi_domain_attach(struct lfi_domain *dom, struct lchan_chan *chan);
void lfi_domain_detach(struct lfi_domain *dom, struct lchan_chan *chan);

static inline struct lfi_domain *to_lfi_domain(struct fid_domain *d)
{
	return (struct lfi_domain *)d;
}

/* mr.c */
struct lfi_mr {
	struct fid_mr mr_fid;
	struct lfi_domain *dom;
	struct lfi_mr *next;		/* in dom->mrs */
	void *buf;
	size_t len;
	unsigned access;		/* LCHAN_ACCESS_* */
	struct lchan_mr lmr;		/* handle 0: not registered yet */
};

extern struct fi_ops_mr lfi_mr_ops;
int lfi_mr_register(struct lfi_mr *mr, struct lchan_chan *chan);
/* The lchan handle behind a descriptor, 0 when none. */
static inline uint32_t lfi_mr_handle(void *desc)
{
	return desc ? ((struct lfi_mr *)desc)->lmr.handle : 0;
}

/* wait.c */
struct lfi_wait {
	enum fi_wait_obj obj;		/* FI_WAIT_NONE or FI_WAIT_FD */
	int epfd;
};

int lfi_wait_open(struct lfi_wait *w, enum fi_wait_obj asked);
void lfi_wait_close(struct lfi_wait *w);
int lfi_wait_control(const struct lfi_wait *w, int command, void *arg);
long long lfi_wait_deadline(int timeout_ms);
int lfi_wait_left(long long deadline);

/* eq.c */
struct lfi_eq_event {
	uint32_t event;
	bool err;
	struct fid *fid;
	struct fi_info *info;		/* CONNREQ: the app frees it */
	uint8_t data[LFI_CM_DATA_MAX];	/* connection data, or err_data */
	size_t datalen;
	struct fi_eq_err_entry err_entry;
	struct lfi_eq_event *next;
};

struct lfi_pep;

struct lfi_eq {
	struct fid_eq eq_fid;
	struct lfi_fabric *fabric;
	struct lfi_wait wait;
	struct lfi_eq_event *head, *tail;
	struct lfi_eq_event *err_last;	/* kept until the next read */
	int refs;			/* peps and endpoints bound */
};

int lfi_eq_open(struct fid_fabric *fabric, struct fi_eq_attr *attr,
		struct fid_eq **eq, void *context);
int lfi_eq_push(struct lfi_eq *eq, uint32_t event, struct fid *fid,
		struct fi_info *info, const void *data, size_t datalen);
int lfi_eq_push_err(struct lfi_eq *eq, struct fid *fid, void *context,
		    int err, int prov_errno, const void *data, size_t datalen);
int lfi_eq_watch(struct lfi_eq *eq, int fd, uint32_t events, void *owner);
int lfi_eq_rewatch(struct lfi_eq *eq, int fd, uint32_t events, void *owner);
void lfi_eq_unwatch(struct lfi_eq *eq, int fd);
void lfi_eq_forget(struct lfi_eq *eq, const struct fid *fid);

/* cq.c */
struct lfi_cq_entry {
	struct fi_cq_err_entry e;	/* err == 0: a success */
};

struct lfi_cq {
	struct fid_cq cq_fid;
	struct lfi_domain *dom;
	enum fi_cq_format format;
	struct lfi_wait wait;
	int kick_fd;			/* eventfd in wait.epfd, data.ptr NULL */
	bool signaled;			/* fi_cq_signal */
	struct lfi_cq_entry *q;		/* ring of completions */
	size_t q_size, q_head, q_tail;	/* q_size a power of two */
	struct lfi_ep **eps;		/* endpoints bound */
	int neps, eps_cap;
};

int lfi_cq_open(struct fid_domain *domain, struct fi_cq_attr *attr,
		struct fid_cq **cq, void *context);
int lfi_cq_add_ep(struct lfi_cq *cq, struct lfi_ep *ep);
void lfi_cq_del_ep(struct lfi_cq *cq, struct lfi_ep *ep);
int lfi_cq_watch(struct lfi_cq *cq, struct lfi_ep *ep);
void lfi_cq_unwatch(struct lfi_cq *cq, struct lfi_ep *ep);
int lfi_cq_push(struct lfi_cq *cq, const struct fi_cq_err_entry *e);
void lfi_cq_kick(struct lfi_cq *cq);

/* ep.c */
struct lfi_op {
	void *context;
	uint64_t flags;		/* FI_SEND, FI_RECV, ... for the CQ entry */
	void *buf;		/* receives: where the data went */
	size_t len;
	bool report;		/* a completion the app asked for */
	bool inject_call;	/* fi_inject & co: no context, no error entry */
	bool busy;
};

struct lfi_rx_pending {
	struct lchan_sge sge[LFI_IOV_LIMIT];
	void *desc[LFI_IOV_LIMIT];
	unsigned n;
	unsigned slot;
};

enum lfi_ep_state {
	LFI_EP_IDLE,		/* no channel */
	LFI_EP_CONNECTING,	/* fi_connect is making the channel */
	LFI_EP_ACCEPTING,	/* channel up, fi_accept awaited */
	LFI_EP_CM_WAIT,		/* connecting side: CONNECT queued, the
				 * connection and the ACCEPT awaited */
	LFI_EP_CONNECTED,
	LFI_EP_SHUTDOWN,	/* channel closed */
};

struct lfi_ep {
	struct fid_ep ep_fid;
	struct lfi_domain *dom;
	struct lfi_ep *next;		/* in dom->eps */
	struct fi_info *info;
	struct lfi_eq *eq;
	struct lfi_cq *tx_cq, *rx_cq;
	uint64_t tx_flags, rx_flags;	/* FI_SELECTIVE_COMPLETION at bind */
	uint64_t tx_op_flags, rx_op_flags;
	bool cq_data;			/* remote CQ data offered (info.c) */
	bool enabled;
	enum lfi_ep_state state;
	struct lchan_chan chan;		/* valid unless IDLE or SHUTDOWN */
	struct sockaddr_storage src;	/* bind address (setname/info) */
	struct lfi_op *tx_ops, *rx_ops;
	unsigned tx_size, rx_size;
	unsigned tx_free, rx_free;	/* next free slot to look at */
	unsigned tx_busy, rx_busy;
	char *inject_buf;		/* tx_size inject slots, CM tx, CM rx */
	struct lfi_mr *inject_mr;
	struct lfi_rx_pending *rx_pending;	/* before the channel */
	unsigned n_rx_pending;
	bool cm_tx_busy;		/* a CM message not yet completed */
	bool shutdown_reported;		/* FI_SHUTDOWN queued: once */
};

int lfi_ep_open(struct fid_domain *domain, struct fi_info *info,
		struct fid_ep **ep, void *context);

static inline struct lfi_ep *to_lfi_ep(struct fid_ep *e)
{
	return (struct lfi_ep *)e;
}

static inline bool lfi_ep_has_chan(const struct lfi_ep *ep)
{
	return ep->state == LFI_EP_ACCEPTING || ep->state == LFI_EP_CM_WAIT ||
	       ep->state == LFI_EP_CONNECTED;
}

/* The CM message buffers, behind the inject slots: out, then in. */
static inline struct lfi_cm_msg *lfi_ep_cm_buf(struct lfi_ep *ep, bool rx)
{
	return (struct lfi_cm_msg *)(ep->inject_buf + ((size_t)ep->tx_size +
				     (rx ? 1 : 0)) * LFI_INJECT_SIZE);
}

/* chan.c */
int lfi_chan_adopt(struct lfi_ep *ep, struct lchan_chan *chan, bool cm_rx);
int lfi_chan_cm_send(struct lfi_ep *ep, uint8_t type, const void *data,
		     size_t len);
void lfi_chan_close(struct lfi_ep *ep);

/* progress.c */
void lfi_progress_cq(struct lfi_cq *cq);
void lfi_progress_eq(struct lfi_eq *eq);
void lfi_progress_cm_flush(struct lfi_ep *ep, int timeout_ms);

/* pep.c */
struct lfi_pep {
	struct fid_pep pep_fid;
	struct lfi_fabric *fabric;
	struct fi_info *info;
	struct lfi_eq *eq;
	struct lchan_listener lst;	/* fd -1 until fi_listen */
	struct sockaddr_storage src;
};

/*
 * A request taken off the listener: its channel is established and its
 * CONNECT read; it waits for fi_endpoint and fi_accept, or fi_reject.
 */
struct lfi_connreq {
	struct fid fid;
	struct lchan_chan chan;
	struct lfi_fabric *fabric;
	struct lfi_cm_msg *msg;		/* registered as mr */
	struct lchan_mr mr;
};

int lfi_pep_open(struct fid_fabric *fabric, struct fi_info *info,
		 struct fid_pep **pep, void *context);
struct lfi_pep *lfi_pep_from_fid(struct fid *fid);
size_t lfi_pep_name(const struct lfi_pep *pep, struct sockaddr_storage *ss);
void lfi_pep_take_requests(struct lfi_pep *pep);
int lfi_pep_listen(struct lfi_pep *pep);
int lfi_pep_reject(struct lfi_connreq *req, const void *data, size_t len);

/* cm.c */
extern struct fi_ops_cm lfi_cm_ep_ops;
extern struct fi_ops_cm lfi_cm_pep_ops;
int lfi_cm_getopt(fid_t fid, int level, int optname, void *optval,
		  size_t *optlen);

/* msg.c, rma.c */
extern struct fi_ops_msg lfi_msg_ops;
extern struct fi_ops_rma lfi_rma_ops;
ssize_t lfi_msg_post_send(struct lfi_ep *ep, uint8_t opcode,
			  const struct iovec *iov, void **desc, size_t count,
			  uint64_t remote_addr, uint64_t key, uint64_t data,
			  void *context, uint64_t flags, uint64_t cq_flags);
/* fi_inject and the like: no context, no completion. */
ssize_t lfi_msg_post_inject(struct lfi_ep *ep, uint8_t opcode,
			    const void *buf, size_t len, uint64_t remote_addr,
			    uint64_t key, uint64_t data, uint64_t cq_flags);
void lfi_msg_post_pending_rx(struct lfi_ep *ep);

#endif /* LFI_H */
