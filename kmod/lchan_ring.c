// SPDX-License-Identifier: GPL-2.0
/*
 * The shared rings of a channel: memory, mmap, indices and CQE writing.
 * Reading entries is in lchan_wr.c, flow control (CQ and WR slots) in
 * lchan_flow.c, posting and completions in lchan_post.c.
 *
 * Ownership and ordering.  Each index word has exactly one writer:
 *   SQ/RQ tail, CQ head: the application.  SQ/RQ head, CQ tail: the kernel.
 * The kernel keeps private copies of the indices it writes (sq.head_k,
 * rq.head_k, cq_tail_k) and never reads them back from the mapping.  Every
 * index read from the mapping is untrusted: it is masked before use and a
 * distance larger than the ring is refused.
 *
 * Pairs (application side in liblchan.h):
 *  - The app fills an SQE/RQE, then store-releases the tail.  The kernel
 *    load-acquires the tail before reading entries, so it sees them whole.
 *  - The kernel reads an entry (each field once, READ_ONCE into a local),
 *    then store-releases its head.  The app load-acquires the head before
 *    reusing the slot, so the kernel's reads are done before the app writes.
 *  - The kernel writes a CQE, then store-releases the CQ tail.  The app
 *    load-acquires the tail before reading the CQE.
 *  - The app reads a CQE, then store-releases the CQ head.  The kernel
 *    load-acquires the CQ head before it lets a completion reuse the slot.
 *
 * Lockless peeks at an application's tail (the poller's question whether
 * there is work, sysfs) are READ_ONCE() hints only: entries are read after
 * the acquire in lchan_post_submit(), which takes the SQ tail before the RQ
 * tail.  The NEED_WAKEUP flags word has its own protocol (lchan_poller.c),
 * and poll() its own barrier pair (lchan_ring_wake()).
 *
 * Every CQE is written into a slot claimed beforehand (lchan_flow.c), so
 * the CQ ring never overflows.
 */
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <linux/nospec.h>
#include <linux/log2.h>

#include "lchan.h"
#include "lchan_trace.h"

/*
 * The header at the start of the ring mapping, one cache line per inner
 * struct.  Each index has one writer (see above) and a line of its own,
 * so the application and the kernel never write the same line.  The
 * entries follow the header: SQEs, then RQEs, then CQEs.
 *
 * The line is 64 bytes, not L1_CACHE_BYTES: the layout is seen by user
 * space and must not vary with the architecture or the kernel config.
 */
#define LCHAN_RING_LINE 64

struct lchan_ring_hdr {
	struct {
		u32 sq_head;
	} __aligned(LCHAN_RING_LINE);
	struct {
		u32 sq_tail;
	} __aligned(LCHAN_RING_LINE);
	struct {
		u32 rq_head;
	} __aligned(LCHAN_RING_LINE);
	struct {
		u32 rq_tail;
	} __aligned(LCHAN_RING_LINE);
	struct {
		u32 cq_head;
	} __aligned(LCHAN_RING_LINE);
	struct {
		u32 cq_tail;
	} __aligned(LCHAN_RING_LINE);
	struct {			/* written once at setup */
		u32 sq_ring_mask;
		u32 sq_ring_entries;
		u32 rq_ring_mask;
		u32 rq_ring_entries;
		u32 cq_ring_mask;
		u32 cq_ring_entries;
	} __aligned(LCHAN_RING_LINE);
	struct {			/* kernel-written */
		u32 flags;		/* LCHAN_SQ_NEED_WAKEUP */
		u32 cq_overflow;	/* never written: stays 0 */
		u32 rq_posted;		/* rq.head once at the QP */
	} __aligned(LCHAN_RING_LINE);
};

#define LCHAN_RING_OFF(member) offsetof(struct lchan_ring_hdr, member)

