/* mem.h: where the engine's buffers live, behind one ops table (host now, CUDA in mem_cuda.c).
 *
 * The engine never touches a buffer's bytes directly: it fills, checks and registers through these
 * ops, so a GPU backend slots in without changing the engine. A backend is picked by name with
 * rp_mem_ops_find(); the one file that knows which backends were compiled in is mem.c.
 */
#ifndef RP_MEM_H
#define RP_MEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ibv_pd;
struct ibv_mr;

/* How a GPU buffer is registered: try dmabuf then peermem (AUTO), or only one of them. */
enum rp_gpu_reg { RP_GPU_REG_AUTO = 0, RP_GPU_REG_DMABUF, RP_GPU_REG_PEERMEM };

struct rp_mem_spec {
	const char *kind;             /* "host" or "cuda" */
	int device;                   /* GPU index for cuda; ignored for host */
	bool hugepages;               /* host: back with hugepages (MAP_HUGETLB), fail if none */
	enum rp_gpu_reg gpu_reg;
};

struct rp_mem_buf {
	const struct rp_mem_ops *ops;
	void *addr;                   /* host or device address the adapter uses */
	size_t len;                   /* usable length, as asked */
	size_t alloc_len;             /* rounded up to the backend's granule */
	struct ibv_mr *mr;
	char reg_method[16];          /* "host", "dmabuf", "peermem" once registered */
	char label[16];               /* "host", "cuda:0" */
	void *priv;                   /* backend state */
};

struct rp_mem_ops {
	const char *name;
	/* Allocate len bytes into *buf (caller storage). 0 or a negative errno (logged). */
	int (*alloc)(struct rp_mem_buf *buf, const struct rp_mem_spec *spec, size_t len);
	/* Register buf with pd and access flags; sets buf->mr and reg_method. 0 or negative errno. */
	int (*reg)(struct rp_mem_buf *buf, struct ibv_pd *pd, int access);
	/* Fill [0, len) with the pattern for seed; the pattern is a function of (seed, offset) only. */
	int (*fill)(struct rp_mem_buf *buf, uint64_t seed);
	/* Check [0, len) against the pattern for seed; *bad_offset_p = first mismatch or -1. */
	int (*check)(struct rp_mem_buf *buf, uint64_t seed, int64_t *bad_offset_p);
	/* Set [0, len) to a byte value (to clear a target before a pass). */
	int (*set)(struct rp_mem_buf *buf, uint8_t byte);
	/* Read len bytes at off into host memory dst (used for flags and the final check). */
	int (*read)(struct rp_mem_buf *buf, size_t off, void *dst, size_t len);
	/* Write len bytes from host memory src at off (latency mode's sequence byte). Optional: NULL
	 * means the backend cannot, and latency mode then fails cleanly. Added by the engine. */
	int (*write)(struct rp_mem_buf *buf, size_t off, const void *src, size_t len);
	/* Deregister and free; accepts a half-built buf and may be called twice. */
	void (*free)(struct rp_mem_buf *buf);
};

/* The backend for spec->kind, or NULL (and a log line) when unknown or not compiled in. */
const struct rp_mem_ops *rp_mem_ops_find(const char *kind);

/* The test pattern shared by every backend: byte at offset off for seed. */
static inline uint8_t rp_pattern_byte(uint64_t seed, uint64_t off)
{
	uint64_t x = (seed ^ 0x9e3779b97f4a7c15ULL) + (off >> 3) * 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 31;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 29;
	return (uint8_t)(x >> ((off & 7) * 8));
}

/* Convenience wrappers that go through buf->ops. */
int rp_mem_alloc(struct rp_mem_buf *buf, const struct rp_mem_spec *spec, size_t len);
void rp_mem_free(struct rp_mem_buf *buf);

#endif
