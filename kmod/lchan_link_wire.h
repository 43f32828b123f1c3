/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The messages two lchan modules exchange over a link, and the hello of
 * the link's own rdma_cm exchange (Documentation/link.md gives the whole
 * format and the rules).  Structs named lchan_link_wire_* are the bytes
 * on the wire, big-endian, each size asserted; the host-order views
 * (struct lchan_link_msg) are what the rest of the module sees.  Encode
 * and decode are pure functions of their arguments: decode checks every
 * field a peer sent, encode refuses to send what a peer would refuse.
 */
#ifndef LCHAN_LINK_WIRE_H
#define LCHAN_LINK_WIRE_H

#include <linux/build_bug.h>
#include <linux/types.h>

#define LCHAN_LINK_WIRE_MAGIC		0x6c636c6b	/* "lclk" */
#define LCHAN_LINK_WIRE_VERSION_MIN	1
#define LCHAN_LINK_WIRE_VERSION_MAX	1

/* rdma_cm's REQ private data on IB and RoCE less its address header. */
#define LCHAN_LINK_WIRE_DATA_MAX	56
#define LCHAN_LINK_WIRE_QPN_MIN		2	/* QP0 and QP1 are no peers */
#define LCHAN_LINK_WIRE_QPN_MAX		0xffffff
#define LCHAN_LINK_WIRE_PSN_MAX		0xffffff
/* Path MTU as the IB spec encodes it (enum ib_mtu): 256 .. 4096 bytes. */
#define LCHAN_LINK_WIRE_MTU_MIN		1
#define LCHAN_LINK_WIRE_MTU_MAX		5
#define LCHAN_LINK_WIRE_RD_MAX		16
#define LCHAN_LINK_WIRE_RETRY_MAX	7
#define LCHAN_LINK_WIRE_ENTRIES_MAX	65536

enum lchan_link_wire_type {
	LCHAN_LINK_ECHO_REQ = 1,
	LCHAN_LINK_ECHO_REP,
	LCHAN_LINK_SETUP_REQ,
	LCHAN_LINK_SETUP_REP,
	LCHAN_LINK_SETUP_CANCEL,
	LCHAN_LINK_TYPE_END,
};

/* A SETUP_REP's status: the wire's own numbers, never an errno. */
enum lchan_link_wire_status {
	LCHAN_LINK_ST_OK = 0,
	LCHAN_LINK_ST_NO_LISTENER,
	LCHAN_LINK_ST_BACKLOG_FULL,
	LCHAN_LINK_ST_NO_RESOURCES,
	LCHAN_LINK_ST_BAD_REQUEST,
	LCHAN_LINK_ST_BUSY,
	LCHAN_LINK_ST_UNSUPPORTED,
	LCHAN_LINK_ST_END,
};

/* In the private data of the link's connect and of its accept. */
struct lchan_link_wire_hello {
	__be32 magic;
	u8 version_min;
	u8 version_max;			/* a reply: == min, the choice */
	__be16 resv;
	__be32 flags;			/* none at version 1 */
	__be32 resv2;
};
static_assert(sizeof(struct lchan_link_wire_hello) == 16);

struct lchan_link_wire_hdr {
	__be32 magic;
	u8 version;
	u8 type;
	__be16 length;			/* the whole message */
	__be32 flags;
	__be32 resv;
	__be64 req_id;
};
static_assert(sizeof(struct lchan_link_wire_hdr) == 24);

struct lchan_link_wire_setup_req {
	__be32 qpn;
	__be32 psn;
	__be16 src_port;
	__be16 dst_port;
	u8 mtu;
	u8 rd_atomic;
	u8 rd_resp;
	u8 retry;
	u8 rnr_retry;
	u8 flags;
	u8 data_len;
	u8 resv0;
	__be32 sq_entries;
	__be32 rq_entries;
	__be16 lid;
	__be16 resv1;
	u8 gid[16];
	u8 data[LCHAN_LINK_WIRE_DATA_MAX];
};
static_assert(sizeof(struct lchan_link_wire_setup_req) == 104);

struct lchan_link_wire_setup_rep {
	__be32 status;
	__be32 qpn;
	__be32 psn;
	u8 mtu;
	u8 rd_atomic;
	u8 rd_resp;
	u8 resv0;
	__be16 lid;
	__be16 resv1;
	u8 gid[16];
	__be32 resv2;
};
static_assert(sizeof(struct lchan_link_wire_setup_rep) == 40);

#define LCHAN_LINK_WIRE_HDR_SIZE	sizeof(struct lchan_link_wire_hdr)
/* The largest message of any version this module speaks. */
#define LCHAN_LINK_WIRE_MSG_MAX		(LCHAN_LINK_WIRE_HDR_SIZE + \
					 sizeof(struct lchan_link_wire_setup_req))

/* A SETUP_REQ in host order. */
struct lchan_link_setup {
	u32 qpn;
	u32 psn;
	u16 src_port;
	u16 dst_port;
	u8 mtu;
	u8 rd_atomic;
	u8 rd_resp;
	u8 retry;
	u8 rnr_retry;
	u8 data_len;
	u16 lid;
	u32 sq_entries;
	u32 rq_entries;
	u8 gid[16];
	u8 data[LCHAN_LINK_WIRE_DATA_MAX];
};

/* A SETUP_REP in host order. */
struct lchan_link_reply {
	u32 status;			/* enum lchan_link_wire_status */
	u32 qpn;
	u32 psn;
	u8 mtu;
	u8 rd_atomic;
	u8 rd_resp;
	u16 lid;
	u8 gid[16];
};

/* One message in host order; the body is the type's (ECHO_*, CANCEL: none). */
struct lchan_link_msg {
	u8 type;			/* enum lchan_link_wire_type */
	u64 req_id;
	union {
		struct lchan_link_setup setup;
		struct lchan_link_reply reply;
	};
};

size_t lchan_link_wire_size(u8 version, u8 type);
int lchan_link_wire_encode(const struct lchan_link_msg *msg, u8 version,
			   void *buf, size_t len);
int lchan_link_wire_decode(const void *buf, size_t len, u8 version,
			   struct lchan_link_msg *msg);
bool lchan_link_wire_is_request(u8 type);
u8 lchan_link_wire_reply_to(u8 type);
void lchan_link_wire_hello(struct lchan_link_wire_hello *h, u8 min, u8 max);
int lchan_link_wire_hello_pick(const void *data, size_t len);
int lchan_link_wire_hello_chosen(const void *data, size_t len);
int lchan_link_wire_errno(u32 status);

#endif /* LCHAN_LINK_WIRE_H */
