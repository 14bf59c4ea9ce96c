/* mx_settings.c: a matrix run's settings; see mx_settings.h. */
#include "job/mx_settings.h"

void mx_settings_init(struct mx_settings *s, const struct rp_engine_cfg *cfg, bool concurrent_rails, unsigned sweep,
		      bool hold, unsigned retest)
{
	*s = (struct mx_settings){ .msg_size = cfg->meas.msg_size, .iters = cfg->meas.iters,
				   .warmup_iters = cfg->meas.warmup_iters, .duration_s = cfg->meas.duration_s,
				   .bidir = cfg->meas.bidir, .latency = cfg->meas.mode == RP_MODE_LAT,
				   .concurrent_rails = concurrent_rails, .sweep = sweep, .hold = hold && sweep,
				   .retest = retest, .timeout_s = cfg->timeout_s };
}
