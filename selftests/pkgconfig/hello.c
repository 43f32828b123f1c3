// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * A program from outside the lchan tree: it is built only with
 *
 *   cc $(pkg-config --cflags liblchan) hello.c $(pkg-config --libs liblchan)
 *
 * against an installed liblchan.  It asks the module what it offers and
 * says which liblchan it runs with.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include <liblchan.h>

int main(void)
{
	struct lchan_info info;
	struct lchan_ctx ctx;
	Dl_info dl;
	int ret;

	if (dladdr((void *)lchan_query, &dl) && dl.dli_fname)
		printf("liblchan: %s\n", dl.dli_fname);
	ret = lchan_ctx_open(&ctx);
	if (ret) {
		fprintf(stderr, "hello: %s: %s\n", LCHAN_DEVICE_PATH,
			strerror(-ret));
		return 1;
	}
	ret = lchan_query(&ctx, &info);
	lchan_ctx_close(&ctx);
	if (ret) {
		fprintf(stderr, "hello: lchan_query: %s\n", strerror(-ret));
		return 1;
	}
	printf("abi_version: %u\n", info.abi_version);
	printf("max_entries: %u\n", info.max_entries);
	printf("features: 0x%llx\n", (unsigned long long)info.features);
	return 0;
}
