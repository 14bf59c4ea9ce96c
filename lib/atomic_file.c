/* atomic_file.c: whole-file writes through a temporary, fsync and rename; see atomic_file.h. */
#include "atomic_file.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "log.h"

int rp_atomic_file_open(struct rp_atomic_file *af, const char *path)
{
	int n;

	af->f = NULL;
	af->path = path;
	n = snprintf(af->tmp, sizeof(af->tmp), "%s.tmp.%ld", path, (long)getpid());
	if (n < 0 || (size_t)n >= sizeof(af->tmp))
		return rp_error(-ENAMETOOLONG, "write %s: path too long", path);
	af->f = fopen(af->tmp, "we");
	if (!af->f)
		return rp_error(-errno, "open %s: %s", af->tmp, strerror(errno));
	return 0;
}

int rp_atomic_file_commit(struct rp_atomic_file *af, bool write_failed)
{
	const char *call = "write";
	int err = 0;

	if (write_failed || ferror(af->f)) {
		err = -EIO;
	} else if (fflush(af->f) != 0) {
		err = -errno;
	} else if (fsync(fileno(af->f)) != 0) {
		call = "fsync";
		err = -errno;
	}
	if (fclose(af->f) != 0 && !err) {
		call = "close";
		err = -errno;
	}
	af->f = NULL;
	if (err) {
		unlink(af->tmp);
		return rp_error(err, "%s %s: %s", call, af->tmp, strerror(-err));
	}
	if (rename(af->tmp, af->path) != 0) {
		err = -errno;
		unlink(af->tmp);
		return rp_error(err, "rename %s to %s: %s", af->tmp, af->path, strerror(-err));
	}
	return 0;
}

int rp_atomic_write(const char *path, const void *buf, size_t len)
{
	struct rp_atomic_file af;
	int rc = rp_atomic_file_open(&af, path);

	if (rc)
		return rc;
	return rp_atomic_file_commit(&af, len && fwrite(buf, 1, len, af.f) != len);
}
