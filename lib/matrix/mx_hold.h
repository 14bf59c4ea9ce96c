/* mx_hold.h: the reachability sweep's connections held for the bandwidth rounds (matrix --hold).
 *
 * The sweep's probe of a direction connects the same two ports in the same roles as that
 * direction's bandwidth measurement. With holds, a probe's endpoints are made for the bandwidth run
 * too (rp_engine_hold.room: its buffer and depth, the run's QP count) and kept when the probe
 * passes; the bandwidth round that measures the direction runs on them (the engine's offer and
 * accept: both sides must hold the two ends of one connection, else it is a fresh sequence) and
 * releases them. What is held stays bounded: the sweep's rounds and the bandwidth rounds interleave
 * (mx_run_sweep.c), sweep round k probing planned rounds [k W, (k + 1) W) and those rounds measuring
 * next, after which everything still held is released; an endpoint holds at most W connections as
 * writer and W as target, each with a buffer of the run's message (mx_hold_allowed()).
 *
 * Per rank, one entry per direction of the current sweep round that this rank drives a side of
 * (writer, target, or both when both ends are its own), made before the round's threads start and
 * found by binary search after; each side's thread touches only its own entry's side.
 */
#ifndef RP_MX_HOLD_H
#define RP_MX_HOLD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/engine.h"
#include "job/mx_table.h"
#include "job/mx_wire.h"

/* Bytes of buffer an endpoint may hold at once for the bandwidth rounds: 2 W x the message. */
#define MX_HOLD_MAX_BYTES (256ULL << 20)

/* One side of a held direction. */
struct mx_hold_side {
	struct rp_engine_hold eng;    /* the engine's (eng.ep the held endpoint) */
	bool held;                    /* this side holds a connection: the engine's eng.ep, or a stand-in's
	                               * own (the simulation has no endpoint) */
};

struct mx_hold_dir {
	uint32_t src, dst;            /* the direction: src writes into dst */
	struct mx_hold_side w, t;     /* this rank's writer side, target side (either, or both) */
};

enum mx_hold_mode {
	MX_HOLD_OFF = 0,              /* no holds: every sequence fresh */
	MX_HOLD_MAKE,                 /* a sweep round: entries made, the probes' endpoints kept */
	MX_HOLD_USE,                  /* a bandwidth round: what is held used, then released */
};

struct mx_holds {
	enum mx_hold_mode mode;
	const struct rp_engine_meas *room;   /* the bandwidth run's measure part */
	struct mx_hold_dir *v;        /* sorted by (src, dst) */
	size_t n, cap;
	size_t made;                  /* writer sides of this rank held after their probe (__atomic) */
	size_t reused;                /* writer sides of this rank measured on a held connection (__atomic) */
	size_t fresh;                 /* writer sides measured in USE rounds on a fresh one (__atomic) */
};

/* --hold's text: "auto" (the default: hold when the run allows it) or "off". 0, or -EINVAL. */
int mx_hold_parse(const char *s, bool *on_p);
/* May the run hold (the engine can run the bandwidth settings on a probe's endpoint, and what an
 * endpoint would hold fits MX_HOLD_MAX_BYTES)? When not, why says so. */
bool mx_hold_allowed(const struct rp_engine_cfg *cfg, unsigned width, char *why, size_t why_len);
/* Release everything held, then make an entry for every direction of jobs[0..n) this rank drives a
 * side of (ranks by eps[].owner). 0 or -ENOMEM (nothing held then). */
int mx_holds_make(struct mx_holds *h, const struct mx_ep *eps, int rank, const struct mx_job *jobs, size_t n);
/* The entry of direction src -> dst, NULL none. */
struct mx_hold_dir *mx_holds_find(struct mx_holds *h, uint32_t src, uint32_t dst);
/* Before a side runs: its engine hold set for the mode (MAKE: keep, room; USE: use, do not keep). */
void mx_hold_side_arm(const struct mx_holds *h, struct mx_hold_side *s);
/* After a side ran (its held flag set by whoever ran it): the counters, for writer sides. */
void mx_hold_side_done(struct mx_holds *h, struct mx_hold_side *s, bool writer);
/* Release everything held and drop the entries. */
void mx_holds_release(struct mx_holds *h);
void mx_holds_fini(struct mx_holds *h);

#endif
