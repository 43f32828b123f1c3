// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/* Connect to HOST PORT, send one message, wait for its completion. */
#include <stdio.h>
#include <string.h>
#include <liblchan.h>

int main(int argc, char **argv)
{
	static char buf[4096] __attribute__((aligned(4096)));
	struct lchan_ctx ctx;
	struct lchan_chan chan;
	struct lchan_mr mr;
	struct lchan_cqe *cqe;
	int ret;

	if (argc != 3 || lchan_ctx_open(&ctx))
		return 2;
	ret = lchan_connect(&ctx, argv[1], argv[2], NULL, &chan);
	if (!ret)
		ret = lchan_mr_reg(&ctx, &chan, buf, sizeof(buf), 0, &mr);
	if (ret) {
		fprintf(stderr, "lchan: %s\n", strerror(-ret));
		return 1;
	}
	strcpy(buf, "hello over RDMA");
	lchan_prep_send(lchan_get_sqe(&chan), &mr, buf, strlen(buf) + 1, 1);
	lchan_submit(&chan);
	ret = lchan_wait_cqe(&chan, &cqe, 5000);
	if (!ret) {
		printf("send: %s\n", lchan_cqe_status_str(cqe->status));
		ret = cqe->status;
		lchan_cqe_seen(&chan);
	}
	lchan_chan_close(&chan);
	lchan_ctx_close(&ctx);
	return ret ? 1 : 0;
}
