// SPDX-License-Identifier: GPL-2.0
/*
 * Encode and decode of the link's messages (lchan_link_wire.h,
 * Documentation/link.md).  Nothing here touches a device, a lock or
 * memory beyond its arguments.  The bytes are copied into locals before
 * they are read or after they are written: neither a receive buffer nor
 * rdma_cm's private data needs to be aligned for the structs.
 */
#include <linux/errno.h>
#include <linux/kernel.h>
#include <linux/string.h>
#include <asm/byteorder.h>

#include "lchan_link_wire.h"

/* Each type's whole size at version 1; 0: no such type. */
static const u8 lchan_link_wire_sizes[LCHAN_LINK_TYPE_END] = {
	[LCHAN_LINK_ECHO_REQ] = LCHAN_LINK_WIRE_HDR_SIZE,
	[LCHAN_LINK_ECHO_REP] = LCHAN_LINK_WIRE_HDR_SIZE,
	[LCHAN_LINK_SETUP_REQ] = LCHAN_LINK_WIRE_HDR_SIZE +
				 sizeof(struct lchan_link_wire_setup_req),
	[LCHAN_LINK_SETUP_REP] = LCHAN_LINK_WIRE_HDR_SIZE +
				 sizeof(struct lchan_link_wire_setup_rep),
	[LCHAN_LINK_SETUP_CANCEL] = LCHAN_LINK_WIRE_HDR_SIZE,
};
static_assert(LCHAN_LINK_WIRE_MSG_MAX <= U8_MAX);

/* The size of a message of @type at @version, 0 if there is no such. */
size_t lchan_link_wire_size(u8 version, u8 type)
{
	if (version < LCHAN_LINK_WIRE_VERSION_MIN ||
	    version > LCHAN_LINK_WIRE_VERSION_MAX ||
	    type >= LCHAN_LINK_TYPE_END)
		return 0;
	return lchan_link_wire_sizes[type];
}

/* Whether @type asks for a reply, and which. */
bool lchan_link_wire_is_request(u8 type)
{
	return type == LCHAN_LINK_ECHO_REQ || type == LCHAN_LINK_SETUP_REQ;
}

u8 lchan_link_wire_reply_to(u8 type)
{
	switch (type) {
	case LCHAN_LINK_ECHO_REQ:
		return LCHAN_LINK_ECHO_REP;
	case LCHAN_LINK_SETUP_REQ:
		return LCHAN_LINK_SETUP_REP;
	}
	return 0;
}

static bool lchan_link_wire_zero(const u8 *p, size_t len)
{
	return !memchr_inv(p, 0, len);
}

/* The rules of a SETUP_REQ's fields, for what is sent and received. */
static int lchan_link_wire_check_setup(const struct lchan_link_setup *s)
{
	if (s->qpn < LCHAN_LINK_WIRE_QPN_MIN ||
	    s->qpn > LCHAN_LINK_WIRE_QPN_MAX ||
	    s->psn > LCHAN_LINK_WIRE_PSN_MAX || !s->dst_port)
		return -EINVAL;
	if (s->mtu < LCHAN_LINK_WIRE_MTU_MIN ||
	    s->mtu > LCHAN_LINK_WIRE_MTU_MAX ||
	    s->rd_atomic > LCHAN_LINK_WIRE_RD_MAX ||
	    s->rd_resp > LCHAN_LINK_WIRE_RD_MAX ||
	    s->retry > LCHAN_LINK_WIRE_RETRY_MAX ||
	    s->rnr_retry > LCHAN_LINK_WIRE_RETRY_MAX)
		return -EINVAL;
	if (!s->sq_entries || s->sq_entries > LCHAN_LINK_WIRE_ENTRIES_MAX ||
	    !s->rq_entries || s->rq_entries > LCHAN_LINK_WIRE_ENTRIES_MAX)
		return -EINVAL;
	if (s->data_len > LCHAN_LINK_WIRE_DATA_MAX ||
	    !lchan_link_wire_zero(s->data + s->data_len,
				  LCHAN_LINK_WIRE_DATA_MAX - s->data_len))
		return -EINVAL;
	return 0;
}

/* The rules of a SETUP_REP's fields: all 0 but the status unless OK. */
static int lchan_link_wire_check_reply(const struct lchan_link_reply *r)
{
	if (r->status >= LCHAN_LINK_ST_END)
		return -EINVAL;
	if (r->status != LCHAN_LINK_ST_OK)
		return r->qpn || r->psn || r->mtu || r->rd_atomic ||
		       r->rd_resp || r->lid ||
		       !lchan_link_wire_zero(r->gid, sizeof(r->gid)) ?
		       -EINVAL : 0;
	if (r->qpn < LCHAN_LINK_WIRE_QPN_MIN ||
	    r->qpn > LCHAN_LINK_WIRE_QPN_MAX ||
	    r->psn > LCHAN_LINK_WIRE_PSN_MAX ||
	    r->mtu < LCHAN_LINK_WIRE_MTU_MIN ||
	    r->mtu > LCHAN_LINK_WIRE_MTU_MAX ||
	    r->rd_atomic > LCHAN_LINK_WIRE_RD_MAX ||
	    r->rd_resp > LCHAN_LINK_WIRE_RD_MAX)
		return -EINVAL;
	return 0;
}

