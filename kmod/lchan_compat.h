/* SPDX-License-Identifier: GPL-2.0 */
/*
 * lchan kernel compatibility: the module uses the kernel API of the newest
 * kernel it supports (6.12); this header supplies the parts of it that
 * older kernels (back to 6.1) lack.  The module's only kernel version tests
 * are here.
 */
#ifndef LCHAN_COMPAT_H
#define LCHAN_COMPAT_H

#include <linux/file.h>
#include <linux/mm.h>
#include <linux/version.h>

/*
 * 6.12 packed struct fd into one word (file pointer and flags) and added
 * fd_file() to read the file; before, it was the member ->file.
 */
#ifndef fd_file
#define fd_file(f) ((f).file)
#endif

/*
 * 6.3 made vma->vm_flags read-only and added vm_flags_set(), so that a
 * change of the flags also write-locks the VMA (per-VMA locking).
 */
#if KERNEL_VERSION(6, 3, 0) > LINUX_VERSION_CODE
static inline void vm_flags_set(struct vm_area_struct *vma, vm_flags_t flags)
{
	vma->vm_flags |= flags;
}
#endif

#endif /* LCHAN_COMPAT_H */
