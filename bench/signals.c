/* signals.c: SIGINT/SIGTERM set the stop flag; see signals.h. */
#include "signals.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/time.h>

#include "stop.h"

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
