/* mx_progress.h: the matrix's progress line on one clock: at most one line every interval seconds
 * (and always the last round's), with the rounds, the reachability sweep's rounds, the failures so far
 * and an estimate of the time left from the rounds still to run.
 *
 * The estimate: the planned rounds' mean time so far times the planned rounds left, plus the sweep's
 * mean round time times the sweep rounds left, the two measured apart (the sweep's rounds interleave
 * with the planned rounds when it holds its connections, and take another time each); retest and
 * late rounds are counted as planned rounds of their own list. The clock is the caller's: real seconds
 * for a run, the virtual clock of a simulation; the interval is real seconds either way (the caller
 * passes both). */
#ifndef RP_MX_PROGRESS_H
#define RP_MX_PROGRESS_H

#include <stdbool.h>
#include <stddef.h>

#define MX_PROGRESS_INTERVAL_S 5.0

struct mx_progress {
	double interval_s;            /* at most a line this often (real seconds); 0: every event */
	double last_real;             /* when the last line was printed (real seconds); < 0 never */
	double t_prev;                /* the run's clock at the previous event */
	double round_s, sweep_s;      /* the run's clock spent in planned (incl. retest, late) and sweep rounds */
	size_t rounds, sweep_rounds;  /* events seen of each */
};

/* An event: a round (sweep: a sweep round) ended at the run's clock t. */
void mx_progress_note(struct mx_progress *p, bool sweep, double t);
/* Whether a line is due now (real: real seconds; last: the run's last round, always due); marks it printed. */
bool mx_progress_due(struct mx_progress *p, double real, bool last);
/* The seconds left by the estimate above, with rounds_left planned and sweep_left sweep rounds to go;
 * < 0 when there is nothing to estimate from yet. */
double mx_progress_eta(const struct mx_progress *p, size_t rounds_left, size_t sweep_left);

/* What follows the rounds the estimate counts, so that the last round's line does not say "0 s left"
 * before a long tail: the reachability sweep's second pass while failed screens wait for it (pending
 * of them: at least one deadline, pass2_s: the full --timeout and the MTU probe, as pass 2 runs them)
 * and the final verdict and reports (final_s: about what the last report write cost). */
double mx_progress_tail(size_t pending, double pass2_s, double final_s);

/* Whether rank 0 rewrites the summary reports (JSON, CSV, HTML, JUnit) after a round, every rank
 * waiting for its go meanwhile. since_s: the run's clock since the last rewrite (< 0: none yet);
 * cost_s: what that one cost. Due at once when nothing was written yet (the files exist from the
 * first round on) or a stop is on its way (stopping); else when MX_WRITE_EVERY_S and four times the
 * last cost have both passed: at most a fifth of the run spent writing, and at scale (a rewrite of
 * 8 million results costs most of a second) not every few rounds. Between rewrites --jsonl has every
 * result as it is measured; the final reports are written after the rounds whatever this says. */
#define MX_WRITE_EVERY_S 30.0
bool mx_progress_write_due(double since_s, double cost_s, bool stopping);

/* The line (no newline) into buf: "round 320 of 1023 done, sweep 17 of 17 done: 83352 failed so far, 27.1 s in,
 * about 45 s left" (what: "round", "retest round", "late round"; sweep_n 0: no sweep). */
void mx_progress_format(char *buf, size_t len, const char *what, size_t k, size_t n, size_t sweep_k, size_t sweep_n,
			size_t failed, double t, double eta);

#endif