static int lchan_link_wire_check_body(const struct lchan_link_msg *msg)
{
	switch (msg->type) {
	case LCHAN_LINK_SETUP_REQ:
		return lchan_link_wire_check_setup(&msg->setup);
	case LCHAN_LINK_SETUP_REP:
		return lchan_link_wire_check_reply(&msg->reply);
	}
	return 0;
}

static void lchan_link_wire_put_setup(void *dst,
				      const struct lchan_link_setup *s)
{
	struct lchan_link_wire_setup_req w = {
		.qpn = cpu_to_be32(s->qpn),
		.psn = cpu_to_be32(s->psn),
		.src_port = cpu_to_be16(s->src_port),
		.dst_port = cpu_to_be16(s->dst_port),
		.mtu = s->mtu,
		.rd_atomic = s->rd_atomic,
		.rd_resp = s->rd_resp,
		.retry = s->retry,
		.rnr_retry = s->rnr_retry,
		.data_len = s->data_len,
		.sq_entries = cpu_to_be32(s->sq_entries),
		.rq_entries = cpu_to_be32(s->rq_entries),
		.lid = cpu_to_be16(s->lid),
	};

	memcpy(w.gid, s->gid, sizeof(w.gid));
	memcpy(w.data, s->data, sizeof(w.data));
	memcpy(dst, &w, sizeof(w));
}

static int lchan_link_wire_get_setup(const void *src,
				     struct lchan_link_setup *s)
{
	struct lchan_link_wire_setup_req w;

	memcpy(&w, src, sizeof(w));
	if (w.flags || w.resv0 || w.resv1)
		return -EBADMSG;
	s->qpn = be32_to_cpu(w.qpn);
	s->psn = be32_to_cpu(w.psn);
	s->src_port = be16_to_cpu(w.src_port);
	s->dst_port = be16_to_cpu(w.dst_port);
	s->mtu = w.mtu;
	s->rd_atomic = w.rd_atomic;
	s->rd_resp = w.rd_resp;
	s->retry = w.retry;
	s->rnr_retry = w.rnr_retry;
	s->data_len = w.data_len;
	s->sq_entries = be32_to_cpu(w.sq_entries);
	s->rq_entries = be32_to_cpu(w.rq_entries);
	s->lid = be16_to_cpu(w.lid);
	memcpy(s->gid, w.gid, sizeof(s->gid));
	memcpy(s->data, w.data, sizeof(s->data));
	return lchan_link_wire_check_setup(s) ? -EBADMSG : 0;
}

static void lchan_link_wire_put_reply(void *dst,
				      const struct lchan_link_reply *r)
{
	struct lchan_link_wire_setup_rep w = {
		.status = cpu_to_be32(r->status),
		.qpn = cpu_to_be32(r->qpn),
		.psn = cpu_to_be32(r->psn),
		.mtu = r->mtu,
		.rd_atomic = r->rd_atomic,
		.rd_resp = r->rd_resp,
		.lid = cpu_to_be16(r->lid),
	};

	memcpy(w.gid, r->gid, sizeof(w.gid));
	memcpy(dst, &w, sizeof(w));
}

static int lchan_link_wire_get_reply(const void *src,
				     struct lchan_link_reply *r)
{
	struct lchan_link_wire_setup_rep w;

	memcpy(&w, src, sizeof(w));
	if (w.resv0 || w.resv1 || w.resv2)
		return -EBADMSG;
	r->status = be32_to_cpu(w.status);
	r->qpn = be32_to_cpu(w.qpn);
	r->psn = be32_to_cpu(w.psn);
	r->mtu = w.mtu;
	r->rd_atomic = w.rd_atomic;
	r->rd_resp = w.rd_resp;
	r->lid = be16_to_cpu(w.lid);
	memcpy(r->gid, w.gid, sizeof(r->gid));
	return lchan_link_wire_check_reply(r) ? -EBADMSG : 0;
}

/*
 * @msg at @version into @buf of @len bytes: its size, -EINVAL for a
 * message a peer would refuse, -ENOSPC when @buf is too small.
 */
int lchan_link_wire_encode(const struct lchan_link_msg *msg, u8 version,
			   void *buf, size_t len)
{
	size_t size = lchan_link_wire_size(version, msg->type);
	struct lchan_link_wire_hdr hdr = {
		.magic = cpu_to_be32(LCHAN_LINK_WIRE_MAGIC),
		.version = version,
		.type = msg->type,
		.length = cpu_to_be16(size),
		.req_id = cpu_to_be64(msg->req_id),
	};
	int ret;

	if (!size || !msg->req_id)
		return -EINVAL;
	if (len < size)
		return -ENOSPC;
	ret = lchan_link_wire_check_body(msg);
	if (ret)
		return ret;
	memcpy(buf, &hdr, sizeof(hdr));
	if (msg->type == LCHAN_LINK_SETUP_REQ)
		lchan_link_wire_put_setup(buf + sizeof(hdr), &msg->setup);
	else if (msg->type == LCHAN_LINK_SETUP_REP)
		lchan_link_wire_put_reply(buf + sizeof(hdr), &msg->reply);
	return size;
}

