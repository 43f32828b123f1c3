// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * The operations lchan does not offer, each refusing with -FI_ENOSYS
 * (-FI_ENOPROTOOPT for options).  libfabric's inline wrappers call
 * through every slot of an ops table without looking, so a slot is never
 * NULL: an application calling fi_tsend, fi_atomic or fi_barrier on an
 * lchan endpoint gets an error, not a crash.  Each slot has its own type,
 * so each gets its own function.
 */
#include "lfi.h"

int lfi_unsupported_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	(void)fid; (void)bfid; (void)flags;
	return -FI_ENOSYS;
}

int lfi_unsupported_control(struct fid *fid, int command, void *arg)
{
	(void)fid; (void)command; (void)arg;
	return -FI_ENOSYS;
}

int lfi_unsupported_ops_open(struct fid *fid, const char *name,
			     uint64_t flags, void **ops, void *context)
{
	(void)fid; (void)name; (void)flags; (void)ops; (void)context;
	return -FI_ENOSYS;
}

int lfi_unsupported_tostr(const struct fid *fid, char *buf, size_t len)
{
	(void)fid; (void)buf; (void)len;
	return -FI_ENOSYS;
}

int lfi_unsupported_ops_set(struct fid *fid, const char *name,
			    uint64_t flags, void *ops, void *context)
{
	(void)fid; (void)name; (void)flags; (void)ops; (void)context;
	return -FI_ENOSYS;
}

/* fi_ops_ep */

ssize_t lfi_unsupported_cancel(fid_t fid, void *context)
{
	(void)fid; (void)context;
	return -FI_ENOSYS;
}

int lfi_unsupported_setopt(fid_t fid, int level, int optname,
			   const void *optval, size_t optlen)
{
	(void)fid; (void)level; (void)optname; (void)optval; (void)optlen;
	return -FI_ENOPROTOOPT;
}

int lfi_unsupported_tx_ctx(struct fid_ep *sep, int index,
			   struct fi_tx_attr *attr, struct fid_ep **tx_ep,
			   void *context)
{
	(void)sep; (void)index; (void)attr; (void)tx_ep; (void)context;
	return -FI_ENOSYS;
}

int lfi_unsupported_rx_ctx(struct fid_ep *sep, int index,
			   struct fi_rx_attr *attr, struct fid_ep **rx_ep,
			   void *context)
{
	(void)sep; (void)index; (void)attr; (void)rx_ep; (void)context;
	return -FI_ENOSYS;
}

ssize_t lfi_unsupported_size_left(struct fid_ep *ep)
{
	(void)ep;
	return -FI_ENOSYS;
}

/*
 * Domain, fabric and CM slots: no address vectors, counters, poll sets,
 * shared contexts, wait sets of the fabric's own or multicast.
 */

int lfi_unsupported_av_open(struct fid_domain *d, struct fi_av_attr *attr,
			    struct fid_av **av, void *context)
{
	(void)d; (void)attr; (void)av; (void)context;
	return -FI_ENOSYS;
}

int lfi_unsupported_scalable_ep(struct fid_domain *d, struct fi_info *info,
				struct fid_ep **sep, void *context)
{
	(void)d; (void)info; (void)sep; (void)context;
	return -FI_ENOSYS;
}

int lfi_unsupported_cntr_open(struct fid_domain *d, struct fi_cntr_attr *attr,
			      struct fid_cntr **cntr, void *context)
{
	(void)d; (void)attr; (void)cntr; (void)context;
	return -FI_ENOSYS;
}

int lfi_unsupported_poll_open(struct fid_domain *d, struct fi_poll_attr *attr,
			      struct fid_poll **pollset)
{
	(void)d; (void)attr; (void)pollset;
	return -FI_ENOSYS;
}

int lfi_unsupported_stx_ctx(struct fid_domain *d, struct fi_tx_attr *attr,
			    struct fid_stx **stx, void *context)
{
	(void)d; (void)attr; (void)stx; (void)context;
	return -FI_ENOSYS;
}

