// SPDX-License-Identifier: GPL-2.0
/*
 * The hello: 8 bytes an lchan kernel puts in a connection's private data
 * (the connection data rdma_cm programs see) when its peer must be lchan,
 * big-endian: a magic, the highest version its kernel speaks (in a reply:
 * the version both use) and flags.  The iWARP opening exchange asks for
 * itself with it (lchan_iwarp.c).  A stream channel's request and reply
 * carry it with LCHAN_HELLO_STREAM on every transport: a stream accept
 * takes only a request that says it, any other accept only one that does
 * not (lchan_listen.c), and a connecting stream only a reply that says it,
 * so that neither end of a stream ever meets a peer that would read its
 * bytes as something else.  Later versions may append fields.
 */
#include "lchan.h"

struct lchan_hello {
	__be32 magic;
	u8 version;
	u8 flags;		/* LCHAN_HELLO_* */
	u8 resv[2];		/* 0 when sent, ignored when read */
};

#define LCHAN_HELLO_MAGIC	0x6c63686e	/* "lchn" */
#define LCHAN_HELLO_VERSION	1

static const struct lchan_hello lchan_hello_plain = {
	.magic = cpu_to_be32(LCHAN_HELLO_MAGIC),
	.version = LCHAN_HELLO_VERSION,
};

static const struct lchan_hello lchan_hello_stream = {
	.magic = cpu_to_be32(LCHAN_HELLO_MAGIC),
	.version = LCHAN_HELLO_VERSION,
	.flags = LCHAN_HELLO_STREAM,
};

/* @param carries the hello with @flags (0 or LCHAN_HELLO_STREAM). */
void lchan_hello_param(struct rdma_conn_param *param, u8 flags)
{
	param->private_data = flags & LCHAN_HELLO_STREAM ?
			      &lchan_hello_stream : &lchan_hello_plain;
	param->private_data_len = sizeof(struct lchan_hello);
}

/*
 * The flags of the hello in @conn's private data (the peer's, so read by
 * copy and checked), or -ENOENT when it holds none of a version we speak.
 */
int lchan_hello_read(const struct rdma_conn_param *conn)
{
	struct lchan_hello h;

	if (!conn->private_data || conn->private_data_len < sizeof(h))
		return -ENOENT;
	memcpy(&h, conn->private_data, sizeof(h));
	if (be32_to_cpu(h.magic) != LCHAN_HELLO_MAGIC ||
	    h.version < LCHAN_HELLO_VERSION)
		return -ENOENT;
	return h.flags;
}

/* Whether @conn's private data holds a stream's hello. */
bool lchan_hello_says_stream(const struct rdma_conn_param *conn)
{
	int flags = lchan_hello_read(conn);

	return flags >= 0 && (flags & LCHAN_HELLO_STREAM);
}
