/* signals.h: the one place that installs the SIGINT/SIGTERM handlers (sigaction, no SA_RESTART, so a
 * blocking call returns EINTR and the waits in lib/ see rp_stop_requested() at once). */
#ifndef RP_SIGNALS_H
#define RP_SIGNALS_H

/* Install the handlers that set lib/stop.h's flag. 0 or a negative errno. */
int rp_signals_install(void);
/* A time budget: after seconds, SIGALRM sets the same stop flag (rp_stop_signal() is then SIGALRM), so
 * every wait in lib/ ends as on SIGTERM; 0 disarms it. 0 or a negative errno. */
int rp_signals_alarm(double seconds);

#endif