/*
 * The layout is ABI.  User space should find every field through the
 * offsets LCHAN_IOC_CHAN_INFO reports, and liblchan and the selftests
 * hard-code none, but a program that saved or hard-coded them would break
 * silently; so the offsets are pinned here and change only on purpose,
 * never through an edit to the struct or a config.  The SQEs start at
 * sizeof(), a whole number of lines; the ring's vmap() view is
 * page-aligned, so the struct's alignment holds in the mapping.
 */
static_assert(LCHAN_RING_OFF(sq_head) == 0);
static_assert(LCHAN_RING_OFF(sq_tail) == 64);
static_assert(LCHAN_RING_OFF(rq_head) == 128);
static_assert(LCHAN_RING_OFF(rq_tail) == 192);
static_assert(LCHAN_RING_OFF(cq_head) == 256);
static_assert(LCHAN_RING_OFF(cq_tail) == 320);
static_assert(LCHAN_RING_OFF(sq_ring_mask) == 384);
static_assert(LCHAN_RING_OFF(sq_ring_entries) == 388);
static_assert(LCHAN_RING_OFF(rq_ring_mask) == 392);
static_assert(LCHAN_RING_OFF(rq_ring_entries) == 396);
static_assert(LCHAN_RING_OFF(cq_ring_mask) == 400);
static_assert(LCHAN_RING_OFF(cq_ring_entries) == 404);
static_assert(LCHAN_RING_OFF(flags) == 448);
static_assert(LCHAN_RING_OFF(cq_overflow) == 452);
static_assert(LCHAN_RING_OFF(rq_posted) == 456);
static_assert(sizeof(struct lchan_ring_hdr) == 512);
static_assert(__alignof__(struct lchan_ring_hdr) == LCHAN_RING_LINE);
/* A queue's WR slots (a power of two of them) fill whole pages. */
static_assert((sizeof(struct lchan_wr) & (sizeof(struct lchan_wr) - 1)) == 0);

static int lchan_ring_size_one(u32 asked, u32 max, u32 *out)
{
	if (!asked)
		asked = LCHAN_DEFAULT_ENTRIES;
	if (asked > max)
		return -EINVAL;
	*out = roundup_pow_of_two(asked);
	return 0;
}

static void lchan_ring_fill_off(struct lchan_ring_offsets *off, u32 head,
				u32 tail, u32 mask, u32 count, u32 entries)
{
	off->head = head;
	off->tail = tail;
	off->ring_mask = mask;
	off->ring_entries = count;
	off->entries = entries;
	off->flags = LCHAN_RING_OFF(flags);
}

/* What can be checked before a device is known. */
int lchan_ring_sizes_check(const struct lchan_ring_sizes *sizes)
{
	if (sizes->resv || sizes->sq_entries > LCHAN_MAX_ENTRIES ||
	    sizes->rq_entries > LCHAN_MAX_ENTRIES ||
	    sizes->cq_entries > 2 * LCHAN_MAX_ENTRIES)
		return -EINVAL;
	return 0;
}

/*
 * The ring's pages, charged to the caller's memory cgroup (LCHAN_GFP_USER)
 * the way the kernel charges its own user-mapped rings: whole pages, a
 * vmap() view for the kernel, the same page frames in the process's
 * mapping at mmap().  At the cgroup's limit this fails with -ENOMEM.
 */
static void lchan_ring_free_pages(struct lchan_ring *ring)
{
	unsigned int i;

	for (i = 0; i < ring->nr_pages; i++)
		__free_page(ring->pages[i]);
	kvfree(ring->pages);
	ring->pages = NULL;
	ring->nr_pages = 0;
}

static int lchan_ring_alloc_mem(struct lchan_ring *ring, size_t size)
{
	unsigned int nr = size >> PAGE_SHIFT;

	ring->pages = kvcalloc(nr, sizeof(*ring->pages), LCHAN_GFP_USER);
	if (!ring->pages)
		return -ENOMEM;
	for (ring->nr_pages = 0; ring->nr_pages < nr; ring->nr_pages++) {
		struct page *page = alloc_page(LCHAN_GFP_USER | __GFP_ZERO);

		if (!page)
			goto err_free_pages;
		ring->pages[ring->nr_pages] = page;
	}
	ring->mem = vmap(ring->pages, nr, VM_MAP, PAGE_KERNEL);
	if (!ring->mem)
		goto err_free_pages;
	ring->size = size;
	return 0;

err_free_pages:
	lchan_ring_free_pages(ring);
	return -ENOMEM;
}

