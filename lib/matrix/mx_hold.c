/* mx_hold.c: the sweep's connections held for the bandwidth rounds; see mx_hold.h. */
#include "matrix/mx_hold.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "matrix/mx_sweep.h"

int mx_hold_parse(const char *s, bool *on_p)
{
	if (strcmp(s, "auto") == 0 || strcmp(s, "on") == 0)
		*on_p = true;
	else if (strcmp(s, "off") == 0)
		*on_p = false;
	else
		return -EINVAL;
	return 0;
}

bool mx_hold_allowed(const struct rp_engine_cfg *cfg, unsigned width, char *why, size_t why_len)
{
	const struct rp_engine_meas *m = &cfg->meas;

	if (m->bidir || cfg->cm) {
		snprintf(why, why_len, "%s sets up its own connections", m->bidir ? "--bidir" : "--cm");
		return false;
	}
	if (m->n_qps > MX_SWEEP_ITERS) {
		snprintf(why, why_len, "a probe's %d writes cannot cover %u QPs", MX_SWEEP_ITERS, m->n_qps);
		return false;
	}
	if (width && m->msg_size > MX_HOLD_MAX_BYTES / (2ULL * width)) {
		snprintf(why, why_len, "%u probes of %llu-byte buffers an endpoint would hold exceed %llu MiB", 2 * width,
			 (unsigned long long)m->msg_size, MX_HOLD_MAX_BYTES >> 20);
		return false;
	}
	if (why_len)
		why[0] = '\0';
	return true;
}

static int dir_cmp(const void *x, const void *y)
{
	const struct mx_hold_dir *a = x, *b = y;

	if (a->src != b->src)
		return a->src < b->src ? -1 : 1;
	return a->dst < b->dst ? -1 : a->dst > b->dst;
}

int mx_holds_make(struct mx_holds *h, const struct mx_ep *eps, int rank, const struct mx_job *jobs, size_t n)
{
	size_t need = 0;

	mx_holds_release(h);
	for (size_t i = 0; i < n; i++)
		for (int d = 0; d < 2; d++)
			need += (jobs[i].dirs >> d & 1u) && (eps[jobs[i].a].owner == rank || eps[jobs[i].b].owner == rank);
	if (need > h->cap) {
		struct mx_hold_dir *nv = realloc(h->v, need * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		h->v = nv;
		h->cap = need;
	}
	for (size_t i = 0; i < n; i++)
		for (int d = 0; d < 2; d++) {
			uint32_t src = d ? jobs[i].b : jobs[i].a, dst = d ? jobs[i].a : jobs[i].b;

			if ((jobs[i].dirs >> d & 1u) && (eps[src].owner == rank || eps[dst].owner == rank))
				h->v[h->n++] = (struct mx_hold_dir){ .src = src, .dst = dst };
		}
	qsort(h->v, h->n, sizeof(*h->v), dir_cmp);
	return 0;
}

struct mx_hold_dir *mx_holds_find(struct mx_holds *h, uint32_t src, uint32_t dst)
{
	struct mx_hold_dir key = { .src = src, .dst = dst };

	return h->n ? bsearch(&key, h->v, h->n, sizeof(*h->v), dir_cmp) : NULL;
}

void mx_hold_side_arm(const struct mx_holds *h, struct mx_hold_side *s)
{
	s->eng.keep = h->mode == MX_HOLD_MAKE;
	s->eng.room = h->mode == MX_HOLD_MAKE ? h->room : NULL;
	s->eng.reused = false;
}

void mx_hold_side_done(struct mx_holds *h, struct mx_hold_side *s, bool writer)
{
	if (!writer)
		return;
	if (h->mode == MX_HOLD_MAKE && s->held)
		__atomic_fetch_add(&h->made, 1, __ATOMIC_RELAXED);
	else if (h->mode == MX_HOLD_USE)
		__atomic_fetch_add(s->eng.reused ? &h->reused : &h->fresh, 1, __ATOMIC_RELAXED);
}

void mx_holds_release(struct mx_holds *h)
{
	for (size_t i = 0; i < h->n; i++) {
		rp_engine_hold_release(&h->v[i].w.eng);
		rp_engine_hold_release(&h->v[i].t.eng);
	}
	h->n = 0;
}

void mx_holds_fini(struct mx_holds *h)
{
	mx_holds_release(h);
	free(h->v);
	h->v = NULL;
	h->cap = 0;
}
