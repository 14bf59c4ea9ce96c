/* report.c: pair results as JSON and CSV, written atomically; see report.h. */
#include "report.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "atomic_file.h"
#include "log.h"
#include "util.h"

/* Add key = value to obj, counting a failure in *bad (jansson returns -1 on out of memory). */
static void set(json_t *obj, const char *key, json_t *value, int *bad)
{
	if (!value || json_object_set_new(obj, key, value) != 0)
		(*bad)++;
}

static json_t *endpoint_json(const struct rp_endpoint *e, int *bad)
{
	json_t *o = json_object();

	if (!o) {
		(*bad)++;
		return NULL;
	}
	set(o, "node", json_string(e->node), bad);
	set(o, "device", json_string(e->device), bad);
	set(o, "port", json_integer(e->port), bad);
	set(o, "gid_index", json_integer(e->gid_index), bad);
	set(o, "mtu", json_integer(e->mtu), bad);
	set(o, "link_gbps", json_real(e->link_gbps), bad);
	set(o, "mem", json_string(e->mem), bad);
	set(o, "mem_reg", json_string(e->mem_reg), bad);
	return o;
}

json_t *rp_report_pair_json(const struct rp_pair_result *r)
{
	json_t *o = json_object(), *lat = json_object();
	int bad = 0;

	if (!o || !lat) {
		json_decref(o);
		json_decref(lat);
		rp_error(-ENOMEM, "report: out of memory");
		return NULL;
	}
	set(o, "src", endpoint_json(&r->src, &bad), &bad);
	set(o, "dst", endpoint_json(&r->dst, &bad), &bad);
	set(o, "status", json_string(rp_status_code(r->status)), &bad);
	set(o, "reason", json_string(r->reason), &bad);
	set(o, "gbps", json_real(r->gbps), &bad);
	set(o, "gbps_min", json_real(r->gbps_min), &bad);
	set(o, "bytes", json_integer((json_int_t)r->bytes), &bad);
	set(o, "iters", json_integer((json_int_t)r->iters), &bad);
	set(o, "msg_size", json_integer((json_int_t)r->msg_size), &bad);
	set(o, "verified", json_boolean(r->verified), &bad);
	set(o, "bad_offset", json_integer(r->bad_offset), &bad);
	set(lat, "measured", json_boolean(r->lat.measured), &bad);
	set(lat, "min_us", json_real(r->lat.min_us), &bad);
	set(lat, "median_us", json_real(r->lat.median_us), &bad);
	set(lat, "p99_us", json_real(r->lat.p99_us), &bad);
	set(lat, "max_us", json_real(r->lat.max_us), &bad);
	set(lat, "samples", json_integer((json_int_t)r->lat.samples), &bad);
	set(o, "latency", lat, &bad);
	set(o, "elapsed_s", json_real(r->elapsed_s), &bad);
	if (bad) {
		json_decref(o);
		rp_error(-ENOMEM, "report: out of memory");
		return NULL;
	}
	return o;
}

static json_t *mem_json(const struct rp_mem_spec *m, int *bad)
{
	json_t *o = json_object();
	static const char *const regs[] = { "auto", "dmabuf", "peermem" };

	if (!o) {
		(*bad)++;
		return NULL;
	}
	set(o, "kind", json_string(m->kind ? m->kind : ""), bad);
	set(o, "device", json_integer(m->device), bad);
	set(o, "hugepages", json_boolean(m->hugepages), bad);
	set(o, "gpu_reg", json_string((unsigned)m->gpu_reg < 3 ? regs[m->gpu_reg] : "?"), bad);
	return o;
}

