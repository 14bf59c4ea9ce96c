/* report_list.c: which pairs a report lists; see report_list.h. */
#include "report/report_list.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int rp_report_list_parse(const char *s, enum rp_report_list_mode *m)
{
	if (strcmp(s, "all") == 0)
		*m = RP_REPORT_LIST_ALL;
	else if (strcmp(s, "notable") == 0)
		*m = RP_REPORT_LIST_NOTABLE;
	else if (strcmp(s, "auto") == 0)
		*m = RP_REPORT_LIST_AUTO;
	else
		return -EINVAL;
	return 0;
}

bool rp_report_list_notable_only(enum rp_report_list_mode m, uint64_t n_directions, bool need_all)
{
	if (m == RP_REPORT_LIST_AUTO)
		return !need_all && n_directions > RP_REPORT_LIST_AUTO_MAX;
	return m == RP_REPORT_LIST_NOTABLE;
}

bool rp_result_notable(const struct rp_result_peek *pk)
{
	uint32_t quiet = 1u << RP_WARN_NOMINAL_RATE;

	return pk->status != RP_ST_OK || pk->confirm == RP_CONFIRM_FLAKY || (pk->warnings & ~quiet) ||
	       (pk->rev_measured && (pk->rev_status != RP_ST_OK || (pk->rev_warnings & ~quiet)));
}

int rp_report_list_build(struct rp_report_listed *l, const struct rp_result_seq *base, const uint32_t *pair_eps)
{
	struct rp_result_peek pk;
	size_t cap = 0;

	memset(l, 0, sizeof(*l));
	l->base = base;
	/* one read of the results (a few notable among millions), quiet passes skipped unread, 64 at a
	 * time where the store knows them (result_seq.h: never notable): the lists grow as they are found */
	for (size_t i = 0; i < base->n; i++) {
		if (base->quiet && i % 64 == 0 && i + 64 <= base->n && base->quiet[i / 64] == UINT64_MAX) {
			i += 63;
			continue;
		}
		if (rp_result_seq_quiet(base, i))
			continue;
		rp_result_seq_peek(base, i, &pk);
		if (!rp_result_notable(&pk))
			continue;
		if (l->n == cap) {
			size_t c = cap ? 2 * cap : 64;
			size_t *idx = realloc(l->idx, c * sizeof(*idx));
			uint32_t *pe = idx ? realloc(l->pair_eps, 2 * c * sizeof(*pe)) : NULL;

			if (idx)
				l->idx = idx;
			if (!pe) {
				rp_report_listed_fini(l);
				return -ENOMEM;
			}
			l->pair_eps = pe;
			cap = c;
		}
		l->idx[l->n] = i;
		l->pair_eps[2 * l->n] = pair_eps[2 * i];
		l->pair_eps[2 * l->n + 1] = pair_eps[2 * i + 1];
		l->n++;
	}
	if (!cap) {                   /* none: still lists to read (of nothing) */
		l->idx = malloc(sizeof(*l->idx));
		l->pair_eps = malloc(2 * sizeof(*l->pair_eps));
		if (!l->idx || !l->pair_eps) {
			rp_report_listed_fini(l);
			return -ENOMEM;
		}
	}
	return 0;
}

static struct rp_pair_result *listed_get(const struct rp_result_seq *ps, size_t i, struct rp_pair_result *tmp)
{
	const struct rp_report_listed *l = ps->arg;

	return rp_result_seq_get(l->base, l->idx[i], tmp);
}

static int listed_put(const struct rp_result_seq *ps, size_t i, const struct rp_pair_result *r)
{
	const struct rp_report_listed *l = ps->arg;

	return rp_result_seq_put(l->base, l->idx[i], r);
}

static void listed_peek(const struct rp_result_seq *ps, size_t i, struct rp_result_peek *pk)
{
	const struct rp_report_listed *l = ps->arg;

	rp_result_seq_peek(l->base, l->idx[i], pk);
}

struct rp_result_seq rp_report_listed_view(struct rp_report_listed *l)
{
	return (struct rp_result_seq){ .n = l->n, .get = listed_get, .put = listed_put, .peek = listed_peek, .arg = l };
}

void rp_report_listed_fini(struct rp_report_listed *l)
{
	free(l->idx);
	free(l->pair_eps);
	memset(l, 0, sizeof(*l));
}