int lfi_unsupported_srx_ctx(struct fid_domain *d, struct fi_rx_attr *attr,
			    struct fid_ep **rx_ep, void *context)
{
	(void)d; (void)attr; (void)rx_ep; (void)context;
	return -FI_ENOSYS;
}

int lfi_unsupported_query_atomic(struct fid_domain *d, enum fi_datatype dt,
				 enum fi_op op, struct fi_atomic_attr *attr,
				 uint64_t flags)
{
	(void)d; (void)dt; (void)op; (void)attr; (void)flags;
	return -FI_ENOSYS;
}

int lfi_unsupported_query_collective(struct fid_domain *d,
				     enum fi_collective_op coll,
				     struct fi_collective_attr *attr,
				     uint64_t flags)
{
	(void)d; (void)coll; (void)attr; (void)flags;
	return -FI_ENOSYS;
}

int lfi_unsupported_wait_open(struct fid_fabric *fabric,
			      struct fi_wait_attr *attr,
			      struct fid_wait **waitset)
{
	(void)fabric; (void)attr; (void)waitset;
	return -FI_ENOSYS;
}

int lfi_unsupported_join(struct fid_ep *ep, const void *addr, uint64_t flags,
			 struct fid_mc **mc, void *context)
{
	(void)ep; (void)addr; (void)flags; (void)mc; (void)context;
	return -FI_ENOSYS;
}

/* fi_ops_tagged: lchan has no tag matching (ofi_rxm layers it on FI_MSG). */

static ssize_t lfi_unsupported_trecv(struct fid_ep *ep, void *buf, size_t len,
				     void *desc, fi_addr_t src_addr,
				     uint64_t tag, uint64_t ignore,
				     void *context)
{
	(void)ep; (void)buf; (void)len; (void)desc; (void)src_addr;
	(void)tag; (void)ignore; (void)context;
	return -FI_ENOSYS;
}

static ssize_t lfi_unsupported_trecvv(struct fid_ep *ep,
				      const struct iovec *iov, void **desc,
				      size_t count, fi_addr_t src_addr,
				      uint64_t tag, uint64_t ignore,
				      void *context)
{
	(void)ep; (void)iov; (void)desc; (void)count; (void)src_addr;
	(void)tag; (void)ignore; (void)context;
	return -FI_ENOSYS;
}

static ssize_t lfi_unsupported_trecvmsg(struct fid_ep *ep,
					const struct fi_msg_tagged *msg,
					uint64_t flags)
{
	(void)ep; (void)msg; (void)flags;
	return -FI_ENOSYS;
}

static ssize_t lfi_unsupported_tsend(struct fid_ep *ep, const void *buf,
				     size_t len, void *desc,
				     fi_addr_t dest_addr, uint64_t tag,
				     void *context)
{
	(void)ep; (void)buf; (void)len; (void)desc; (void)dest_addr;
	(void)tag; (void)context;
	return -FI_ENOSYS;
}

static ssize_t lfi_unsupported_tsendv(struct fid_ep *ep,
				      const struct iovec *iov, void **desc,
				      size_t count, fi_addr_t dest_addr,
				      uint64_t tag, void *context)
{
	(void)ep; (void)iov; (void)desc; (void)count; (void)dest_addr;
	(void)tag; (void)context;
	return -FI_ENOSYS;
}

static ssize_t lfi_unsupported_tsendmsg(struct fid_ep *ep,
					const struct fi_msg_tagged *msg,
					uint64_t flags)
{
	(void)ep; (void)msg; (void)flags;
	return -FI_ENOSYS;
}

static ssize_t lfi_unsupported_tinject(struct fid_ep *ep, const void *buf,
				       size_t len, fi_addr_t dest_addr,
				       uint64_t tag)
{
	(void)ep; (void)buf; (void)len; (void)dest_addr; (void)tag;
	return -FI_ENOSYS;
}

static ssize_t lfi_unsupported_tsenddata(struct fid_ep *ep, const void *buf,
					 size_t len, void *desc, uint64_t data,
					 fi_addr_t dest_addr, uint64_t tag,
					 void *context)
{
	(void)ep; (void)buf; (void)len; (void)desc; (void)data;
	(void)dest_addr; (void)tag; (void)context;
	return -FI_ENOSYS;
}

