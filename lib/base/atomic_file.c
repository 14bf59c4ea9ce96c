/* atomic_file.c: whole-file writes through an exclusive temporary, fsync, rename and directory fsync;
 * see atomic_file.h. */
#include "base/atomic_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/log.h"

#define TMP_TRIES 100     /* names tried when "<path>.tmp.<pid>" is taken (planted, or a stale one) */

/* What a non-regular file is, for the message, and the errno that says it. */
static const char *file_kind(mode_t mode, int *err_p)
{
	*err_p = -EINVAL;
	if (S_ISDIR(mode)) {
		*err_p = -EISDIR;
		return "a directory";
	}
	if (S_ISLNK(mode)) {
		*err_p = -ELOOP;
		return "a symbolic link (give the file it points to)";
	}
	if (S_ISCHR(mode))
		return "a character device";
	if (S_ISBLK(mode))
		return "a block device";
	if (S_ISFIFO(mode))
		return "a FIFO";
	if (S_ISSOCK(mode))
		return "a socket";
	return "not a regular file";
}

/* The directory part of path into dir ("." when there is none). 0 or -ENAMETOOLONG. */
static int dir_of(const char *path, char *dir, size_t size)
{
	const char *slash = strrchr(path, '/');
	size_t n;

	if (!slash)
		return snprintf(dir, size, ".") < (int)size ? 0 : -ENAMETOOLONG;
	n = slash == path ? 1 : (size_t)(slash - path);
	if (n >= size)
		return -ENAMETOOLONG;
	memcpy(dir, path, n);
	dir[n] = '\0';
	return 0;
}

