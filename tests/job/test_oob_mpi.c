/* test_oob_mpi.c: the MPI side channel keeps the oob contract under a real mpirun with two ranks:
 * messages arrive whole, a receive with no sender returns -ETIMEDOUT at its deadline and consumes
 * nothing (the message sent later is still received), a wrong length is -EMSGSIZE, and the start-up
 * exchange works. Messages on the same tag from an earlier round, another pair or another run (a
 * late answer of a pair that timed out; tags wrap) are dropped, on the side channel and on the
 * control channel alike, and the receiver gets the message that is its own. An MPI call that fails in
 * the middle of a receive (MPI_Mrecv after the match) or a send (MPI_Isend) leaves nothing allocated
 * (a counting allocator: -Wl,--wrap=malloc/free). A control message over the receiver's bound is
 * consumed as -EMSGSIZE (its length and sender said) and nothing of it is kept, and the point-to-point
 * start-up exchange (lib/mx_startup) hands both ranks the set. The test starts itself under "mpirun -np 2"
 * (skips loudly without MPI or mpirun). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#ifdef HAVE_MPI
#include <mpi.h>
#endif

#include "job/mx_comm.h"
#include "job/mx_startup.h"
#include "job/oob_mpi.h"
#include "base/util.h"

/* --- a counting allocator and MPI calls that fail on demand (tests/job/test_oob_mpi.wrap) --------------- */

void *__real_malloc(size_t size);
void __real_free(void *p);
void *__wrap_malloc(size_t size);
void __wrap_free(void *p);
#ifdef HAVE_MPI
int __real_MPI_Mrecv(void *buf, int count, MPI_Datatype type, MPI_Message *msg, MPI_Status *st);
int __wrap_MPI_Mrecv(void *buf, int count, MPI_Datatype type, MPI_Message *msg, MPI_Status *st);
int __real_MPI_Isend(const void *buf, int count, MPI_Datatype type, int dst, int tag, MPI_Comm comm, MPI_Request *req);
int __wrap_MPI_Isend(const void *buf, int count, MPI_Datatype type, int dst, int tag, MPI_Comm comm, MPI_Request *req);
#endif

static long live_allocs;          /* this program's and lib/'s mallocs not yet freed (not MPI's own) */
static int fail_mrecv, fail_isend;

void *__wrap_malloc(size_t size)
{
	void *p = __real_malloc(size);

	if (p)
		__atomic_add_fetch(&live_allocs, 1, __ATOMIC_RELAXED);
	return p;
}

void __wrap_free(void *p)
{
	if (p)
		__atomic_sub_fetch(&live_allocs, 1, __ATOMIC_RELAXED);
	__real_free(p);
}

#ifdef HAVE_MPI
/* The message is taken off the wire, then the call fails: an MPI error in the middle of a receive. */
int __wrap_MPI_Mrecv(void *buf, int count, MPI_Datatype type, MPI_Message *msg, MPI_Status *st)
{
	int rc = __real_MPI_Mrecv(buf, count, type, msg, st);

	return fail_mrecv ? MPI_ERR_TRUNCATE : rc;
}

int __wrap_MPI_Isend(const void *buf, int count, MPI_Datatype type, int dst, int tag, MPI_Comm comm, MPI_Request *req)
{
	if (fail_isend)
		return MPI_ERR_OTHER;
	return __real_MPI_Isend(buf, count, type, dst, tag, comm, req);
}
#endif

