/* mx_tree.c: the binomial tree over positions and its view over live ranks; see mx_tree.h. */
#include "job/mx_tree.h"

#include <errno.h>
#include <stdlib.h>

int mx_tree_parent(int i)
{
	return i > 0 ? i & (i - 1) : -1;
}

size_t mx_tree_children(int i, int size, int *kids, size_t max)
{
	size_t n = 0;
	int top = 1;

	while (top < size && top <= (1 << 29))
		top <<= 1;
	for (int bit = top; bit >= 1 && n < max; bit >>= 1) {
		bool below = i == 0 || bit < (i & -i);

		if (below && (long)i + bit < size)
			kids[n++] = i + bit;
	}
	return n;
}

int mx_tree_span(int i, int size)
{
	long end;

	if (i < 0 || i >= size)
		return 0;
	end = i == 0 ? size : (long)i + (i & -i);
	return (int)((end < size ? end : size) - i);
}

int mx_tree_depth(int i)
{
	return i > 0 ? __builtin_popcount((unsigned)i) : 0;
}

int mx_tree_view_build(struct mx_tree_view *v, const bool *dead, int n_ranks)
{
	if (!v->rank) {
		v->rank = calloc(n_ranks > 0 ? (size_t)n_ranks : 1, sizeof(*v->rank));
		v->pos = calloc(n_ranks > 0 ? (size_t)n_ranks : 1, sizeof(*v->pos));
		if (!v->rank || !v->pos) {
			mx_tree_view_fini(v);
			return -ENOMEM;
		}
	}
	v->n = 0;
	for (int r = 0; r < n_ranks; r++) {
		v->pos[r] = r == 0 || !dead[r] ? v->n : -1;
		if (v->pos[r] >= 0)
			v->rank[v->n++] = r;
	}
	return 0;
}

void mx_tree_view_fini(struct mx_tree_view *v)
{
	free(v->rank);
	free(v->pos);
	v->rank = v->pos = NULL;
	v->n = 0;
}

int mx_tree_view_parent(const struct mx_tree_view *v, int r)
{
	int p = v->pos[r];

	return p > 0 ? v->rank[mx_tree_parent(p)] : -1;
}

size_t mx_tree_view_children(const struct mx_tree_view *v, int r, int *kids, size_t max)
{
	size_t n = v->pos[r] >= 0 ? mx_tree_children(v->pos[r], v->n, kids, max) : 0;

	for (size_t i = 0; i < n; i++)
		kids[i] = v->rank[kids[i]];
	return n;
}
