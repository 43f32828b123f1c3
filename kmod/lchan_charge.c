// SPDX-License-Identifier: GPL-2.0
/*
 * Room in the caller's memory cgroup for what others charge to it on
 * lchan's behalf.  lchan's own allocations give up quietly at the limit
 * (LCHAN_GFP_USER), but a call also makes the kernel charge the caller
 * with allocations that do not: the channel's file and descriptor table,
 * and on iWARP the TCP sockets made in the caller's context (the one that
 * holds the local port, the device's own listening or connecting socket,
 * whose SYN is charged with __GFP_NOFAIL).  At the limit those wake the
 * cgroup's OOM killer.  So before them the call makes sure of room for
 * them, charged and given back at once, and fails with -ENOMEM without it.
 */
#include <linux/gfp.h>
#include <linux/mm.h>

#include "lchan.h"

/*
 * Several times what those charges take (a file, a socket with its inode,
 * a descriptor table's growth, a few segments): the check must not be the
 * smaller of the two.
 */
#define LCHAN_CHARGE_ROOM_PAGES	16

/* 0 when the caller's cgroup can take LCHAN_CHARGE_ROOM_PAGES; -ENOMEM. */
int lchan_charge_room(void)
{
	struct page *pages[LCHAN_CHARGE_ROOM_PAGES];
	int i, n, ret = 0;

	for (n = 0; n < LCHAN_CHARGE_ROOM_PAGES; n++) {
		pages[n] = alloc_page(LCHAN_GFP_USER);
		if (!pages[n]) {
			ret = -ENOMEM;
			break;
		}
	}
	for (i = 0; i < n; i++)
		__free_page(pages[i]);
	return ret;
}