static ssize_t lfi_unsupported_tinjectdata(struct fid_ep *ep, const void *buf,
					   size_t len, uint64_t data,
					   fi_addr_t dest_addr, uint64_t tag)
{
	(void)ep; (void)buf; (void)len; (void)data; (void)dest_addr;
	(void)tag;
	return -FI_ENOSYS;
}

struct fi_ops_tagged lfi_unsupported_tagged_ops = {
	.size = sizeof(struct fi_ops_tagged),
	.recv = lfi_unsupported_trecv,
	.recvv = lfi_unsupported_trecvv,
	.recvmsg = lfi_unsupported_trecvmsg,
	.send = lfi_unsupported_tsend,
	.sendv = lfi_unsupported_tsendv,
	.sendmsg = lfi_unsupported_tsendmsg,
	.inject = lfi_unsupported_tinject,
	.senddata = lfi_unsupported_tsenddata,
	.injectdata = lfi_unsupported_tinjectdata,
};

/*
 * fi_ops_atomic: lchan's atomics are not offered through libfabric; the
 * *valid calls, asked which datatype and operation work, say none.
 */

static ssize_t lfi_unsupported_atomic(struct fid_ep *ep, const void *buf,
				      size_t count, void *desc,
				      fi_addr_t dest_addr, uint64_t addr,
				      uint64_t key, enum fi_datatype datatype,
				      enum fi_op op, void *context)
{
	(void)ep; (void)buf; (void)count; (void)desc; (void)dest_addr;
	(void)addr; (void)key; (void)datatype; (void)op; (void)context;
	return -FI_ENOSYS;
}

static ssize_t lfi_unsupported_atomicv(struct fid_ep *ep,
				       const struct fi_ioc *iov, void **desc,
				       size_t count, fi_addr_t dest_addr,
				       uint64_t addr, uint64_t key,
				       enum fi_datatype datatype,
				       enum fi_op op, void *context)
{
	(void)ep; (void)iov; (void)desc; (void)count; (void)dest_addr;
	(void)addr; (void)key; (void)datatype; (void)op; (void)context;
	return -FI_ENOSYS;
}

static ssize_t lfi_unsupported_atomicmsg(struct fid_ep *ep,
					 const struct fi_msg_atomic *msg,
					 uint64_t flags)
{
	(void)ep; (void)msg; (void)flags;
	return -FI_ENOSYS;
}

static ssize_t lfi_unsupported_inject_atomic(struct fid_ep *ep,
					     const void *buf, size_t count,
					     fi_addr_t dest_addr, uint64_t addr,
					     uint64_t key,
					     enum fi_datatype datatype,
					     enum fi_op op)
{
	(void)ep; (void)buf; (void)count; (void)dest_addr; (void)addr;
	(void)key; (void)datatype; (void)op;
	return -FI_ENOSYS;
}

static ssize_t lfi_unsupported_fetch_atomic(struct fid_ep *ep,
					    const void *buf, size_t count,
					    void *desc, void *result,
					    void *result_desc,
					    fi_addr_t dest_addr, uint64_t addr,
					    uint64_t key,
					    enum fi_datatype datatype,
					    enum fi_op op, void *context)
{
	(void)ep; (void)buf; (void)count; (void)desc; (void)result;
	(void)result_desc; (void)dest_addr; (void)addr; (void)key;
	(void)datatype; (void)op; (void)context;
	return -FI_ENOSYS;
}

static ssize_t lfi_unsupported_fetch_atomicv(struct fid_ep *ep,
					     const struct fi_ioc *iov,
					     void **desc, size_t count,
					     struct fi_ioc *resultv,
					     void **result_desc,
					     size_t result_count,
					     fi_addr_t dest_addr, uint64_t addr,
					     uint64_t key,
					     enum fi_datatype datatype,
					     enum fi_op op, void *context)
{
	(void)ep; (void)iov; (void)desc; (void)count; (void)resultv;
	(void)result_desc; (void)result_count; (void)dest_addr; (void)addr;
	(void)key; (void)datatype; (void)op; (void)context;
	return -FI_ENOSYS;
}

