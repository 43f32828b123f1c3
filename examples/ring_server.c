/* SPDX-License-Identifier: LGPL-2.1-or-later OR MIT */
/*
 * ring_server ADDR PORT: the ring API on the accepting side, the peer of
 * ring_client.  It accepts one channel, receives the client's offer of
 * memory, reads it by RDMA READ and checks every byte, writes it back
 * inverted by RDMA WRITE and SENDs "done".  Exit 0 only when all of it
 * succeeded.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <liblchan.h>

#define RING_LEN 65536

/* The client's SEND: where this side may READ and WRITE (host order). */
struct ring_offer {
	uint64_t addr;
	uint32_t rkey;
	uint32_t len;
};

/* Where the READ lands and the WRITE leaves from, and the two messages. */
static _Alignas(4096) unsigned char region[RING_LEN];
static struct {
	struct ring_offer offer;
	char done[8];
} ctl = { .done = "done" };

static uint8_t pattern(size_t i)
{
	return (uint8_t)(i % 251);
}

static int fail(const char *what, int err)
{
	fprintf(stderr, "ring_server: %s: %s\n", what, strerror(-err));
	return 1;
}

/* The next completion: 0, its wait's error, or -EIO for a bad status. */
static int reap(struct lchan_chan *chan, unsigned *len)
{
	struct lchan_cqe *cqe;
	int ret = lchan_wait_cqe(chan, &cqe, 10000);

	if (ret)
		return ret;
	if (cqe->status) {
		fprintf(stderr, "ring_server: request %llu: %s\n",
			(unsigned long long)cqe->user_data,
			lchan_cqe_status_str(cqe->status));
		ret = -EIO;
	} else if (len) {
		*len = cqe->byte_len;
	}
	lchan_cqe_seen(chan);
	return ret;
}

static int exchange(struct lchan_ctx *ctx, struct lchan_chan *chan)
{
	const struct ring_offer *o = &ctl.offer;
	struct lchan_mr data, msgs;
	unsigned len = 0;
	size_t i;
	int ret;

	/* A READ writes into local memory: LOCAL_WRITE, as a receive. */
	ret = lchan_mr_reg(ctx, chan, region, sizeof(region),
			   LCHAN_ACCESS_LOCAL_WRITE, &data);
	if (!ret)
		ret = lchan_mr_reg(ctx, chan, &ctl, sizeof(ctl),
				   LCHAN_ACCESS_LOCAL_WRITE, &msgs);
	if (ret)
		return fail("lchan_mr_reg", ret);
	/*
	 * Accepted deferred: the receive for the client's first message is
	 * posted before the connection exists (iWARP has no retry for a
	 * SEND that finds none).
	 */
	lchan_prep_recv(lchan_get_rqe(chan), &msgs, &ctl.offer,
			sizeof(ctl.offer), 1);
	ret = lchan_submit(chan);
	if (ret < 0)
		return fail("lchan_submit", ret);
	ret = lchan_establish(chan, 0);
	if (ret)
		return fail("lchan_establish", ret);
	ret = reap(chan, &len);
	if (ret)
		return fail("waiting for the offer", ret);
	if (len != sizeof(*o) || o->len != sizeof(region))
		return fail("the client's offer", -EBADMSG);

	lchan_prep_read(lchan_get_sqe(chan), &data, region, sizeof(region),
			o->addr, o->rkey, 2);
	ret = lchan_submit(chan);
	if (ret >= 0)
		ret = reap(chan, NULL);
	if (ret)
		return fail("RDMA READ", ret);
	for (i = 0; i < sizeof(region); i++) {
		if (region[i] != pattern(i)) {
			fprintf(stderr, "ring_server: byte %zu is %#x\n", i,
				region[i]);
			return 1;
		}
		region[i] = (uint8_t)~region[i];
	}

	/* RC delivers in order: the WRITE's bytes are there before "done". */
	lchan_prep_write(lchan_get_sqe(chan), &data, region, sizeof(region),
			 o->addr, o->rkey, 3);
	lchan_prep_send(lchan_get_sqe(chan), &msgs, ctl.done,
			sizeof("done"), 4);
	ret = lchan_submit(chan);
	if (ret >= 0)
		ret = reap(chan, NULL);
	if (!ret)
		ret = reap(chan, NULL);
	return ret ? fail("RDMA WRITE and SEND", ret) : 0;
}

int main(int argc, char **argv)
{
	struct lchan_opts opts = { .flags = LCHAN_DEFER_ESTABLISH };
	struct lchan_listener lst;
	struct lchan_ctx ctx;
	struct lchan_chan chan;
	int ret;

	if (argc != 3) {
		fprintf(stderr, "usage: ring_server ADDR PORT\n");
		return 2;
	}
	ret = lchan_ctx_open(&ctx);
	if (ret)
		return fail("lchan_ctx_open", ret);
	ret = lchan_listen(&ctx, argv[1], argv[2], 1, 0, &lst);
	if (ret) {
		lchan_ctx_close(&ctx);
		return fail("lchan_listen", ret);
	}
	ret = lchan_accept(&lst, &opts, &chan);
	ret = ret ? fail("lchan_accept", ret) : exchange(&ctx, &chan);
	lchan_chan_close(&chan);
	lchan_listener_close(&lst);
	lchan_ctx_close(&ctx);
	if (!ret)
		printf("ring_server: read 64 KiB by RDMA READ, every byte "
		       "checked, wrote them back inverted by RDMA WRITE\n");
	return ret;
}