int lchan_ring_alloc(struct lchan_channel *chan,
		     const struct lchan_ring_sizes *sizes)
{
	struct lchan_ring *ring = &chan->ring;
	struct lchan_chan_info *info = &ring->info;
	u32 max = min_t(u32, LCHAN_MAX_ENTRIES,
			chan->dev->ibdev->attrs.max_qp_wr - 1);
	struct lchan_ring_hdr *hdr;
	size_t sq_off, rq_off, cq_off, size;
	int ret;

	if (sizes->resv)
		return -EINVAL;
	ret = lchan_ring_size_one(sizes->sq_entries, max, &ring->sq.entries);
	if (ret)
		return ret;
	ret = lchan_ring_size_one(sizes->rq_entries, max, &ring->rq.entries);
	if (ret)
		return ret;
	if (sizes->cq_entries > 2 * LCHAN_MAX_ENTRIES)
		return -EINVAL;
	ring->cq_entries = roundup_pow_of_two(max3(sizes->cq_entries,
						   ring->sq.entries +
						   ring->rq.entries, 1U));

	sq_off = sizeof(*hdr);
	rq_off = sq_off + ring->sq.entries * sizeof(struct lchan_sqe);
	cq_off = rq_off + ring->rq.entries * sizeof(struct lchan_rqe);
	size = PAGE_ALIGN(cq_off + ring->cq_entries * sizeof(struct lchan_cqe));

	ret = lchan_ring_alloc_mem(ring, size);
	if (ret)
		return ret;

	/*
	 * Not cleared, which would slow every set-up: a slot is written
	 * whole when it is taken, and only taken slots are read
	 * (lchan_flow.c).
	 */
	ring->sq.wr = kvmalloc_array(ring->sq.entries, sizeof(*ring->sq.wr),
				     LCHAN_GFP_USER);
	ring->rq.wr = kvmalloc_array(ring->rq.entries, sizeof(*ring->rq.wr),
				     LCHAN_GFP_USER);
	ring->post_sge = kcalloc(LCHAN_POST_SGES, sizeof(*ring->post_sge),
				 LCHAN_GFP_USER);
	if (!ring->sq.wr || !ring->rq.wr || !ring->post_sge) {
		lchan_ring_free(ring);
		return -ENOMEM;
	}

	hdr = ring->mem;
	ring->sq.head = &hdr->sq_head;
	ring->sq.tail = &hdr->sq_tail;
	ring->rq.head = &hdr->rq_head;
	ring->rq.posted = &hdr->rq_posted;
	ring->rq.tail = &hdr->rq_tail;
	ring->cq_head = &hdr->cq_head;
	ring->cq_tail = &hdr->cq_tail;
	ring->sqes = ring->mem + sq_off;
	ring->rqes = ring->mem + rq_off;
	ring->cqes = ring->mem + cq_off;

	/* Masks and sizes for the app; the kernel never reads them back. */
	hdr->sq_ring_mask = ring->sq.entries - 1;
	hdr->sq_ring_entries = ring->sq.entries;
	hdr->rq_ring_mask = ring->rq.entries - 1;
	hdr->rq_ring_entries = ring->rq.entries;
	hdr->cq_ring_mask = ring->cq_entries - 1;
	hdr->cq_ring_entries = ring->cq_entries;

	info->mmap_size = size;
	lchan_ring_fill_off(&info->sq_off, LCHAN_RING_OFF(sq_head),
			    LCHAN_RING_OFF(sq_tail), LCHAN_RING_OFF(sq_ring_mask),
			    LCHAN_RING_OFF(sq_ring_entries), sq_off);
	lchan_ring_fill_off(&info->rq_off, LCHAN_RING_OFF(rq_head),
			    LCHAN_RING_OFF(rq_tail), LCHAN_RING_OFF(rq_ring_mask),
			    LCHAN_RING_OFF(rq_ring_entries), rq_off);
	lchan_ring_fill_off(&info->cq_off, LCHAN_RING_OFF(cq_head),
			    LCHAN_RING_OFF(cq_tail), LCHAN_RING_OFF(cq_ring_mask),
			    LCHAN_RING_OFF(cq_ring_entries), cq_off);
	info->cq_off.overflow = LCHAN_RING_OFF(cq_overflow);
	info->rq_off.posted = LCHAN_RING_OFF(rq_posted);
	return 0;
}