/* Inside mpirun: the two ranks' side of each check. Returns 0 when all held; prints what broke. */
static int ranks_main(int argc, char **argv)
{
	struct mx_comm c;
	struct rp_oob oob, stale, other_pair;
	const struct mx_addr here = { .round = 3, .pair = 9 };
	char buf[64], *all = NULL;
	size_t *lens = NULL, *offs = NULL;
	int bad = 0, rc;
	double t0;

	if (rp_mpi_init(&argc, &argv, &c) != 0 || c.size != 2)
		return 10;
	mx_comm_set_run(&c, 0x1234);
	mx_comm_oob_open(&c, &oob, 1 - c.rank, 77, &here);
	if (c.rank == 0) {
		/* 1. nobody sends yet: a short receive times out at its deadline */
		t0 = rp_now();
		rc = rp_oob_recv(&oob, buf, 16, t0 + 0.3);
		if (rc != -ETIMEDOUT || rp_now() - t0 < 0.29) {
			fprintf(stderr, "rank 0: recv with no sender gave %d after %.2f s\n", rc, rp_now() - t0);
			bad = 1;
		}
		/* tell rank 1 to send now */
		mx_comm_send(&c, 1, 5, 0, "go", 3, rp_now() + 5);
		/* 2. the message comes whole; the three sent before it on the same tag (an earlier round,
		 * another pair, another run) are not taken for it */
		rc = rp_oob_recv(&oob, buf, 16, rp_now() + 10);
		if (rc != 0 || memcmp(buf, "0123456789abcdef", 16) != 0) {
			fprintf(stderr, "rank 0: recv gave %d (%.16s)\n", rc, rc == 0 ? buf : "");
			bad = 1;
		}
		if (mx_comm_dropped(&c) != 3) {
			fprintf(stderr, "rank 0: %lu messages dropped, want 3\n", mx_comm_dropped(&c));
			bad = 1;
		}
		/* 3. a message of another length */
		rc = rp_oob_recv(&oob, buf, 16, rp_now() + 10);
		if (rc != -EMSGSIZE) {
			fprintf(stderr, "rank 0: wrong-length message gave %d, want -EMSGSIZE\n", rc);
			bad = 1;
		}
		/* 4. control messages: one of round 6 arrives before round 7's; round 7's receive gets its own */
		{
			void *m = NULL;
			size_t mlen = 0;
			int from = -1;

			rc = mx_comm_recv(&c, -1, 6, 7, &m, &mlen, &from, rp_now() + 10);
			if (rc != 0 || mlen != 4 || from != 1 || strcmp(m, "new") != 0 || mx_comm_dropped(&c) != 4) {
				fprintf(stderr, "rank 0: control receive of round 7 gave %d (%zu bytes: %s), %lu dropped\n", rc,
					mlen, rc == 0 ? (char *)m : "", mx_comm_dropped(&c));
				bad = 1;
			}
			free(m);
		}
		/* 5. MPI fails in the middle of a receive (the message was matched and taken): the error
		 * comes back and the receive buffer is freed; then a failing send frees its copy */
		{
			void *m = NULL;
			size_t mlen = 0;
			long before = __atomic_load_n(&live_allocs, __ATOMIC_RELAXED);

			fail_mrecv = 1;
			rc = mx_comm_recv(&c, 1, 8, 0, &m, &mlen, NULL, rp_now() + 10);
			fail_mrecv = 0;
			if (rc != -EIO || m != NULL || __atomic_load_n(&live_allocs, __ATOMIC_RELAXED) != before) {
				fprintf(stderr, "rank 0: a failing MPI_Mrecv gave %d and left %ld allocations\n", rc,
					__atomic_load_n(&live_allocs, __ATOMIC_RELAXED) - before);
				bad = 1;
			}
			fail_isend = 1;
			rc = mx_comm_send(&c, 1, 8, 0, "lost", 5, rp_now() + 5);
			fail_isend = 0;
			if (rc != -EIO || __atomic_load_n(&live_allocs, __ATOMIC_RELAXED) != before) {
				fprintf(stderr, "rank 0: a failing MPI_Isend gave %d and left %ld allocations\n", rc,
					__atomic_load_n(&live_allocs, __ATOMIC_RELAXED) - before);
				bad = 1;
			}
			/* 5b. 5,000 bytes where at most 100 may come: consumed and said, nothing kept */
			{
				int who = -1;

				m = NULL;
				mlen = 0;
				before = __atomic_load_n(&live_allocs, __ATOMIC_RELAXED);
				rc = mx_comm_recv_max(&c, -1, 9, 0, 100, &m, &mlen, &who, rp_now() + 10);
				if (rc != -EMSGSIZE || m != NULL || mlen != 5000 || who != 1 ||
				    __atomic_load_n(&live_allocs, __ATOMIC_RELAXED) != before) {
					fprintf(stderr, "rank 0: an oversized message gave %d (%zu bytes from %d), %ld allocations\n",
						rc, mlen, who, __atomic_load_n(&live_allocs, __ATOMIC_RELAXED) - before);
					bad = 1;
				}
			}
		}
	} else {
		void *go = NULL;
		size_t len = 0;
		int src = -1;
		struct mx_comm other = c;

		rc = mx_comm_recv(&c, 0, 5, 0, &go, &len, &src, rp_now() + 20);
		if (rc != 0 || len != 3 || src != 0 || strcmp(go, "go") != 0) {
			fprintf(stderr, "rank 1: control message gave %d (%zu bytes from %d)\n", rc, len, src);
			bad = 1;
		}
		free(go);
		/* on the same tag: a late message of round 2, one of another pair, one of another run */
		mx_comm_oob_open(&c, &stale, 0, 77, &(struct mx_addr){ .round = 2, .pair = 9 });
		mx_comm_oob_open(&c, &other_pair, 0, 77, &(struct mx_addr){ .round = 3, .pair = 8 });
		rp_oob_send(&stale, "stale-stale-stal", 16, rp_now() + 5);
		rp_oob_send(&other_pair, "other-pair-other", 16, rp_now() + 5);
		rp_oob_close(&stale);
		mx_comm_set_run(&other, 0x9999);
		mx_comm_oob_open(&other, &stale, 0, 77, &here);
		rp_oob_send(&stale, "foreign-run-fore", 16, rp_now() + 5);
		rp_oob_close(&stale);
		rp_oob_close(&other_pair);
		rp_oob_send(&oob, "0123456789abcdef", 16, rp_now() + 5);
		rp_oob_send(&oob, "short", 5, rp_now() + 5);
		mx_comm_send(&c, 0, 6, 6, "old", 4, rp_now() + 5);
		mx_comm_send(&c, 0, 6, 7, "new", 4, rp_now() + 5);
		mx_comm_send(&c, 0, 8, 0, "taken", 6, rp_now() + 5);   /* the one whose receive fails */
		{
			char *big = calloc(1, 5000);

			mx_comm_send(&c, 0, 9, 0, big, 5000, rp_now() + 10);   /* over rank 0's bound */
			free(big);
		}
	}
	/* 6. the start-up exchange: every rank's bytes, in rank order */
	snprintf(buf, sizeof(buf), "rank-%d%s", c.rank, c.rank ? "-longer" : "");
	rc = mx_comm_allgather(&c, buf, strlen(buf) + 1, rp_now() + 20, &all, &lens, &offs);
	if (rc != 0 || strcmp(all + offs[0], "rank-0") != 0 || strcmp(all + offs[1], "rank-1-longer") != 0 || lens[1] != 14) {
		fprintf(stderr, "rank %d: allgather gave %d\n", c.rank, rc);
		bad = 1;
	}
	free(all);
	free(lens);
	free(offs);
	/* 7. the start-up exchange over point-to-point messages */
	mx_comm_set_run(&c, 0);
	rc = mx_startup_exchange(&c, buf, strlen(buf) + 1, &(struct mx_startup_cfg){ .window_s = 20, .max_len = 64 }, &all,
				 &lens, &offs);
	if (rc != 0 || strcmp(all + offs[0], "rank-0") != 0 || strcmp(all + offs[1], "rank-1-longer") != 0 || lens[1] != 14) {
		fprintf(stderr, "rank %d: the start-up exchange gave %d\n", c.rank, rc);
		bad = 1;
	}
	free(all);
	free(lens);
	free(offs);
	rp_oob_close(&oob);
	rp_mpi_finalize();
	return bad;
}

static void test_two_ranks(void **state)
{
	char self[4096], cmd[8192];
	ssize_t n;
	int rc;

	(void)state;
	if (!rp_mpi_compiled()) {
		fprintf(stderr, "SKIP: built without MPI\n");
		skip();
	}
	if (system("command -v mpirun >/dev/null 2>&1") != 0) {
		fprintf(stderr, "SKIP: mpirun is not installed (openmpi-bin)\n");
		skip();
	}
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	assert_true(n > 0);
	self[n] = '\0';
	/* ASan's leak check would blame the MPI library's own allocations at exit */
	snprintf(cmd, sizeof(cmd), "ASAN_OPTIONS=detect_leaks=0 timeout 120 mpirun --allow-run-as-root --oversubscribe "
		 "-x ASAN_OPTIONS -np 2 '%s' --ranks", self);
	rc = system(cmd);
	assert_true(WIFEXITED(rc));
	assert_int_equal(WEXITSTATUS(rc), 0);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_two_ranks),
	};

	if (argc > 1 && strcmp(argv[1], "--ranks") == 0)
		return ranks_main(argc, argv);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
