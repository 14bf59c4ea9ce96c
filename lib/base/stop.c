/* stop.c: the stop request; see stop.h. */
#include "base/stop.h"

static volatile sig_atomic_t stop_sig;

void rp_stop_request(int sig)
{
	stop_sig = sig > 0 ? sig : SIGTERM;
}

bool rp_stop_requested(void)
{
	return stop_sig != 0;
}

int rp_stop_signal(void)
{
	return (int)stop_sig;
}

void rp_stop_reset(void)
{
	stop_sig = 0;
}

int rp_stop_exit_status(void)
{
	return 128 + (stop_sig ? (int)stop_sig : SIGTERM);
}