/*
 * The @len bytes a peer sent at @buf, on a link that speaks @version,
 * into @msg.  0, or why they are refused: -EBADMSG (malformed, or a
 * field out of its range), -EPROTONOSUPPORT (another version),
 * -EOPNOTSUPP (a type unknown at this version).
 */
int lchan_link_wire_decode(const void *buf, size_t len, u8 version,
			   struct lchan_link_msg *msg)
{
	struct lchan_link_wire_hdr hdr;
	size_t size;

	if (len < sizeof(hdr))
		return -EBADMSG;
	memcpy(&hdr, buf, sizeof(hdr));
	if (be32_to_cpu(hdr.magic) != LCHAN_LINK_WIRE_MAGIC)
		return -EBADMSG;
	if (hdr.version != version)
		return -EPROTONOSUPPORT;
	size = lchan_link_wire_size(version, hdr.type);
	if (!size)
		return -EOPNOTSUPP;
	if (be16_to_cpu(hdr.length) != size || len != size ||
	    hdr.flags || hdr.resv || !hdr.req_id)
		return -EBADMSG;
	memset(msg, 0, sizeof(*msg));
	msg->type = hdr.type;
	msg->req_id = be64_to_cpu(hdr.req_id);
	if (hdr.type == LCHAN_LINK_SETUP_REQ)
		return lchan_link_wire_get_setup(buf + sizeof(hdr),
						 &msg->setup);
	if (hdr.type == LCHAN_LINK_SETUP_REP)
		return lchan_link_wire_get_reply(buf + sizeof(hdr),
						 &msg->reply);
	return 0;
}

/* The hello of a connect (@min..@max) or of an accept (@min == @max). */
void lchan_link_wire_hello(struct lchan_link_wire_hello *h, u8 min, u8 max)
{
	memset(h, 0, sizeof(*h));
	h->magic = cpu_to_be32(LCHAN_LINK_WIRE_MAGIC);
	h->version_min = min;
	h->version_max = max;
}

/* A hello's magic and range, into @h; -EBADMSG if it is none. */
static int lchan_link_wire_hello_get(const void *data, size_t len,
				     struct lchan_link_wire_hello *h)
{
	/* Private data comes padded: the hello's size is a minimum. */
	if (!data || len < sizeof(*h))
		return -EBADMSG;
	memcpy(h, data, sizeof(*h));
	if (be32_to_cpu(h->magic) != LCHAN_LINK_WIRE_MAGIC ||
	    !h->version_min || h->version_min > h->version_max)
		return -EBADMSG;
	return 0;
}

/*
 * A connect's hello: the highest version both sides speak, or
 * -EBADMSG (no hello) or -EPROTONOSUPPORT (no common version).  Flags
 * and reserved fields belong to the versions that define them.
 */
int lchan_link_wire_hello_pick(const void *data, size_t len)
{
	struct lchan_link_wire_hello h;
	int ret;

	ret = lchan_link_wire_hello_get(data, len, &h);
	if (ret)
		return ret;
	if (h.version_max < LCHAN_LINK_WIRE_VERSION_MIN ||
	    h.version_min > LCHAN_LINK_WIRE_VERSION_MAX)
		return -EPROTONOSUPPORT;
	return min_t(int, h.version_max, LCHAN_LINK_WIRE_VERSION_MAX);
}

/* An accept's hello: the one version it chose, if we speak it. */
int lchan_link_wire_hello_chosen(const void *data, size_t len)
{
	struct lchan_link_wire_hello h;
	int ret;

	ret = lchan_link_wire_hello_get(data, len, &h);
	if (ret)
		return ret;
	if (h.version_min != h.version_max)
		return -EBADMSG;
	if (h.version_min < LCHAN_LINK_WIRE_VERSION_MIN ||
	    h.version_min > LCHAN_LINK_WIRE_VERSION_MAX)
		return -EPROTONOSUPPORT;
	return h.version_min;
}

/* What a SETUP_REP's @status makes of the requester's connect. */
int lchan_link_wire_errno(u32 status)
{
	switch (status) {
	case LCHAN_LINK_ST_OK:
		return 0;
	case LCHAN_LINK_ST_NO_LISTENER:
	case LCHAN_LINK_ST_BACKLOG_FULL:
		return -ECONNREFUSED;
	case LCHAN_LINK_ST_NO_RESOURCES:
		return -ENOBUFS;
	case LCHAN_LINK_ST_BUSY:
		return -EBUSY;
	case LCHAN_LINK_ST_UNSUPPORTED:
		return -EOPNOTSUPP;
	}
	return -EPROTO;		/* BAD_REQUEST, and a status we do not know */
}