/*
 * The kernel memory the rings of a channel hold: the mapping, the WR slots
 * of both queues and the SGE lists of a post.  0 before lchan_ring_alloc().
 */
size_t lchan_ring_kmem_bytes(const struct lchan_ring *ring)
{
	if (!ring->mem)
		return 0;
	return ring->size + (size_t)(ring->sq.entries + ring->rq.entries) *
			    sizeof(struct lchan_wr) +
	       LCHAN_POST_SGES * sizeof(*ring->post_sge);
}

void lchan_ring_free(struct lchan_ring *ring)
{
	kvfree(ring->sq.wr);
	kvfree(ring->rq.wr);
	kfree(ring->post_sge);
	ring->sq.wr = NULL;
	ring->rq.wr = NULL;
	ring->post_sge = NULL;
	if (ring->mem)
		vunmap(ring->mem);
	ring->mem = NULL;
	lchan_ring_free_pages(ring);
}

/*
 * A debugger's view of the mapping (ptrace, /proc/PID/mem): the pages are
 * not reachable by get_user_pages(), so the kernel asks here.  The
 * mapping's file keeps the channel, and so the ring, alive.  A mapping
 * whose head was unmapped, or which mprotect() split, starts at a later
 * ring page: vm_pgoff says which.
 */
static int lchan_ring_vm_access(struct vm_area_struct *vma,
				unsigned long addr, void *buf, int len,
				int write)
{
	struct lchan_channel *chan = vma->vm_file->private_data;
	struct lchan_ring *ring = &chan->ring;
	unsigned long off = addr - vma->vm_start +
		((vma->vm_pgoff - (LCHAN_OFF_RINGS >> PAGE_SHIFT)) << PAGE_SHIFT);

	/* Within this mapping: the next one is another VMA's to serve. */
	if (len <= 0 || addr >= vma->vm_end || off >= ring->size)
		return -EINVAL;
	len = min3((unsigned long)len, ring->size - off, vma->vm_end - addr);
	if (write)
		memcpy(ring->mem + off, buf, len);
	else
		memcpy(buf, ring->mem + off, len);
	return len;
}

static const struct vm_operations_struct lchan_ring_vm_ops = {
	.access = lchan_ring_vm_access,
};

/* Whether @vma maps a channel's rings: only lchan_ring_mmap() makes one. */
bool lchan_ring_is_mapping(const struct vm_area_struct *vma)
{
	return vma->vm_ops == &lchan_ring_vm_ops;
}

/*
 * The mapping holds a reference to the channel file (vm_file), so the
 * channel and its ring memory outlive every mapping: munmap after close
 * and close after munmap are both safe.
 *
 * Only a shared mapping: in a private one the application's stores would
 * land in copies the kernel never reads.  Never executable, now or after
 * an mprotect(): the rings hold data, never code.
 *
 * The pages go in as page frames, not as pages the mapping references
 * (VM_IO | VM_PFNMAP): get_user_pages() refuses them, so no memory region
 * can pin ring pages, however the address space changes between
 * lchan_mr.c's check and the device's pin, and no pin outlives the
 * channel.  The ring frees its pages only when the last mapping is gone.
 */
