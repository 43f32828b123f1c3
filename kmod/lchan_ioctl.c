// SPDX-License-Identifier: GPL-2.0
/*
 * ioctl dispatch for every lchan file (as iommufd does it): each file type
 * has a table of struct lchan_ioctl_op, one row per command, and this file
 * does what every command shares, so that a handler holds only its logic.
 *
 * Every argument starts with { __u32 size; __u32 flags; }.  A size below
 * the first released layout is EINVAL, one above a page E2BIG; a size
 * above the kernel's struct must have a zero tail (E2BIG), which
 * copy_struct_from_user() checks.  A shorter struct is zero-filled.
 */
#include <linux/uaccess.h>

#include "lchan.h"

/*
 * Look the command up in @ops, copy its argument in, check it, check that
 * the caller is the owner of @owner if the command needs that, then run
 * the handler.  Argument errors come before the owner check: a process
 * that is not the owner learns that its argument is bad first.
 */
long lchan_ioctl_dispatch(struct file *file, unsigned int cmd,
			  unsigned long arg, const struct lchan_ioctl_op *ops,
			  size_t nr_ops, struct lchan_context *owner)
{
	struct lchan_ucmd ucmd = {
		.file = file,
		.ubuffer = (void __user *)arg,
	};
	const struct lchan_ioctl_op *op;
	union lchan_ioctl_buf buf;
	long ret;

	/* A handful of rows: a search costs less than a sparse table. */
	for (op = ops; op < ops + nr_ops; op++)
		if (op->ioctl_num == cmd)
			break;
	if (op == ops + nr_ops)
		return -ENOTTY;

	if (!ucmd.ubuffer)
		return -EFAULT;
	if (get_user(ucmd.user_size, (u32 __user *)ucmd.ubuffer))
		return -EFAULT;
	if (ucmd.user_size < op->min_size)
		return -EINVAL;
	if (ucmd.user_size > PAGE_SIZE)
		return -E2BIG;
	ucmd.cmd = &buf;
	ucmd.size = op->size;
	ret = copy_struct_from_user(ucmd.cmd, op->size, ucmd.ubuffer,
				    ucmd.user_size);
	if (ret)
		return ret;

	if (op->check) {
		ret = op->check(&ucmd);
		if (ret)
			goto out;
	}
	if (op->owner_only && !lchan_ctx_owned(owner)) {
		ret = -EPERM;
		goto out;
	}
	ret = op->execute(&ucmd);
out:
	if (op->done)
		op->done(&ucmd, ret);
	return ret;
}

/*
 * Write the argument back, never more than the caller's struct holds: the
 * size is read from it again and at most the kernel's struct is written.
 */
long lchan_ioctl_respond(struct lchan_ucmd *ucmd)
{
	u32 usize;

	if (get_user(usize, (u32 __user *)ucmd->ubuffer))
		return -EFAULT;
	if (copy_to_user(ucmd->ubuffer, ucmd->cmd,
			 min_t(size_t, usize, ucmd->size)))
		return -EFAULT;
	return 0;
}