static ssize_t lfi_unsupported_fetch_atomicmsg(struct fid_ep *ep,
					       const struct fi_msg_atomic *msg,
					       struct fi_ioc *resultv,
					       void **result_desc,
					       size_t result_count,
					       uint64_t flags)
{
	(void)ep; (void)msg; (void)resultv; (void)result_desc;
	(void)result_count; (void)flags;
	return -FI_ENOSYS;
}

static ssize_t lfi_unsupported_compare_atomic(struct fid_ep *ep,
					      const void *buf, size_t count,
					      void *desc, const void *compare,
					      void *compare_desc, void *result,
					      void *result_desc,
					      fi_addr_t dest_addr,
					      uint64_t addr, uint64_t key,
					      enum fi_datatype datatype,
					      enum fi_op op, void *context)
{
	(void)ep; (void)buf; (void)count; (void)desc; (void)compare;
	(void)compare_desc; (void)result; (void)result_desc;
	(void)dest_addr; (void)addr; (void)key; (void)datatype; (void)op;
	(void)context;
	return -FI_ENOSYS;
}

static ssize_t lfi_unsupported_compare_atomicv(struct fid_ep *ep,
					       const struct fi_ioc *iov,
					       void **desc, size_t count,
					       const struct fi_ioc *comparev,
					       void **compare_desc,
					       size_t compare_count,
					       struct fi_ioc *resultv,
					       void **result_desc,
					       size_t result_count,
					       fi_addr_t dest_addr,
					       uint64_t addr, uint64_t key,
					       enum fi_datatype datatype,
					       enum fi_op op, void *context)
{
	(void)ep; (void)iov; (void)desc; (void)count; (void)comparev;
	(void)compare_desc; (void)compare_count; (void)resultv;
	(void)result_desc; (void)result_count; (void)dest_addr; (void)addr;
	(void)key; (void)datatype; (void)op; (void)context;
	return -FI_ENOSYS;
}

static ssize_t lfi_unsupported_compare_atomicmsg(struct fid_ep *ep,
						 const struct fi_msg_atomic *msg,
						 const struct fi_ioc *comparev,
						 void **compare_desc,
						 size_t compare_count,
						 struct fi_ioc *resultv,
						 void **result_desc,
						 size_t result_count,
						 uint64_t flags)
{
	(void)ep; (void)msg; (void)comparev; (void)compare_desc;
	(void)compare_count; (void)resultv; (void)result_desc;
	(void)result_count; (void)flags;
	return -FI_ENOSYS;
}

static int lfi_unsupported_atomic_valid(struct fid_ep *ep,
					enum fi_datatype datatype,
					enum fi_op op, size_t *count)
{
	(void)ep; (void)datatype; (void)op; (void)count;
	return -FI_ENOSYS;
}

struct fi_ops_atomic lfi_unsupported_atomic_ops = {
	.size = sizeof(struct fi_ops_atomic),
	.write = lfi_unsupported_atomic,
	.writev = lfi_unsupported_atomicv,
	.writemsg = lfi_unsupported_atomicmsg,
	.inject = lfi_unsupported_inject_atomic,
	.readwrite = lfi_unsupported_fetch_atomic,
	.readwritev = lfi_unsupported_fetch_atomicv,
	.readwritemsg = lfi_unsupported_fetch_atomicmsg,
	.compwrite = lfi_unsupported_compare_atomic,
	.compwritev = lfi_unsupported_compare_atomicv,
	.compwritemsg = lfi_unsupported_compare_atomicmsg,
	.writevalid = lfi_unsupported_atomic_valid,
	.readwritevalid = lfi_unsupported_atomic_valid,
	.compwritevalid = lfi_unsupported_atomic_valid,
};

/* fi_ops_collective: connected endpoints have no address vector sets. */

static ssize_t lfi_unsupported_barrier(struct fid_ep *ep, fi_addr_t coll_addr,
				       void *context)
{
	(void)ep; (void)coll_addr; (void)context;
	return -FI_ENOSYS;
}