int lchan_ring_mmap(struct lchan_channel *chan, struct vm_area_struct *vma)
{
	struct lchan_ring *ring = &chan->ring;
	unsigned int i;
	int ret;

	if (!(vma->vm_flags & VM_SHARED))
		return -EINVAL;
	if (vma->vm_flags & VM_EXEC)
		return -EACCES;
	if (vma->vm_pgoff != (LCHAN_OFF_RINGS >> PAGE_SHIFT))
		return -EINVAL;
	if (vma->vm_end - vma->vm_start != ring->size)
		return -EINVAL;
	vm_flags_clear(vma, VM_MAYEXEC);
	vm_flags_set(vma, VM_DONTCOPY | VM_DONTEXPAND | VM_DONTDUMP);
	vma->vm_ops = &lchan_ring_vm_ops;
	for (i = 0; i < ring->nr_pages; i++) {
		ret = remap_pfn_range(vma, vma->vm_start + i * PAGE_SIZE,
				      page_to_pfn(ring->pages[i]), PAGE_SIZE,
				      vma->vm_page_prot);
		/* On error the caller unmaps what was inserted. */
		if (ret)
			return ret;
	}
	return 0;
}

/* Entries the app has published and the kernel not taken, or -1 if bogus. */
s64 lchan_ring_pending(u32 tail, u32 head_k, u32 entries)
{
	u32 pending = tail - head_k;

	return pending > entries ? -1LL : (s64)pending;
}

/* CQEs written and not yet consumed by the app; clamped if head is bogus. */
static u32 lchan_ring_cq_used(struct lchan_ring *ring, u32 tail_k)
{
	u32 head = smp_load_acquire(ring->cq_head); /* pairs with app release */
	u32 used = tail_k - head;

	return used > ring->cq_entries ? ring->cq_entries : used;
}

u32 lchan_ring_cq_ready(struct lchan_channel *chan)
{
	return lchan_ring_cq_used(&chan->ring, READ_ONCE(chan->ring.cq_tail_k));
}

/*
 * Entries the application published on @q that the kernel has not taken
 * yet.  The tail is the application's word: a diagnostic, not a count to
 * trust.
 */
u32 lchan_ring_held(const struct lchan_ring *ring, const struct lchan_queue *q)
{
	return ring->mem ? READ_ONCE(*q->tail) - READ_ONCE(q->head_k) : 0;
}

/* Write one CQE into a claimed slot and publish it.  cq_lock held. */
void lchan_ring_put_cqe(struct lchan_channel *chan,
			const struct lchan_cqe *src)
{
	struct lchan_ring *ring = &chan->ring;
	struct lchan_cqe *cqe;

	cqe = &ring->cqes[ring->cq_tail_k & (ring->cq_entries - 1)];
	memcpy(cqe, src, sizeof(*cqe));
	ring->cq_tail_k++;
	ring->inflight--;
	if (src->status) {
		chan->stats.err_cqes++;
		trace_lchan_cqe_error(chan->id, src->user_data, src->opcode,
				      src->status, src->vendor_err);
	}
	/* Pairs with the app's acquire of the CQ tail. */
	smp_store_release(ring->cq_tail, ring->cq_tail_k);
}

/* After a CQE: wq_has_sleeper() pairs with the smp_mb() in lchan_file_poll. */
void lchan_ring_wake(struct lchan_channel *chan)
{
	if (wq_has_sleeper(&chan->wq))
		wake_up(&chan->wq);
}

/* An error CQE for an entry that never reached the device. */
void lchan_ring_reject(struct lchan_channel *chan, u8 opcode, u64 user_data,
		       u32 status)
{
	struct lchan_cqe cqe = {
		.user_data = user_data,
		.opcode = opcode,
		.status = status,
	};

	spin_lock_bh(&chan->cq_lock);
	lchan_ring_put_cqe(chan, &cqe);
	spin_unlock_bh(&chan->cq_lock);
}
