/* log.c: the sink behind rp_log(); see log.h. */
#include "base/log.h"

#include <stdio.h>

static rp_log_sink_fn log_sink;
static void *log_sink_ctx;
static enum rp_log_level log_max = RP_LOG_WARN;

void rp_log_set_sink(rp_log_sink_fn fn, void *ctx)
{
	log_sink = fn;
	log_sink_ctx = ctx;
}

void rp_log_set_level(enum rp_log_level max_level)
{
	log_max = max_level;
}

enum rp_log_level rp_log_get_level(void)
{
	return log_max;
}

void rp_vlog(enum rp_log_level level, const char *fmt, va_list ap)
{
	char msg[1024];

	if (level > log_max)
		return;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (log_sink)
		log_sink(level, msg, log_sink_ctx);
	else
		fprintf(stderr, "rdmaprobe: %s%s\n", level == RP_LOG_WARN ? "warning: " : "", msg);
}

void rp_log(enum rp_log_level level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	rp_vlog(level, fmt, ap);
	va_end(ap);
}

int rp_error(int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	rp_vlog(RP_LOG_ERROR, fmt, ap);
	va_end(ap);
	return err;
}
