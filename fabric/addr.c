// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * Addresses: libfabric names endpoints with sockaddr_in/sockaddr_in6
 * (FI_SOCKADDR_IN, FI_SOCKADDR_IN6), lchan with struct lchan_addr.
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

int lfi_addr_to_lchan(const struct sockaddr *sa, struct lchan_addr *la)
{
	memset(la, 0, sizeof(*la));
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *sin = (const struct sockaddr_in *)sa;

		la->family = AF_INET;
		la->port = ntohs(sin->sin_port);
		memcpy(la->addr, &sin->sin_addr, 4);
		return 0;
	}
	if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)sa;

		la->family = AF_INET6;
		la->port = ntohs(sin6->sin6_port);
		la->scope_id = sin6->sin6_scope_id;
		memcpy(la->addr, &sin6->sin6_addr, 16);
		return 0;
	}
	return -FI_EINVAL;
}

size_t lfi_addr_from_lchan(const struct lchan_addr *la,
			   struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (la->family == AF_INET) {
		struct sockaddr_in *sin = (struct sockaddr_in *)ss;

		sin->sin_family = AF_INET;
		sin->sin_port = htons(la->port);
		memcpy(&sin->sin_addr, la->addr, 4);
		return sizeof(*sin);
	}
	if (la->family == AF_INET6) {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;

		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(la->port);
		sin6->sin6_scope_id = la->scope_id;
		memcpy(&sin6->sin6_addr, la->addr, 16);
		return sizeof(*sin6);
	}
	return 0;
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