static ssize_t lfi_unsupported_barrier2(struct fid_ep *ep,
					fi_addr_t coll_addr, uint64_t flags,
					void *context)
{
	(void)ep; (void)coll_addr; (void)flags; (void)context;
	return -FI_ENOSYS;
}

static ssize_t lfi_unsupported_broadcast(struct fid_ep *ep, void *buf,
					 size_t count, void *desc,
					 fi_addr_t coll_addr,
					 fi_addr_t root_addr,
					 enum fi_datatype datatype,
					 uint64_t flags, void *context)
{
	(void)ep; (void)buf; (void)count; (void)desc; (void)coll_addr;
	(void)root_addr; (void)datatype; (void)flags; (void)context;
	return -FI_ENOSYS;
}

/* alltoall and allgather share this slot type. */
static ssize_t lfi_unsupported_all(struct fid_ep *ep, const void *buf,
				   size_t count, void *desc, void *result,
				   void *result_desc, fi_addr_t coll_addr,
				   enum fi_datatype datatype, uint64_t flags,
				   void *context)
{
	(void)ep; (void)buf; (void)count; (void)desc; (void)result;
	(void)result_desc; (void)coll_addr; (void)datatype; (void)flags;
	(void)context;
	return -FI_ENOSYS;
}

/* allreduce and reduce_scatter share this slot type. */
static ssize_t lfi_unsupported_all_op(struct fid_ep *ep, const void *buf,
				      size_t count, void *desc, void *result,
				      void *result_desc, fi_addr_t coll_addr,
				      enum fi_datatype datatype, enum fi_op op,
				      uint64_t flags, void *context)
{
	(void)ep; (void)buf; (void)count; (void)desc; (void)result;
	(void)result_desc; (void)coll_addr; (void)datatype; (void)op;
	(void)flags; (void)context;
	return -FI_ENOSYS;
}

static ssize_t lfi_unsupported_reduce(struct fid_ep *ep, const void *buf,
				      size_t count, void *desc, void *result,
				      void *result_desc, fi_addr_t coll_addr,
				      fi_addr_t root_addr,
				      enum fi_datatype datatype, enum fi_op op,
				      uint64_t flags, void *context)
{
	(void)ep; (void)buf; (void)count; (void)desc; (void)result;
	(void)result_desc; (void)coll_addr; (void)root_addr; (void)datatype;
	(void)op; (void)flags; (void)context;
	return -FI_ENOSYS;
}

/* scatter and gather share this slot type. */
static ssize_t lfi_unsupported_rooted(struct fid_ep *ep, const void *buf,
				      size_t count, void *desc, void *result,
				      void *result_desc, fi_addr_t coll_addr,
				      fi_addr_t root_addr,
				      enum fi_datatype datatype,
				      uint64_t flags, void *context)
{
	(void)ep; (void)buf; (void)count; (void)desc; (void)result;
	(void)result_desc; (void)coll_addr; (void)root_addr; (void)datatype;
	(void)flags; (void)context;
	return -FI_ENOSYS;
}

static ssize_t lfi_unsupported_collective_msg(struct fid_ep *ep,
					      const struct fi_msg_collective *msg,
					      struct fi_ioc *resultv,
					      void **result_desc,
					      size_t result_count,
					      uint64_t flags)
{
	(void)ep; (void)msg; (void)resultv; (void)result_desc;
	(void)result_count; (void)flags;
	return -FI_ENOSYS;
}

struct fi_ops_collective lfi_unsupported_collective_ops = {
	.size = sizeof(struct fi_ops_collective),
	.barrier = lfi_unsupported_barrier,
	.broadcast = lfi_unsupported_broadcast,
	.alltoall = lfi_unsupported_all,
	.allreduce = lfi_unsupported_all_op,
	.allgather = lfi_unsupported_all,
	.reduce_scatter = lfi_unsupported_all_op,
	.reduce = lfi_unsupported_reduce,
	.scatter = lfi_unsupported_rooted,
	.gather = lfi_unsupported_rooted,
	.msg = lfi_unsupported_collective_msg,
	.barrier2 = lfi_unsupported_barrier2,
};
