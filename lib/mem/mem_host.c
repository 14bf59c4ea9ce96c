/* mem_host.c: host memory backend: page-aligned anonymous mappings, hugepages on request. */
#include <errno.h>
#include <infiniband/verbs.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/log.h"
#include "mem/mem.h"
#include "base/util.h"

#define HUGEPAGE_SIZE (2UL << 20)

static int host_alloc(struct rp_mem_buf *buf, const struct rp_mem_spec *spec, size_t len)
{
	size_t granule = spec->hugepages ? HUGEPAGE_SIZE : (size_t)sysconf(_SC_PAGESIZE);
	int flags = MAP_PRIVATE | MAP_ANONYMOUS | (spec->hugepages ? MAP_HUGETLB : 0);
	void *p;

	if (len == 0)
		return rp_error(-EINVAL, "host buffer of 0 bytes");
	buf->alloc_len = (len + granule - 1) / granule * granule;
	p = mmap(NULL, buf->alloc_len, PROT_READ | PROT_WRITE, flags, -1, 0);
	if (p == MAP_FAILED) {
		int err = -errno;

		buf->alloc_len = 0;
		return rp_error(err, "mmap %zu bytes of host memory%s: %s", len,
				spec->hugepages ? " on hugepages" : "", strerror(-err));
	}
	buf->addr = p;
	buf->len = len;
	rp_strlcpy(buf->label, "host", sizeof(buf->label));
	return 0;
}

static int host_reg(struct rp_mem_buf *buf, struct ibv_pd *pd, int access)
{
	buf->mr = ibv_reg_mr(pd, buf->addr, buf->alloc_len, access);
	if (!buf->mr) {
		int err = errno ? -errno : -ENOMEM;

		return rp_error(err, "ibv_reg_mr %zu bytes of host memory on %s: %s", buf->alloc_len,
				ibv_get_device_name(pd->context->device), strerror(-err));
	}
	rp_strlcpy(buf->reg_method, "host", sizeof(buf->reg_method));
	return 0;
}

static int host_fill(struct rp_mem_buf *buf, uint64_t seed)
{
	uint8_t *p = buf->addr;

	for (size_t i = 0; i < buf->len; i++)
		p[i] = rp_pattern_byte(seed, i);
	return 0;
}

static int host_check(struct rp_mem_buf *buf, uint64_t seed, int64_t *bad_offset_p)
{
	const volatile uint8_t *p = buf->addr;

	*bad_offset_p = -1;
	for (size_t i = 0; i < buf->len; i++) {
		if (p[i] != rp_pattern_byte(seed, i)) {
			*bad_offset_p = (int64_t)i;
			break;
		}
	}
	return 0;
}

static int host_set(struct rp_mem_buf *buf, uint8_t byte)
{
	memset(buf->addr, byte, buf->len);
	return 0;
}

static int host_read(struct rp_mem_buf *buf, size_t off, void *dst, size_t len)
{
	if (off > buf->len || len > buf->len - off)
		return -EINVAL;
	memcpy(dst, (const uint8_t *)buf->addr + off, len);
	return 0;
}

static int host_write(struct rp_mem_buf *buf, size_t off, const void *src, size_t len)
{
	if (off > buf->len || len > buf->len - off)
		return -EINVAL;
	memcpy((uint8_t *)buf->addr + off, src, len);
	return 0;
}

static void host_free(struct rp_mem_buf *buf)
{
	if (buf->mr) {
		int rc = ibv_dereg_mr(buf->mr);

		if (rc)
			rp_error(-rc, "ibv_dereg_mr: %s", strerror(rc));
		buf->mr = NULL;
	}
	if (buf->addr) {
		munmap(buf->addr, buf->alloc_len);
		buf->addr = NULL;
	}
	buf->alloc_len = 0;
}

const struct rp_mem_ops rp_mem_host_ops = {
	.name = "host",
	.alloc = host_alloc,
	.reg = host_reg,
	.fill = host_fill,
	.check = host_check,
	.set = host_set,
	.read = host_read,
	.write = host_write,
	.free = host_free,
};
