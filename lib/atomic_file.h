/* atomic_file.h: write a file so that a reader only ever sees a whole version of it.
 *
 * The data goes to "<path>.tmp.<pid>" beside path, is flushed and fsync'd, then renamed over path.
 * On any failure the temporary is removed and path keeps its old content (or stays absent). Every
 * failure is logged once with rp_error(), naming the call and the file; callers only pass the
 * negative errno up. The one mechanism behind rp_sb_write_atomic() and the rp_report_write_*()
 * writers.
 */
#ifndef RP_ATOMIC_FILE_H
#define RP_ATOMIC_FILE_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Caller storage for one write in progress; filled by rp_atomic_file_open(). */
struct rp_atomic_file {
	FILE *f;              /* write the content here; closed (and NULL) after commit */
	const char *path;     /* borrowed from the caller: must stay valid until commit */
	char tmp[PATH_MAX];   /* "<path>.tmp.<pid>" */
};

/* Create the temporary for path and open af->f on it. 0 or a negative errno (logged). */
int rp_atomic_file_open(struct rp_atomic_file *af, const char *path);
/* Finish the write begun by rp_atomic_file_open(): close af->f, and unless write_failed (the
 * caller saw a short write) or the stream has an error, fsync and rename it over af->path. Always
 * closes the stream and leaves no temporary behind. 0 or a negative errno (logged). */
int rp_atomic_file_commit(struct rp_atomic_file *af, bool write_failed);
/* Write len bytes of buf to path atomically (open, write, commit). 0 or a negative errno (logged). */
int rp_atomic_write(const char *path, const void *buf, size_t len);

#endif
