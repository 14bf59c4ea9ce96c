/* test_mx_tree.c: the binomial tree (lib/mx_tree): every position of every size up to 70 is reached
 * once, position 0 has log2(size) children, spans and depths agree with the parent links; a view
 * over live ranks leaves the dead out and keeps the rest in one tree. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "job/mx_tree.h"

static void test_tree_reaches_every_position(void **state)
{
	(void)state;
	for (int size = 1; size <= 70; size++) {
		int seen[70] = { 0 }, kids[MX_TREE_MAX_KIDS];
		size_t n0 = mx_tree_children(0, size, kids, MX_TREE_MAX_KIDS), want0 = 0;

		while ((1 << want0) < size)
			want0++;
		assert_int_equal(n0, want0);
		assert_int_equal(mx_tree_parent(0), -1);
		assert_int_equal(mx_tree_span(0, size), size);
		for (int i = 0; i < size; i++) {
			size_t n = mx_tree_children(i, size, kids, MX_TREE_MAX_KIDS);
			int span = 1, depth = 0;

			for (size_t k = 0; k < n; k++) {
				assert_true(kids[k] > i && kids[k] < size);
				assert_int_equal(mx_tree_parent(kids[k]), i);
				seen[kids[k]]++;
				span += mx_tree_span(kids[k], size);
			}
			assert_int_equal(mx_tree_span(i, size), span);
			for (int p = i; p > 0; p = mx_tree_parent(p))
				depth++;
			assert_int_equal(mx_tree_depth(i), depth);
		}
		for (int i = 1; i < size; i++)
			assert_int_equal(seen[i], 1);
	}
}

static void test_view_leaves_the_dead_out(void **state)
{
	bool dead[10] = { [3] = true, [4] = true, [9] = true };
	struct mx_tree_view v = { 0 };
	int kids[MX_TREE_MAX_KIDS], seen[10] = { 0 };

	(void)state;
	assert_int_equal(mx_tree_view_build(&v, dead, 10), 0);
	assert_int_equal(v.n, 7);
	assert_int_equal(v.pos[3], -1);
	assert_int_equal(v.pos[5], 3);
	assert_int_equal(mx_tree_view_parent(&v, 0), -1);
	assert_int_equal(mx_tree_view_parent(&v, 3), -1);
	assert_int_equal(mx_tree_view_children(&v, 4, kids, MX_TREE_MAX_KIDS), 0);
	for (int r = 0; r < 10; r++) {
		size_t n = mx_tree_view_children(&v, r, kids, MX_TREE_MAX_KIDS);

		for (size_t k = 0; k < n; k++) {
			assert_false(dead[kids[k]]);
			assert_int_equal(mx_tree_view_parent(&v, kids[k]), r);
			seen[kids[k]]++;
		}
	}
	for (int r = 1; r < 10; r++)
		assert_int_equal(seen[r], dead[r] ? 0 : 1);
	/* rebuilt after another death: the arrays are reused */
	dead[1] = true;
	assert_int_equal(mx_tree_view_build(&v, dead, 10), 0);
	assert_int_equal(v.n, 6);
	assert_int_equal(v.rank[1], 2);
	mx_tree_view_fini(&v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tree_reaches_every_position),
		cmocka_unit_test(test_view_leaves_the_dead_out),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
