/* signals.h: the one place that installs the SIGINT/SIGTERM handlers (sigaction, no SA_RESTART, so a
 * blocking call returns EINTR and the waits in lib/ see rp_stop_requested() at once). */
#ifndef RP_SIGNALS_H
#define RP_SIGNALS_H

/* Install the handlers that set lib/stop.h's flag. 0 or a negative errno. */
int rp_signals_install(void);

#endif
