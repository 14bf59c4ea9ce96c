/* log.h: the library's one way to report an error or a note.
 *
 * lib/ never prints to stdout and never exits. The first function that detects an error logs it once,
 * naming the call and the object ("modify qp 0x1a2 to RTR on mlx5_0 port 1: Connection timed out"),
 * and returns a negative errno; callers only pass the code up.
 *
 * Messages go to a sink the front end installs; the default sink writes "rdmaprobe: <msg>\n" to stderr.
 */
#ifndef RP_LOG_H
#define RP_LOG_H

#include <stdarg.h>

enum rp_log_level { RP_LOG_ERROR, RP_LOG_WARN, RP_LOG_INFO, RP_LOG_DEBUG };

typedef void (*rp_log_sink_fn)(enum rp_log_level level, const char *msg, void *ctx);

/* Install a sink (NULL restores the default). Not thread-safe: call before starting work. */
void rp_log_set_sink(rp_log_sink_fn fn, void *ctx);
/* Messages above this level are dropped (default RP_LOG_WARN). */
void rp_log_set_level(enum rp_log_level max_level);
enum rp_log_level rp_log_get_level(void);

void rp_log(enum rp_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void rp_vlog(enum rp_log_level level, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));

/* Log at RP_LOG_ERROR and return err (a negative errno), so "return rp_error(-EINVAL, ...)" reads well. */
int rp_error(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define rp_warn(...) rp_log(RP_LOG_WARN, __VA_ARGS__)
#define rp_info(...) rp_log(RP_LOG_INFO, __VA_ARGS__)
#define rp_debug(...) rp_log(RP_LOG_DEBUG, __VA_ARGS__)

#endif
