/* SPDX-License-Identifier: GPL-2.0 */
/*
 * lchan tracepoints: channel state changes, connection manager events,
 * memory registration and error completions.  Enable them with
 * /sys/kernel/tracing/events/lchan/.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM lchan

#if !defined(LCHAN_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define LCHAN_TRACE_H

#include <linux/tracepoint.h>
#include <rdma/ib_cm.h>
#include <rdma/rdma_cm.h>
#include <trace/misc/rdma.h>

TRACE_DEFINE_ENUM(LCHAN_STATE_CONNECTING);
TRACE_DEFINE_ENUM(LCHAN_STATE_CONNECTED);
TRACE_DEFINE_ENUM(LCHAN_STATE_DISCONNECTED);
TRACE_DEFINE_ENUM(LCHAN_STATE_ERROR);

#define lchan_show_state(state)						\
	__print_symbolic(state, { LCHAN_STATE_CONNECTING, "connecting" },	\
			 { LCHAN_STATE_CONNECTED, "connected" },		\
			 { LCHAN_STATE_DISCONNECTED, "disconnected" },	\
			 { LCHAN_STATE_ERROR, "error" })

TRACE_EVENT(lchan_chan_state,
	TP_PROTO(u32 id, int old_state, int new_state),
	TP_ARGS(id, old_state, new_state),
	TP_STRUCT__entry(
		__field(u32, id)
		__field(int, old_state)
		__field(int, new_state)
	),
	TP_fast_assign(
		__entry->id = id;
		__entry->old_state = old_state;
		__entry->new_state = new_state;
	),
	TP_printk("chan=%u %s -> %s", __entry->id,
		  lchan_show_state(__entry->old_state),
		  lchan_show_state(__entry->new_state))
);

TRACE_EVENT(lchan_cm_event,
	TP_PROTO(u32 id, bool listener, int event, int status),
	TP_ARGS(id, listener, event, status),
	TP_STRUCT__entry(
		__field(u32, id)
		__field(int, listener)
		__field(int, event)
		__field(int, status)
	),
	TP_fast_assign(
		__entry->id = id;
		__entry->listener = listener;
		__entry->event = event;
		__entry->status = status;
	),
	TP_printk("%s=%u event=%s status=%d",
		  __print_symbolic(__entry->listener, { 0, "chan" },
				   { 1, "listener" }),
		  __entry->id,
		  rdma_show_cm_event(__entry->event),
		  __entry->status)
);

/*
 * The steps of a channel's set-up and teardown that the cm events do not
 * show, so that a connect's time can be split by step (lchan_conntime).
 */
TRACE_DEFINE_ENUM(LCHAN_STEP_ALLOC);
TRACE_DEFINE_ENUM(LCHAN_STEP_BIND);
TRACE_DEFINE_ENUM(LCHAN_STEP_QP_READY);
TRACE_DEFINE_ENUM(LCHAN_STEP_FD);
TRACE_DEFINE_ENUM(LCHAN_STEP_CLOSE);
TRACE_DEFINE_ENUM(LCHAN_STEP_DISCONNECTED);
TRACE_DEFINE_ENUM(LCHAN_STEP_DRAINED);
TRACE_DEFINE_ENUM(LCHAN_STEP_DESTROYED);

TRACE_EVENT(lchan_chan_step,
	TP_PROTO(u32 id, int step),
	TP_ARGS(id, step),
	TP_STRUCT__entry(
		__field(u32, id)
		__field(int, step)
	),
	TP_fast_assign(
		__entry->id = id;
		__entry->step = step;
	),
	TP_printk("chan=%u step=%s", __entry->id,
		  __print_symbolic(__entry->step,
				   { LCHAN_STEP_ALLOC, "alloc" },
				   { LCHAN_STEP_BIND, "bind" },
				   { LCHAN_STEP_QP_READY, "qp_ready" },
				   { LCHAN_STEP_FD, "fd" },
				   { LCHAN_STEP_CLOSE, "close" },
				   { LCHAN_STEP_DISCONNECTED, "disconnected" },
				   { LCHAN_STEP_DRAINED, "drained" },
				   { LCHAN_STEP_DESTROYED, "destroyed" }))
);

TRACE_EVENT(lchan_mr_reg,
	TP_PROTO(pid_t tgid, u32 handle, u64 length, u32 access, int ret),
	TP_ARGS(tgid, handle, length, access, ret),
	TP_STRUCT__entry(
		__field(pid_t, tgid)
		__field(u32, handle)
		__field(u64, length)
		__field(u32, access)
		__field(int, ret)
	),
	TP_fast_assign(
		__entry->tgid = tgid;
		__entry->handle = handle;
		__entry->length = length;
		__entry->access = access;
		__entry->ret = ret;
	),
	TP_printk("pid=%d handle=%u length=%llu access=0x%x ret=%d",
		  __entry->tgid, __entry->handle, __entry->length,
		  __entry->access, __entry->ret)
);

TRACE_EVENT(lchan_mr_dereg,
	TP_PROTO(pid_t tgid, u32 handle, int ret),
	TP_ARGS(tgid, handle, ret),
	TP_STRUCT__entry(
		__field(pid_t, tgid)
		__field(u32, handle)
		__field(int, ret)
	),
	TP_fast_assign(
		__entry->tgid = tgid;
		__entry->handle = handle;
		__entry->ret = ret;
	),
	TP_printk("pid=%d handle=%u ret=%d", __entry->tgid, __entry->handle,
		  __entry->ret)
);

TRACE_EVENT(lchan_cqe_error,
	TP_PROTO(u32 id, u64 user_data, u8 opcode, u32 status, u32 vendor_err),
	TP_ARGS(id, user_data, opcode, status, vendor_err),
	TP_STRUCT__entry(
		__field(u32, id)
		__field(u64, user_data)
		__field(u8, opcode)
		__field(u32, status)
		__field(u32, vendor_err)
	),
	TP_fast_assign(
		__entry->id = id;
		__entry->user_data = user_data;
		__entry->opcode = opcode;
		__entry->status = status;
		__entry->vendor_err = vendor_err;
	),
	TP_printk("chan=%u user_data=0x%llx opcode=%u status=%u vendor_err=0x%x",
		  __entry->id, __entry->user_data, __entry->opcode,
		  __entry->status, __entry->vendor_err)
);

#endif /* LCHAN_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE lchan_trace
#include <trace/define_trace.h>
