/* stop.h: the one process-wide stop request (SIGINT/SIGTERM), checked by every wait in lib/.
 *
 * The front end installs the handlers once (bench/signals.c: rp_signals_install()); lib/ never
 * installs a handler, it only asks rp_stop_requested() at its safe points (between pairs, between
 * rounds, inside every wait that can last longer than a poll interval) and ends what it is doing
 * with RP_ST_INTERRUPTED, so what was measured before is kept and written. The flag is the only
 * mutable global of the project (a volatile sig_atomic_t, set from the handler).
 */
#ifndef RP_STOP_H
#define RP_STOP_H

#include <signal.h>
#include <stdbool.h>

/* Called from a signal handler (async-signal-safe): remember sig as the reason to stop. */
void rp_stop_request(int sig);
/* True once a stop was requested. */
bool rp_stop_requested(void);
/* The signal that asked to stop, 0 when none. */
int rp_stop_signal(void);
/* Forget a request (tests). */
void rp_stop_reset(void);

/* The exit status of a run that was stopped: 128 + the signal, as a shell reports it (130 for
 * SIGINT, 143 for SIGTERM). */
int rp_stop_exit_status(void);

#endif
