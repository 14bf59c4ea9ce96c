/* report_jsonl.c: pairs streamed to a JSON Lines file; see report_jsonl.h. */
#include "report/report_jsonl.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/log.h"
#include "base/util.h"

/* Write all of buf, retrying short writes and EINTR. 0 or negative errno. */
static int write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t w = write(fd, buf, len);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		buf += w;
		len -= (size_t)w;
	}
	return 0;
}

/* o as one compact line; takes the reference. The first error sticks (logged once). */
static int put_line(struct rp_jsonl *j, json_t *o)
{
	char *text;
	size_t len;
	int rc;

	if (j->err)
		goto out;
	if (!o) {
		j->err = rp_error(-ENOMEM, "%s: out of memory building a line", j->path);
		goto out;
	}
	text = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(6));
	if (!text) {
		j->err = rp_error(-ENOMEM, "%s: out of memory encoding a line", j->path);
		goto out;
	}
	len = strlen(text);
	text[len] = '\n';   /* json_dumps' NUL becomes the newline: one write(2) per line */
	rc = write_all(j->fd, text, len + 1);
	free(text);
	if (rc)
		j->err = rp_error(rc, "write %s: %s (the pairs written so far are kept)", j->path, strerror(-rc));
out:
	json_decref(o);
	return j->err;
}

int rp_jsonl_open(struct rp_jsonl *j, const char *path, const struct rp_report_info *info, bool simulated)
{
	char when[32];
	struct tm tm;
	time_t t;
	int rc;

	memset(j, 0, sizeof(*j));
	j->fd = -1;
	if (!path || !path[0] || strcmp(path, "-") == 0)
		return rp_error(-EINVAL, "--jsonl wants a file name (the stream is a record, not standard output)");
	if (rp_strlcpy(j->path, path, sizeof(j->path)))
		return rp_error(-ENAMETOOLONG, "--jsonl %.64s...: path too long", path);
	rc = rp_report_path_check(path);
	if (rc)
		return rc;
	j->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (j->fd < 0)
		return rp_error(-errno, "create %s: %s", path, strerror(errno));
	t = info && info->started > 0 ? (time_t)info->started : time(NULL);
	gmtime_r(&t, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	rc = put_line(j, json_pack("{s:s, s:i, s:s, s:s, s:s, s:s, s:b}", "record", "run", "schema",
				   RP_REPORT_SCHEMA, "tool", "rdmaprobe", "version",
				   info && info->version ? info->version : "", "command",
				   info && info->command ? info->command : "", "started", when, "simulated",
				   simulated));
	if (rc) {
		close(j->fd);
		j->fd = -1;
	}
	return rc;
}

int rp_jsonl_pairs(struct rp_jsonl *j, const struct rp_pair_result *res, size_t n, unsigned round, bool retest)
{
	for (size_t i = 0; i < n && !j->err && j->fd >= 0; i++) {
		json_t *p = rp_report_pair_json(&res[i]), *line = json_pack("{s:s, s:I, s:b}", "record", "pair",
									   "round", (json_int_t)round, "retest", retest);

		if (p && line && json_object_update(line, p) == 0) {
			if (put_line(j, line) == 0)
				j->pairs++;
			line = NULL;
		}
		json_decref(p);
		if (line) {
			json_decref(line);
			if (!j->err)
				j->err = rp_error(-ENOMEM, "%s: out of memory building a line", j->path);
		}
	}
	return j->err;
}

int rp_jsonl_close(struct rp_jsonl *j, bool complete)
{
	int rc;

	if (j->fd < 0)
		return j->err;
	put_line(j, json_pack("{s:s, s:I, s:b}", "record", "end", "pairs", (json_int_t)j->pairs, "complete",
			      complete));
	if (fsync(j->fd) != 0 && !j->err)
		j->err = rp_error(-errno, "fsync %s: %s", j->path, strerror(errno));
	rc = close(j->fd);
	j->fd = -1;
	if (rc != 0 && !j->err)
		j->err = rp_error(-errno, "close %s: %s", j->path, strerror(errno));
	return j->err;
}
