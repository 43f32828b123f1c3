// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/lchan, the control file: opening it makes a context
 * (lchan_ctx.c); its ioctls set the context up, register memory, listen
 * and connect.
 */
#include <linux/fs.h>
#include <linux/cpumask.h>

#include "lchan.h"

static int lchan_ctl_open(struct inode *inode, struct file *file)
{
	struct lchan_context *ctx = lchan_ctx_new();

	if (IS_ERR(ctx))
		return PTR_ERR(ctx);
	file->private_data = ctx;
	return 0;
}

static int lchan_ctl_release(struct inode *inode, struct file *file)
{
	lchan_ctx_put(file->private_data);
	return 0;
}

long lchan_ioctl_info(struct lchan_ucmd *ucmd)
{
	struct lchan_info *info = ucmd->cmd;

	if (info->flags)
		return -EINVAL;
	info->abi_version = LCHAN_ABI_VERSION;
	info->max_entries = LCHAN_MAX_ENTRIES;
	info->features = LCHAN_FEATURES;
	return lchan_ioctl_respond(ucmd);
}

static int lchan_ioctl_ctx_setup_check(const struct lchan_ucmd *ucmd)
{
	const struct lchan_ctx_setup_args *req = ucmd->cmd;

	if ((req->flags & ~LCHAN_CTX_POLLER) || req->resv ||
	    req->idle_ms > LCHAN_MAX_TIMEOUT_MS)
		return -EINVAL;
	/* A CPU the caller may run on; the pool decides where it polls. */
	if (req->cpu < -1 || (req->cpu >= 0 && (req->cpu >= nr_cpu_ids ||
						!cpu_online(req->cpu) ||
						!cpumask_test_cpu(req->cpu,
							current->cpus_ptr))))
		return -EINVAL;
	if (req->attach_fd != -1 && !(req->flags & LCHAN_CTX_POLLER))
		return -EINVAL;
	return 0;
}

/*
 * Poller mode puts the context's channels on the administrator's pool of
 * poller threads (lchan_poller.c): no thread is made or pinned here.
 * idle_ms is capped by the default, the threads being shared; cpu is only
 * checked.
 */
long lchan_ioctl_ctx_setup(struct lchan_ucmd *ucmd)
{
	struct lchan_context *ctx = ucmd->file->private_data;
	const struct lchan_ctx_setup_args *req = ucmd->cmd;
	enum lchan_mode mode = req->flags & LCHAN_CTX_POLLER ?
			       LCHAN_MODE_POLLER : LCHAN_MODE_DOORBELL;
	u32 idle_ms = min_t(u32, req->idle_ms ?: LCHAN_POLLER_IDLE_MS,
			    LCHAN_POLLER_IDLE_MS);

	if (mode == LCHAN_MODE_POLLER && req->attach_fd != -1) {
		struct fd f = fdget(req->attach_fd);
		struct lchan_context *other;

		if (!fd_file(f))
			return -EBADF;
		if (fd_file(f)->f_op != &lchan_ctl_fops) {
			fdput(f);
			return -EINVAL;
		}
		other = fd_file(f)->private_data;
		/* Only the caller's own contexts lend their settings. */
		if (!lchan_ctx_owned(other)) {
			fdput(f);
			return -EPERM;
		}
		lchan_ctx_mode(other, &mode, &idle_ms);
		fdput(f);
		if (mode != LCHAN_MODE_POLLER)
			return -EINVAL;
	}

	return lchan_ctx_set_mode(ctx, mode, idle_ms);
}

static const struct lchan_ioctl_op lchan_ctl_ioctl_ops[] = {
	LCHAN_IOCTL_OP(LCHAN_IOC_INFO, lchan_ioctl_info, struct lchan_info,
		       features),
	LCHAN_IOCTL_OWNER_OP(LCHAN_IOC_MR_REG, lchan_ioctl_mr_reg_check,
			     lchan_ioctl_mr_reg, struct lchan_mr_reg_args, rkey,
			     .done = lchan_ioctl_mr_reg_done),
	LCHAN_IOCTL_OWNER_OP(LCHAN_IOC_MR_DEREG, lchan_ioctl_mr_dereg_check,
			     lchan_ioctl_mr_dereg, struct lchan_mr_dereg_args, resv),
	LCHAN_IOCTL_OWNER_OP(LCHAN_IOC_LISTEN, lchan_ioctl_listen_check,
			     lchan_ioctl_listen, struct lchan_listen_args,
			     sock_fd),
	LCHAN_IOCTL_OWNER_OP(LCHAN_IOC_CONNECT, lchan_ioctl_connect_check,
			     lchan_ioctl_connect, struct lchan_connect_args, resv),
	LCHAN_IOCTL_OWNER_OP(LCHAN_IOC_CTX_SETUP, lchan_ioctl_ctx_setup_check,
			     lchan_ioctl_ctx_setup, struct lchan_ctx_setup_args,
			     resv),
};

static long lchan_ctl_ioctl(struct file *file, unsigned int cmd,
			    unsigned long arg)
{
	return lchan_ioctl_dispatch(file, cmd, arg, lchan_ctl_ioctl_ops,
				    ARRAY_SIZE(lchan_ctl_ioctl_ops),
				    file->private_data);
}

const struct file_operations lchan_ctl_fops = {
	.owner = THIS_MODULE,
	.open = lchan_ctl_open,
	.release = lchan_ctl_release,
	.unlocked_ioctl = lchan_ctl_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.llseek = noop_llseek,
};