json_t *rp_report_cfg_json(const struct rp_engine_cfg *c)
{
	json_t *o = json_object();
	int bad = 0;

	if (!o)
		return NULL;
	set(o, "mode", json_string(c->meas.mode == RP_MODE_LAT ? "latency" : "bandwidth"), &bad);
	set(o, "msg_size", json_integer((json_int_t)c->meas.msg_size), &bad);
	set(o, "iters", json_integer((json_int_t)c->meas.iters), &bad);
	set(o, "duration_s", json_real(c->meas.duration_s), &bad);
	set(o, "warmup_iters", json_integer((json_int_t)c->meas.warmup_iters), &bad);
	set(o, "tx_depth", json_integer(c->meas.tx_depth), &bad);
	set(o, "qps", json_integer(c->meas.n_qps), &bad);
	set(o, "cq_mod", json_integer(c->meas.cq_mod), &bad);
	set(o, "interval_s", json_real(c->meas.interval_s), &bad);
	set(o, "verify", json_boolean(c->meas.verify), &bad);
	set(o, "qp_timeout", json_integer(c->qp.qp_timeout), &bad);
	set(o, "retry_cnt", json_integer(c->qp.retry_cnt), &bad);
	set(o, "rnr_retry", json_integer(c->qp.rnr_retry), &bad);
	set(o, "traffic_class", json_integer(c->qp.traffic_class), &bad);
	set(o, "sl", json_integer(c->qp.sl), &bad);
	set(o, "timeout_s", json_real(c->timeout_s), &bad);
	set(o, "src_mem", mem_json(&c->src_mem, &bad), &bad);
	set(o, "dst_mem", mem_json(&c->dst_mem, &bad), &bad);
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* The command line as one string, arguments with spaces or quotes in single quotes. */
static char *join_argv(int argc, char **argv)
{
	size_t len = 1;
	char *s, *p;

	for (int i = 0; i < argc; i++)
		len += strlen(argv[i]) * 4 + 3;
	s = malloc(len);
	if (!s)
		return NULL;
	p = s;
	for (int i = 0; i < argc; i++) {
		bool quote = argv[i][0] == '\0' || strpbrk(argv[i], " \t'\"\\$") != NULL;

		if (i)
			*p++ = ' ';
		if (quote)
			*p++ = '\'';
		for (const char *a = argv[i]; *a; a++) {
			if (*a == '\'' && quote) {
				memcpy(p, "'\\''", 4);
				p += 4;
			} else {
				*p++ = *a;
			}
		}
		if (quote)
			*p++ = '\'';
	}
	*p = '\0';
	return s;
}

json_t *rp_report_json(const struct rp_report_info *info, const struct rp_pair_result *pairs, size_t n)
{
	json_t *root = json_object(), *arr = json_array(), *summary = json_object();
	time_t t = info->started > 0 ? (time_t)info->started : time(NULL);
	char when[32], *cmdline = join_argv(info->argc, info->argv);
	struct tm tm;
	size_t ok = 0;
	int bad = 0;

	if (!root || !arr || !summary || !cmdline) {
		json_decref(root);
		json_decref(arr);
		json_decref(summary);
		free(cmdline);
		rp_error(-ENOMEM, "report: out of memory");
		return NULL;
	}
	gmtime_r(&t, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	set(root, "schema", json_integer(RP_REPORT_SCHEMA), &bad);
	set(root, "tool", json_string("rdmaprobe"), &bad);
	set(root, "version", json_string(info->version ? info->version : ""), &bad);
	set(root, "command", json_string(info->command ? info->command : ""), &bad);
	set(root, "command_line", json_string(cmdline), &bad);
	set(root, "started", json_string(when), &bad);
	if (info->cfg)
		set(root, "config", rp_report_cfg_json(info->cfg), &bad);
	for (size_t i = 0; i < n; i++) {
		json_t *p = rp_report_pair_json(&pairs[i]);

		if (!p || json_array_append_new(arr, p) != 0)
			bad++;
		ok += pairs[i].status == RP_ST_OK;
	}
	set(summary, "pairs", json_integer((json_int_t)n), &bad);
	set(summary, "ok", json_integer((json_int_t)ok), &bad);
	set(summary, "failed", json_integer((json_int_t)(n - ok)), &bad);
	set(root, "summary", summary, &bad);
	set(root, "pairs", arr, &bad);
	free(cmdline);
	if (bad) {
		json_decref(root);
		rp_error(-ENOMEM, "report: out of memory");
		return NULL;
	}
	return root;
}

int rp_report_write_json(const json_t *root, const char *path)
{
	struct rp_atomic_file af;
	int rc = rp_atomic_file_open(&af, path);
	bool failed;

	if (rc)
		return rc;
	failed = json_dumpf(root, af.f, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(6)) != 0;
	failed |= fputc('\n', af.f) == EOF;
	return rp_atomic_file_commit(&af, failed);
}

int rp_report_write_text(const char *text, size_t len, const char *path)
{
	return rp_atomic_write(path, text, len);
}

/* A CSV field: quoted (doubling quotes) when it has a comma, quote or line break. */
static void csv_str(FILE *f, const char *s, bool last)
{
	if (strpbrk(s, ",\"\r\n")) {
		fputc('"', f);
		for (; *s; s++) {
			if (*s == '"')
				fputc('"', f);
			fputc(*s, f);
		}
		fputc('"', f);
	} else {
		fputs(s, f);
	}
	fputc(last ? '\n' : ',', f);
}

static void csv_endpoint(FILE *f, const struct rp_endpoint *e)
{
	csv_str(f, e->node, false);
	csv_str(f, e->device, false);
	fprintf(f, "%d,%d,%d,%.3f,", e->port, e->gid_index, e->mtu, e->link_gbps);
	csv_str(f, e->mem, false);
	csv_str(f, e->mem_reg, false);
}

int rp_report_write_csv(const struct rp_pair_result *pairs, size_t n, const char *path)
{
	struct rp_atomic_file af;
	int rc = rp_atomic_file_open(&af, path);
	FILE *f = af.f;

	if (rc)
		return rc;
	fputs("src_node,src_device,src_port,src_gid_index,src_mtu,src_link_gbps,src_mem,src_mem_reg,"
	      "dst_node,dst_device,dst_port,dst_gid_index,dst_mtu,dst_link_gbps,dst_mem,dst_mem_reg,"
	      "status,gbps,gbps_min,bytes,iters,msg_size,verified,bad_offset,"
	      "lat_min_us,lat_median_us,lat_p99_us,lat_max_us,lat_samples,elapsed_s,reason\n", f);
	for (size_t i = 0; i < n; i++) {
		const struct rp_pair_result *r = &pairs[i];

		csv_endpoint(f, &r->src);
		csv_endpoint(f, &r->dst);
		fprintf(f, "%s,%.6f,%.6f,%llu,%llu,%zu,%s,%lld,", rp_status_code(r->status), r->gbps, r->gbps_min,
			(unsigned long long)r->bytes, (unsigned long long)r->iters, r->msg_size,
			r->verified ? "true" : "false", (long long)r->bad_offset);
		if (r->lat.measured)
			fprintf(f, "%.3f,%.3f,%.3f,%.3f,%llu,", r->lat.min_us, r->lat.median_us, r->lat.p99_us,
				r->lat.max_us, (unsigned long long)r->lat.samples);
		else
			fputs(",,,,,", f);
		fprintf(f, "%.3f,", r->elapsed_s);
		csv_str(f, r->reason, true);
	}
	return rp_atomic_file_commit(&af, false);
}
