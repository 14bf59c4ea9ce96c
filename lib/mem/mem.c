/* mem.c: the one place that knows which memory backends were compiled in; see mem.h. */
#include "mem/mem.h"

#include <errno.h>
#include <string.h>

#include "base/log.h"

extern const struct rp_mem_ops rp_mem_host_ops;
#ifdef HAVE_CUDA
extern const struct rp_mem_ops rp_mem_cuda_ops;
#endif

const struct rp_mem_ops *rp_mem_ops_find(const char *kind)
{
	if (strcmp(kind, "host") == 0)
		return &rp_mem_host_ops;
	if (strcmp(kind, "cuda") == 0) {
#ifdef HAVE_CUDA
		return &rp_mem_cuda_ops;
#else
		rp_error(-ENOTSUP, "memory 'cuda': this rdmaprobe was built without CUDA");
		return NULL;
#endif
	}
	rp_error(-EINVAL, "unknown memory kind '%s' (host, cuda)", kind);
	return NULL;
}

int rp_mem_alloc(struct rp_mem_buf *buf, const struct rp_mem_spec *spec, size_t len)
{
	const struct rp_mem_ops *ops = rp_mem_ops_find(spec->kind);

	memset(buf, 0, sizeof(*buf));
	if (!ops)
		return -ENOTSUP;
	buf->ops = ops;
	return ops->alloc(buf, spec, len);
}

void rp_mem_free(struct rp_mem_buf *buf)
{
	if (buf->ops)
		buf->ops->free(buf);
}
