/* SPDX-License-Identifier: LGPL-2.1-or-later OR MIT */
/*
 * ring_client ADDR PORT: the ring API on the connecting side.  It offers
 * 64 KiB of its memory to ring_server, which reads them by RDMA READ,
 * checks them and writes them back inverted by RDMA WRITE; one SEND each
 * way says where the memory is and that the server is done.  Exit 0 only
 * when every byte came back inverted.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <liblchan.h>

#define RING_LEN 65536

/* The client's SEND: where the server may READ and WRITE (host order). */
struct ring_offer {
	uint64_t addr;
	uint32_t rkey;
	uint32_t len;
};

/* The memory the server reads and writes, and the two messages. */
static _Alignas(4096) unsigned char region[RING_LEN];
static struct {
	struct ring_offer offer;
	char done[16];
} ctl;

static uint8_t pattern(size_t i)
{
	return (uint8_t)(i % 251);	/* no two pages alike */
}

static int fail(const char *what, int err)
{
	fprintf(stderr, "ring_client: %s: %s\n", what, strerror(-err));
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
		fprintf(stderr, "ring_client: request %llu: %s\n",
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
	struct lchan_mr data, msgs;
	unsigned len = 0;
	size_t i;
	int ret;

	/* REMOTE_WRITE needs LOCAL_WRITE; the receive needs it too. */
	ret = lchan_mr_reg(ctx, chan, region, sizeof(region),
			   LCHAN_ACCESS_LOCAL_WRITE | LCHAN_ACCESS_REMOTE_READ |
			   LCHAN_ACCESS_REMOTE_WRITE, &data);
	if (!ret)
		ret = lchan_mr_reg(ctx, chan, &ctl, sizeof(ctl),
				   LCHAN_ACCESS_LOCAL_WRITE, &msgs);
	if (ret)
		return fail("lchan_mr_reg", ret);
	/* Deferred establish: the receive is posted before the connection. */
	lchan_prep_recv(lchan_get_rqe(chan), &msgs, ctl.done,
			sizeof(ctl.done), 1);
	ret = lchan_submit(chan);
	if (ret < 0)
		return fail("lchan_submit", ret);
	ret = lchan_establish(chan, 0);
	if (ret)
		return fail("lchan_establish", ret);

	ctl.offer.addr = (uintptr_t)region;
	ctl.offer.rkey = data.rkey;
	ctl.offer.len = sizeof(region);
	lchan_prep_send(lchan_get_sqe(chan), &msgs, &ctl.offer,
			sizeof(ctl.offer), 2);
	ret = lchan_submit(chan);
	if (ret >= 0)
		ret = reap(chan, NULL);		/* the SEND */
	if (!ret)
		ret = reap(chan, &len);		/* the server's "done" */
	if (ret)
		return fail("exchange", ret);
	if (len != sizeof("done") || strcmp(ctl.done, "done"))
		return fail("the server's answer", -EBADMSG);
	for (i = 0; i < sizeof(region); i++)
		if (region[i] != (uint8_t)~pattern(i)) {
			fprintf(stderr, "ring_client: byte %zu is %#x\n", i,
				region[i]);
			return 1;
		}
	return 0;
}

int main(int argc, char **argv)
{
	struct lchan_opts opts = { .flags = LCHAN_DEFER_ESTABLISH };
	struct lchan_ctx ctx;
	struct lchan_chan chan;
	size_t i;
	int ret;

	if (argc != 3) {
		fprintf(stderr, "usage: ring_client ADDR PORT\n");
		return 2;
	}
	for (i = 0; i < sizeof(region); i++)
		region[i] = pattern(i);
	ret = lchan_ctx_open(&ctx);
	if (ret)
		return fail("lchan_ctx_open", ret);
	ret = lchan_connect(&ctx, argv[1], argv[2], &opts, &chan);
	ret = ret ? fail("lchan_connect", ret) : exchange(&ctx, &chan);
	lchan_chan_close(&chan);
	lchan_ctx_close(&ctx);		/* and with it the memory regions */
	if (!ret)
		printf("ring_client: offered 64 KiB at %s port %s; read, "
		       "written back inverted, every byte checked\n",
		       argv[1], argv[2]);
	return ret;
}
