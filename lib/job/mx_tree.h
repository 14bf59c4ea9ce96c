/* mx_tree.h: the binomial tree the matrix's ranks talk along (the start-up's table down it, every
 * round's go down it and reports up it), and its view over the ranks still alive.
 *
 * Over positions 0..size-1: position i's parent is i with its lowest set bit cleared (-1 for 0), its
 * children i + 2^k for every 2^k below that bit (all powers of two for 0), its subtree the aligned
 * block [i, i + span) and its depth (hops to 0) the number of its set bits. Position 0 has
 * ceil(log2(size)) children and the tree is that deep: a message down it takes log2(size) hops, and
 * no position sends or receives more than log2(size) messages.
 *
 * A view (mx_tree_view) places the live ranks at positions in rank order (rank 0 at position 0, the
 * dead left out), so that every rank that agrees on who is dead agrees on the tree. With mpirun's
 * usual placement (a node's ranks numbered together) the small aligned blocks at the bottom of the
 * tree are a node's own ranks: most messages stay within a node.
 */
#ifndef RP_MX_TREE_H
#define RP_MX_TREE_H

#include <stdbool.h>
#include <stddef.h>

/* The largest number of children a position has (sizes up to 2^31). */
#define MX_TREE_MAX_KIDS 32

int mx_tree_parent(int i);
/* Position i's children into kids[0..max) (largest subtree first). Returns how many. */
size_t mx_tree_children(int i, int size, int *kids, size_t max);
/* Positions in i's subtree (i itself included): [i, i + span). */
int mx_tree_span(int i, int size);
/* Hops from i to position 0. */
int mx_tree_depth(int i);

/* The tree over the live ranks of a run of n ranks. */
struct mx_tree_view {
	int n;                        /* live ranks (positions) */
	int *rank;                    /* position -> rank (n) */
	int *pos;                     /* rank -> position, -1 when dead (n_ranks) */
};

/* Build (or rebuild: the arrays are reused) the view from dead[0..n_ranks); rank 0 is always in it.
 * 0 or -ENOMEM. */
int mx_tree_view_build(struct mx_tree_view *v, const bool *dead, int n_ranks);
void mx_tree_view_fini(struct mx_tree_view *v);
/* Rank r's parent rank in the view (-1 for rank 0 or a rank not in it). */
int mx_tree_view_parent(const struct mx_tree_view *v, int r);
/* Rank r's children ranks into kids[0..max). */
size_t mx_tree_view_children(const struct mx_tree_view *v, int r, int *kids, size_t max);

#endif
