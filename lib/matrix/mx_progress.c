/* mx_progress.c: the matrix's progress line; see mx_progress.h. */
#include "matrix/mx_progress.h"

#include <stdio.h>

void mx_progress_note(struct mx_progress *p, bool sweep, double t)
{
	double dt = t > p->t_prev ? t - p->t_prev : 0;

	if (sweep) {
		p->sweep_s += dt;
		p->sweep_rounds++;
	} else {
		p->round_s += dt;
		p->rounds++;
	}
	p->t_prev = t;
}

bool mx_progress_due(struct mx_progress *p, double real, bool last)
{
	if (!last && p->last_real >= 0 && real - p->last_real < p->interval_s)
		return false;
	p->last_real = real;
	return true;
}

double mx_progress_eta(const struct mx_progress *p, size_t rounds_left, size_t sweep_left)
{
	double eta = 0;

	if (rounds_left && !p->rounds)
		return -1;
	if (sweep_left && !p->sweep_rounds)
		return -1;
	if (rounds_left)
		eta += p->round_s / (double)p->rounds * (double)rounds_left;
	if (sweep_left)
		eta += p->sweep_s / (double)p->sweep_rounds * (double)sweep_left;
	return eta;
}

double mx_progress_tail(size_t pending, double pass2_s, double final_s)
{
	return (pending && pass2_s > 0 ? pass2_s : 0) + (final_s > 0 ? final_s : 0);
}

void mx_progress_format(char *buf, size_t len, const char *what, size_t k, size_t n, size_t sweep_k, size_t sweep_n,
			size_t failed, double t, double eta)
{
	char sw[64] = "", left[48];

	if (sweep_n)
		snprintf(sw, sizeof(sw), ", sweep %zu of %zu done", sweep_k, sweep_n);
	if (eta >= 0)
		snprintf(left, sizeof(left), "about %.0f s left", eta);
	else
		snprintf(left, sizeof(left), "time left not known yet");
	snprintf(buf, len, "%s %zu of %zu done%s: %zu failed so far, %.1f s in, %s", what, k, n, sw, failed, t, left);
}

bool mx_progress_write_due(double since_s, double cost_s, bool stopping)
{
	if (stopping || since_s < 0)
		return true;
	return since_s >= MX_WRITE_EVERY_S && since_s >= 4 * cost_s;
}
