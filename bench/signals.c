/* signals.c: SIGINT/SIGTERM set the stop flag; see signals.h. */
#include "signals.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "base/stop.h"
#include "base/util.h"

/* The watchdog's settings (written before its thread starts) and the arm request (a signal number:
 * set by rp_signals_watchdog_arm from the main thread, read by the watchdog thread). */
static double wd_grace_s;
static bool wd_on_signal;
static volatile sig_atomic_t wd_armed_sig;
static double wd_extra_s;      /* written before wd_armed_sig */

static void on_stop(int sig)
{
	rp_stop_request(sig);
}

int rp_signals_install(void)
{
	struct sigaction sa;
	const int sigs[] = { SIGINT, SIGTERM };

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = 0;    /* no SA_RESTART: blocking calls return EINTR */
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		if (sigaction(sigs[i], &sa, NULL) != 0)
			return -errno;
	return 0;
}

int rp_signals_alarm(double seconds)
{
	struct sigaction sa;
	struct itimerval it;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGALRM, &sa, NULL) != 0)
		return -errno;
	memset(&it, 0, sizeof(it));
	it.it_value.tv_sec = (time_t)seconds;
	it.it_value.tv_usec = (suseconds_t)((seconds - (double)(time_t)seconds) * 1e6);
	if (seconds > 0 && it.it_value.tv_sec == 0 && it.it_value.tv_usec == 0)
		it.it_value.tv_usec = 1;
	return setitimer(ITIMER_REAL, &it, NULL) == 0 ? 0 : -errno;
}

/* Poll every 50 ms for a stop (or an arm); once armed, wait grace seconds, then end the process. */
static void *watchdog_run(void *arg)
{
	struct timespec tick = { 0, 50 * 1000 * 1000 };
	double armed_at = 0;
	int sig = 0, n;
	char msg[160];

	(void)arg;
	for (;;) {
		int s = rp_stop_signal();

		if (!sig && wd_armed_sig)
			sig = wd_armed_sig;
		if (!sig && wd_on_signal && (s == SIGINT || s == SIGTERM))
			sig = s;
		if (sig && armed_at == 0)
			armed_at = rp_now();
		if (sig && rp_now() - armed_at >= wd_grace_s + wd_extra_s)
			break;
		nanosleep(&tick, NULL);
	}
	n = snprintf(msg, sizeof(msg), "rdmaprobe: still running %.1f s after signal %d: exiting now (%d)\n",
			 wd_grace_s + wd_extra_s, sig, 128 + sig);

	if (n > 0 && write(STDERR_FILENO, msg, (size_t)n) < 0)
		n = 0;
	_exit(128 + sig);
	return NULL;
}

int rp_signals_watchdog(double grace_s, bool arm_on_signal)
{
	sigset_t all, old;
	pthread_t t;
	int rc;

	wd_grace_s = grace_s;
	wd_on_signal = arm_on_signal;
	/* the thread takes no signal: SIGINT/SIGTERM go to the main thread, whose waits see the flag */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	rc = pthread_create(&t, NULL, watchdog_run, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc)
		return -rc;
	pthread_detach(t);
	return 0;
}

void rp_signals_watchdog_arm(int sig, double extra_s)
{
	if (wd_armed_sig || sig <= 0)
		return;
	wd_extra_s = extra_s > 0 ? extra_s : 0;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	wd_armed_sig = sig;
}
