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
#include <linux/memcontrol.h>
#include <linux/mm.h>

#include "lchan.h"

/*
 * Several times what those charges take (a file, a socket with its inode,
 * a descriptor table's growth, a few segments): the check must not be the
 * smaller of the two.
 */
#define LCHAN_CHARGE_ROOM_PAGES	16

/*
 * Whether each cgroup from the caller's up has @pages below its limit by
 * its counter alone (cgroup v2: v1's counter with swap is not read).
 * Charges cached per CPU count there as used, so this may understate the
 * room but not overstate it; where it finds too little, the room is tried.
 */
static bool lchan_charge_margin(unsigned long pages)
{
	struct mem_cgroup *memcg, *m;
	bool room = true;

	if (!cgroup_subsys_on_dfl(memory_cgrp_subsys))
		return false;
	memcg = get_mem_cgroup_from_mm(current->mm);
	/* The root, the one without a parent, has no limit. */
	for (m = memcg; m && parent_mem_cgroup(m); m = parent_mem_cgroup(m)) {
		if (page_counter_read(&m->memory) + pages >
		    READ_ONCE(m->memory.max)) {
			room = false;
			break;
		}
	}
	mem_cgroup_put(memcg);
	return room;
}

/* 0 when the caller's cgroup can take LCHAN_CHARGE_ROOM_PAGES; -ENOMEM. */
int lchan_charge_room(void)
{
	struct page *pages[LCHAN_CHARGE_ROOM_PAGES];
	int i, n, ret = 0;

	if (mem_cgroup_disabled() ||
	    lchan_charge_margin(LCHAN_CHARGE_ROOM_PAGES))
		return 0;
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
