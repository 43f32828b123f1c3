/* SPDX-License-Identifier: LGPL-2.1-or-later OR MIT */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <liblchan.h>
#include <liblchan_msg.h>

int main(int argc, char **argv)		/* msg_client ADDR PORT */
{
	static char out[65536], in[sizeof(out)];
	struct lchan_msg *m = NULL;
	struct lchan_ctx ctx;
	ssize_t n = -EINVAL;
	int ok;

	for (size_t i = 0; i < sizeof(out); i++)
		out[i] = (char)(i % 251);
	if (argc == 3 && !(n = lchan_ctx_open(&ctx))) {
		n = lchan_msg_connect(&ctx, argv[1], argv[2], NULL, &m);
		lchan_ctx_close(&ctx);		/* m keeps what it needs */
	}
	if (!n)		/* above 8 KiB: the server takes it by RDMA READ */
		n = lchan_msg_send(m, out, sizeof(out), 0);
	if (n > 0)
		n = lchan_msg_recv(m, in, sizeof(in), 0, 10000);
	lchan_msg_close(m);		/* end of stream for the server */
	ok = n == (ssize_t)sizeof(out) && !memcmp(in, out, sizeof(out));
	fprintf(ok ? stdout : stderr, "msg_client: %s\n",
		ok ? "64 KiB echoed" : strerror(n < 0 ? (int)-n : EBADMSG));
	return !ok;
}
