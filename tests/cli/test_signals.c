/* test_signals.c: bench/signals.c's watchdog (issue 26 item 16): a process asked to stop is gone
 * within its grace period whatever it then waits for, with 128 + the signal; a matrix-style
 * watchdog (not armed by the signal) waits for its arm; the budget's SIGALRM never arms it. Each
 * case runs in a child that, once signalled, blocks where no stop flag is checked (as a teardown
 * stuck in a driver or an MPI_Finalize waiting for a rank that is gone). */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "signals.h"
#include "base/stop.h"

/* Sleep s seconds without looking at the stop flag (nanosleep resumed after EINTR). */
static void stuck(double s)
{
	struct timespec ts = { (time_t)s, (long)((s - (double)(time_t)s) * 1e9) };

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/* Fork; the child runs fn and exits 0 if it returns. The child's exit status, or 1000 + its signal;
 * a child still there after 60 s (the watchdog failed) is killed: 1000 + SIGKILL. */
static int child_status(void (*fn)(void))
{
	pid_t pid = fork();
	int st = 0;

	assert_true(pid >= 0);
	if (pid == 0) {
		alarm(60);   /* default action: the child dies, the test sees SIGALRM */
		fn();
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 1000 + WTERMSIG(st);
}

static void term_then_stuck(void)
{
	if (rp_signals_install() != 0 || rp_signals_watchdog(0.2, true) != 0)
		_exit(99);
	raise(SIGTERM);
	stuck(30);
}

static void int_then_stuck(void)
{
	if (rp_signals_install() != 0 || rp_signals_watchdog(0.2, true) != 0)
		_exit(99);
	raise(SIGINT);
	stuck(30);
}

/* Armed by the signal: out with 143 / 130 after the grace period, not 30 s later. */
static void test_signal_arms(void **state)
{
	(void)state;
	assert_int_equal(child_status(term_then_stuck), 143);
	assert_int_equal(child_status(int_then_stuck), 130);
}

static void matrix_style(void)
{
	if (rp_signals_install() != 0 || rp_signals_watchdog(0.2, false) != 0)
		_exit(99);
	raise(SIGTERM);
	stuck(1);                     /* the rounds end: not armed by the signal itself */
	if (!rp_stop_requested())
		_exit(98);
	rp_signals_watchdog_arm(SIGTERM, 0.1);
	stuck(30);                    /* a finalize that never returns */
}

static void matrix_style_unarmed(void)
{
	if (rp_signals_install() != 0 || rp_signals_watchdog(0.2, false) != 0)
		_exit(99);
	raise(SIGTERM);
	stuck(1);                     /* not armed: the process ends on its own (exit 0) */
}

/* Not armed by the signal: only rp_signals_watchdog_arm() starts the grace period. */
static void test_explicit_arm(void **state)
{
	(void)state;
	assert_int_equal(child_status(matrix_style_unarmed), 0);
	assert_int_equal(child_status(matrix_style), 143);
}

static void budget_alarm(void)
{
	if (rp_signals_install() != 0 || rp_signals_watchdog(0.2, true) != 0 || rp_signals_alarm(0.05) != 0)
		_exit(99);
	stuck(1);                     /* check's --budget ran out: it reports, it is not killed */
	_exit(rp_stop_signal() == SIGALRM ? 7 : 97);
}

static void test_budget_alarm_does_not_arm(void **state)
{
	(void)state;
	assert_int_equal(child_status(budget_alarm), 7);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_signal_arms),
		cmocka_unit_test(test_explicit_arm),
		cmocka_unit_test(test_budget_alarm_does_not_arm),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
