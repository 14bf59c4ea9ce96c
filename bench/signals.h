/* signals.h: the one place that installs the SIGINT/SIGTERM handlers (sigaction, no SA_RESTART, so a
 * blocking call returns EINTR and the waits in lib/ see rp_stop_requested() at once). */
#ifndef RP_SIGNALS_H
#define RP_SIGNALS_H

#include <stdbool.h>

/* Install the handlers that set lib/base/stop.h's flag. 0 or a negative errno. */
int rp_signals_install(void);
/* A time budget: after seconds, SIGALRM sets the same stop flag (rp_stop_signal() is then SIGALRM), so
 * every wait in lib/ ends as on SIGTERM; 0 disarms it. 0 or a negative errno. */
int rp_signals_alarm(double seconds);

/* The watchdog (a thread of its own): once armed, a process still running grace_s seconds later
 * writes one line on stderr and _exit()s with 128 + the stop signal, whatever it waits for (an
 * MPI_Finalize whose peer is gone, a teardown stuck in a driver, a client that never comes).
 * arm_on_signal: SIGINT/SIGTERM arm it themselves (loopback, pair, check); otherwise only
 * rp_signals_watchdog_arm() does (matrix: after its rounds, on every rank, signalled or told by rank
 * 0). SIGALRM (rp_signals_alarm) never arms it. 0 or a negative errno. */
int rp_signals_watchdog(double grace_s, bool arm_on_signal);
/* Arm the watchdog now for the stop by sig, with extra_s seconds on top of the grace period (rank 0's
 * final reports of a large run take their time); kept when already armed. */
void rp_signals_watchdog_arm(int sig, double extra_s);

#endif