int rp_atomic_file_check(const char *path)
{
	char dir[PATH_MAX];
	struct stat st;
	size_t len;
	int err;

	if (!path || !path[0])
		return rp_error(-EINVAL, "output file: the path is empty (give a file name, or - for standard output)");
	if (strcmp(path, "-") == 0)
		return 0;
	len = strlen(path);
	if (len >= PATH_MAX - 32)
		return rp_error(-ENAMETOOLONG, "output file %.64s...: path too long", path);
	if (path[len - 1] == '/')
		return rp_error(-EISDIR, "output file %s: names a directory; reports are written to a regular file "
				"(or - for standard output)", path);
	if (lstat(path, &st) == 0) {
		const char *kind = file_kind(st.st_mode, &err);

		if (!S_ISREG(st.st_mode))
			return rp_error(err, "output file %s: is %s; reports are written only to a regular file "
					"(or - for standard output)", path, kind);
	} else if (errno != ENOENT) {
		return rp_error(-errno, "output file %s: %s", path, strerror(errno));
	}
	if (dir_of(path, dir, sizeof(dir)) != 0)
		return rp_error(-ENAMETOOLONG, "output file %s: path too long", path);
	if (stat(dir, &st) != 0)
		return rp_error(-errno, "output file %s: directory %s: %s", path, dir, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return rp_error(-ENOTDIR, "output file %s: %s is not a directory", path, dir);
	if (access(dir, W_OK | X_OK) != 0)
		return rp_error(-errno, "output file %s: cannot create files in %s: %s", path, dir, strerror(errno));
	return 0;
}

/* Create a temporary beside af->path that did not exist before: never follows or reuses a name. */
static int open_tmp(struct rp_atomic_file *af)
{
	long pid = (long)getpid();

	for (unsigned k = 0; k < TMP_TRIES; k++) {
		int n = k ? snprintf(af->tmp, sizeof(af->tmp), "%s.tmp.%ld.%u", af->path, pid, k)
			  : snprintf(af->tmp, sizeof(af->tmp), "%s.tmp.%ld", af->path, pid);

		if (n < 0 || (size_t)n >= sizeof(af->tmp))
			return rp_error(-ENAMETOOLONG, "write %s: path too long", af->path);
		af->fd = open(af->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
		if (af->fd >= 0)
			return 0;
		if (errno != EEXIST)
			return rp_error(-errno, "create %s: %s", af->tmp, strerror(errno));
		if (k == 0)
			rp_warn("write %s: %s already exists (left by another process?): not touching it", af->path,
				af->tmp);
	}
	return rp_error(-EEXIST, "write %s: %s.tmp.%ld and %d more temporary names already exist", af->path,
			af->path, pid, TMP_TRIES - 1);
}

int rp_atomic_file_open(struct rp_atomic_file *af, const char *path)
{
	int rc;

	memset(af, 0, sizeof(*af));
	af->fd = -1;
	af->path = path;
	rc = rp_atomic_file_check(path);
	if (rc)
		return rc;
	if (strcmp(path, "-") == 0) {
		fflush(stdout);   /* what the front end printed comes first */
		af->to_stdout = true;
		af->fd = STDOUT_FILENO;
		return 0;
	}
	return open_tmp(af);
}

/* write(2) all of buf, unless an earlier write failed; a failure goes to af->err. */
static void write_all(struct rp_atomic_file *af, const char *p, size_t len)
{
	while (!af->err && len > 0) {
		ssize_t n = write(af->fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			af->err = n < 0 ? -errno : -EIO;
			break;
		}
		p += n;
		len -= (size_t)n;
	}
}

static void flush_buf(struct rp_atomic_file *af)
{
	if (af->buffered)
		write_all(af, af->buf, af->buffered);
	af->buffered = 0;
}

void rp_atomic_file_write(struct rp_atomic_file *af, const void *buf, size_t len)
{
	if (af->err || len == 0)   /* nothing to add (buf may then be NULL: memcpy must not see it) */
		return;
	if (af->buffered + len > sizeof(af->buf))
		flush_buf(af);
	if (len >= sizeof(af->buf)) {
		write_all(af, buf, len);
		return;
	}
	memcpy(af->buf + af->buffered, buf, len);
	af->buffered += len;
}

void rp_atomic_file_abort(struct rp_atomic_file *af)
{
	af->buffered = 0;
	if (af->fd >= 0 && !af->to_stdout) {
		close(af->fd);
		unlink(af->tmp);
	}
	af->fd = -1;
}

/* fsync the directory that holds path, so that the rename is on disk too. 0 or a negative errno. */
static int sync_dir(const char *path)
{
	char dir[PATH_MAX];
	int fd, err = 0;

	if (dir_of(path, dir, sizeof(dir)) != 0)
		return -ENAMETOOLONG;
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return rp_error(-errno, "open directory %s to fsync it: %s", dir, strerror(errno));
	/* EINVAL: a file system that cannot sync a directory (the rename is as durable as it gets) */
	if (fsync(fd) != 0 && errno != EINVAL)
		err = rp_error(-errno, "fsync directory %s after writing %s: %s", dir, path, strerror(errno));
	close(fd);
	return err;
}

int rp_atomic_file_commit(struct rp_atomic_file *af)
{
	const char *call = "write";
	int err;

	flush_buf(af);
	err = af->err;
	if (af->to_stdout) {
		af->fd = -1;
		return err ? rp_error(err, "write standard output: %s", strerror(-err)) : 0;
	}
	if (!err && fsync(af->fd) != 0) {
		call = "fsync";
		err = -errno;
	}
	if (close(af->fd) != 0 && !err) {
		call = "close";
		err = -errno;
	}
	af->fd = -1;
	if (err) {
		unlink(af->tmp);
		return rp_error(err, "%s %s (%s): %s", call, af->path, af->tmp, strerror(-err));
	}
	if (rename(af->tmp, af->path) != 0) {
		err = -errno;
		unlink(af->tmp);
		return rp_error(err, "rename %s to %s: %s", af->tmp, af->path, strerror(-err));
	}
	return sync_dir(af->path);
}

int rp_atomic_write(const char *path, const void *buf, size_t len)
{
	struct rp_atomic_file af;
	int rc = rp_atomic_file_open(&af, path);

	if (rc)
		return rc;
	rp_atomic_file_write(&af, buf, len);
	return rp_atomic_file_commit(&af);
}
