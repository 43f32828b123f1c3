// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * liblchan addresses: struct lchan_addr to and from a socket address, a
 * host and port, and text.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netdb.h>
#include <stdio.h>
#include <sys/socket.h>
#include <netinet/in.h>

#include "liblchan.h"

int lchan_addr_from_sockaddr(const struct sockaddr *sa,
			     struct lchan_addr *addr)
{
	memset(addr, 0, sizeof(*addr));
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *sin = (const struct sockaddr_in *)sa;

		addr->family = AF_INET;
		addr->port = ntohs(sin->sin_port);
		memcpy(addr->addr, &sin->sin_addr, 4);
		return 0;
	}
	if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *sin6 =
			(const struct sockaddr_in6 *)sa;

		addr->family = AF_INET6;
		addr->port = ntohs(sin6->sin6_port);
		addr->scope_id = sin6->sin6_scope_id;
		memcpy(addr->addr, &sin6->sin6_addr, 16);
		return 0;
	}
	return -EAFNOSUPPORT;
}

/* Returns the length of the socket address written. */
int lchan_addr_to_sockaddr(const struct lchan_addr *addr,
			   struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (addr->family == AF_INET) {
		struct sockaddr_in *sin = (struct sockaddr_in *)ss;

		sin->sin_family = AF_INET;
		sin->sin_port = htons(addr->port);
		memcpy(&sin->sin_addr, addr->addr, 4);
		return (int)sizeof(*sin);
	}
	if (addr->family == AF_INET6) {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;

		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(addr->port);
		sin6->sin6_scope_id = addr->scope_id;
		memcpy(&sin6->sin6_addr, addr->addr, 16);
		return (int)sizeof(*sin6);
	}
	return -EAFNOSUPPORT;
}

/* Host and port strings to an lchan_addr; host NULL or "" is "any". */
int lchan_addr_parse(const char *host, const char *port,
		     struct lchan_addr *addr)
{
	struct addrinfo hints = {
		.ai_socktype = SOCK_STREAM,
		.ai_flags = AI_NUMERICSERV | (host && *host ? 0 : AI_PASSIVE),
	};
	struct addrinfo *res;
	int ret;

	memset(addr, 0, sizeof(*addr));
	ret = getaddrinfo(host && *host ? host : NULL, port ? port : "0",
			  &hints, &res);
	if (ret)
		return ret == EAI_SYSTEM ? (errno ? -errno : -EIO) :
		       ret == EAI_MEMORY ? -ENOMEM : -EHOSTUNREACH;
	ret = lchan_addr_from_sockaddr(res->ai_addr, addr);
	freeaddrinfo(res);
	return ret;
}

int lchan_addr_format(const struct lchan_addr *addr, char *buf, size_t len)
{
	char ip[INET6_ADDRSTRLEN];
	int n;

	if (!inet_ntop(addr->family, addr->addr, ip, sizeof(ip)))
		return errno ? -errno : -EIO;
	n = snprintf(buf, len, addr->family == AF_INET6 ? "[%s]:%u" : "%s:%u",
		     ip, addr->port);
	return n < 0 || (size_t)n >= len ? -ENOSPC : 0;
}
