/* netacl.h: which peer addresses may talk to a listener (pair --allow CIDR[,CIDR...]).
 *
 * An entry is an IPv4 or IPv6 prefix ("10.0.0.0/8", "fd00::/8") or one address ("192.0.2.7",
 * "::1", meaning /32 or /128). Host bits below the prefix must be zero ("10.1.2.3/8" is refused: it
 * is a mistyped address or a mistyped prefix, and guessing which would widen or narrow the list
 * silently). An IPv4 client of a dual-stack socket arrives as ::ffff:a.b.c.d and is matched against
 * the IPv4 entries. An empty list allows every address.
 */
#ifndef RP_NETACL_H
#define RP_NETACL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#define RP_ACL_MAX 32

struct rp_cidr {
	int family;                   /* AF_INET or AF_INET6 */
	uint8_t addr[16];             /* network order; 4 bytes used for AF_INET */
	unsigned prefix;              /* 0..32 or 0..128 */
};

struct rp_acl {
	size_t n;                     /* 0: everyone is allowed */
	struct rp_cidr entry[RP_ACL_MAX];
};

/* Parse one entry. 0, or -EINVAL with the reason in why (may be NULL). Does not log. */
int rp_cidr_parse(const char *s, struct rp_cidr *c, char *why, size_t why_len);
/* Parse a comma-separated list into *acl (replacing it). 0, or -EINVAL / -E2BIG (more than
 * RP_ACL_MAX entries) with the reason, naming the entry, in why. Does not log. */
int rp_acl_parse(const char *list, struct rp_acl *acl, char *why, size_t why_len);
/* True when c contains the address (family AF_INET: 4 bytes, AF_INET6: 16 bytes). */
bool rp_cidr_contains(const struct rp_cidr *c, int family, const uint8_t *addr);
/* True when acl is empty or an entry contains the socket address sa (AF_INET, AF_INET6). */
bool rp_acl_allows(const struct rp_acl *acl, const struct sockaddr *sa, socklen_t len);

#endif
