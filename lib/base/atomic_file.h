/* atomic_file.h: write a file so that a reader only ever sees a whole version of it, and only where a
 * regular file is or may be.
 *
 * The data goes to a new temporary beside path ("<path>.tmp.<pid>", or "<path>.tmp.<pid>.<k>" when
 * that name is taken), created with O_CREAT|O_EXCL|O_NOFOLLOW so that nothing planted there (a
 * symlink to another file) is ever followed or overwritten; it is fsync'd, renamed over path, and
 * the directory is fsync'd so the rename survives a crash. On any failure the temporary is removed
 * and path keeps its old content (or stays absent).
 *
 * Only a regular file, or a name that does not exist yet in an existing directory, is a target:
 * a directory, a device (/dev/full), a FIFO, a socket or a symlink (/dev/stdout) is refused with an
 * error naming the path and what it is, instead of being replaced by the rename. The path "-" is
 * standard output (written in place, nothing renamed).
 *
 * Every failure is logged once with rp_error(), naming the call, the file and the real cause
 * ("write r.json (r.json.tmp.42): No space left on device"); callers only pass the negative errno up.
 * The one mechanism behind rp_sb_write_atomic() and the rp_report_write_*() writers.
 */
#ifndef RP_ATOMIC_FILE_H
#define RP_ATOMIC_FILE_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#define RP_ATOMIC_FILE_BUF 16384   /* bytes gathered before one write(2) */

/* Caller storage for one write in progress; filled by rp_atomic_file_open(). The writes are gathered
 * in buf: a report of many small pieces (jansson hands over each token) costs a few system calls,
 * not thousands, which on a network or 9p file system each cost a round trip. */
struct rp_atomic_file {
	int fd;               /* where rp_atomic_file_write() writes; -1 once committed or aborted */
	int err;              /* the first write error (negative errno), 0 while all is well */
	bool to_stdout;       /* path "-": fd is standard output, nothing is renamed */
	const char *path;     /* borrowed from the caller: must stay valid until commit */
	char tmp[PATH_MAX];   /* the temporary's name ("" for standard output) */
	size_t buffered;      /* bytes in buf not yet written */
	char buf[RP_ATOMIC_FILE_BUF];
};

/* Whether path may be written: "-", a regular file, or an absent name in a directory this process
 * may create files in. 0, or a negative errno, logged with what is wrong: -EISDIR (a directory),
 * -ELOOP (a symbolic link), -EINVAL (a device, FIFO or socket; an empty path), -ENOENT / -ENOTDIR /
 * -EACCES (the directory). Cheap and side-effect free: front ends call it (through
 * rp_report_path_check()) at option-parse time, before anything is measured. */
int rp_atomic_file_check(const char *path);
/* Check path (rp_atomic_file_check()) and create its temporary. 0 or a negative errno (logged). */
int rp_atomic_file_open(struct rp_atomic_file *af, const char *path);
/* Append len bytes (gathered, written when the buffer fills and at commit); a failure is kept in
 * af->err (the first one wins) and reported by commit. */
void rp_atomic_file_write(struct rp_atomic_file *af, const void *buf, size_t len);
/* Finish the write begun by rp_atomic_file_open(): unless af->err is set, fsync the temporary, rename
 * it over af->path and fsync the directory (standard output: only report af->err). Always closes the
 * temporary and leaves none behind. 0 or a negative errno (logged, the real cause). */
int rp_atomic_file_commit(struct rp_atomic_file *af);
/* Give the write up (the content could not be built): close and remove the temporary; path is left
 * as it was. Logs nothing. */
void rp_atomic_file_abort(struct rp_atomic_file *af);
/* Write len bytes of buf to path atomically (open, write, commit). 0 or a negative errno (logged). */
int rp_atomic_write(const char *path, const void *buf, size_t len);

#endif
