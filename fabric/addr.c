// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * Addresses: libfabric names endpoints with sockaddr_in/sockaddr_in6
 * (FI_SOCKADDR_IN, FI_SOCKADDR_IN6), lchan with struct lchan_addr;
 * liblchan converts between the two.
 */
#include <errno.h>
#include <string.h>
#include <arpa/inet.h>

#include "lfi.h"

size_t lfi_addr_len(const struct sockaddr *sa)
{
	switch (sa->sa_family) {
	case AF_INET:
		return sizeof(struct sockaddr_in);
	case AF_INET6:
		return sizeof(struct sockaddr_in6);
	}
	return 0;
}

/*
 * liblchan's conversion, with the length as libfabric counts it: 0 when
 * @la holds no address.
 */
size_t lfi_addr_from_lchan(const struct lchan_addr *la,
			   struct sockaddr_storage *ss)
{
	int len = lchan_addr_to_sockaddr(la, ss);

	return len < 0 ? 0 : (size_t)len;
}

bool lfi_addr_is_any(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return ((const struct sockaddr_in *)sa)->sin_addr.s_addr ==
		       htonl(INADDR_ANY);
	if (sa->sa_family == AF_INET6)
		return !memcmp(&((const struct sockaddr_in6 *)sa)->sin6_addr,
			       &in6addr_any, 16);
	return true;
}

/* fi_getname's contract: copy what fits, say the full size. */
int lfi_addr_copy_out(const void *addr, size_t len, void *buf, size_t *buflen)
{
	size_t room = *buflen;

	*buflen = len;
	if (room < len)
		return -FI_ETOOSMALL;
	memcpy(buf, addr, len);
	return 0;
}
