/* natcmp.h: natural order of names, the way a person sorts them: runs of digits compare as numbers
 * (node2 before node10, mlx5_2 before mlx5_10), everything else byte by byte. */
#ifndef RP_NATCMP_H
#define RP_NATCMP_H

#include <stddef.h>

/* <0, 0 or >0 as a sorts before, equal to, or after b, reading at most max bytes of each (fixed-size
 * fields that may lack their NUL; SIZE_MAX for C strings). Digit runs compare by value, ignoring
 * leading zeros; equal values with different zero padding ("n01" and "n1") sort shorter first, so
 * only identical names compare equal and the order is total. */
int rp_natcmp_n(const char *a, const char *b, size_t max);
int rp_natcmp(const char *a, const char *b);

#endif
