/* netacl.c: CIDR lists for the listener; see netacl.h. */
#include "base/netacl.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

#include "base/util.h"

/* True when the bits of addr past prefix (of nbytes bytes) are all zero. */
static bool host_bits_zero(const uint8_t *addr, size_t nbytes, unsigned prefix)
{
	for (size_t i = 0; i < nbytes; i++) {
		unsigned first = (unsigned)i * 8;
		uint8_t mask;

		if (first + 8 <= prefix)
			continue;
		mask = first >= prefix ? 0xff : (uint8_t)(0xffu >> (prefix - first));
		if (addr[i] & mask)
			return false;
	}
	return true;
}

int rp_cidr_parse(const char *s, struct rp_cidr *c, char *why, size_t why_len)
{
	char text[INET6_ADDRSTRLEN + 8];
	const char *slash = strchr(s, '/');
	size_t n = slash ? (size_t)(slash - s) : strlen(s);
	unsigned max;
	int prefix;

	if (why && why_len)
		why[0] = '\0';
	memset(c, 0, sizeof(*c));
	if (n == 0 || n >= INET6_ADDRSTRLEN) {
		snprintf(why, why_len, "'%s': not an IPv4 or IPv6 address", s);
		return -EINVAL;
	}
	memcpy(text, s, n);
	text[n] = '\0';
	if (inet_pton(AF_INET, text, c->addr) == 1) {
		c->family = AF_INET;
		max = 32;
	} else if (inet_pton(AF_INET6, text, c->addr) == 1) {
		c->family = AF_INET6;
		max = 128;
	} else {
		snprintf(why, why_len, "'%s': not an IPv4 or IPv6 address", s);
		return -EINVAL;
	}
	prefix = (int)max;
	if (slash && rp_parse_int(slash + 1, 0, (int)max, &prefix) != 0) {
		snprintf(why, why_len, "'%s': the prefix length must be a number 0 to %u", s, max);
		return -EINVAL;
	}
	c->prefix = (unsigned)prefix;
	if (!host_bits_zero(c->addr, max / 8, c->prefix)) {
		snprintf(why, why_len, "'%s': bits set past the /%u prefix (a network address is expected)", s,
			 c->prefix);
		return -EINVAL;
	}
	return 0;
}

int rp_acl_parse(const char *list, struct rp_acl *acl, char *why, size_t why_len)
{
	const char *p = list;

	memset(acl, 0, sizeof(*acl));
	if (why && why_len)
		why[0] = '\0';
	for (;;) {
		const char *comma = strchr(p, ',');
		size_t n = comma ? (size_t)(comma - p) : strlen(p);
		char item[INET6_ADDRSTRLEN + 8];
		int rc;

		if (n == 0 || n >= sizeof(item)) {
			snprintf(why, why_len, "'%.*s': not an IPv4 or IPv6 address%s", (int)(n > 64 ? 64 : n), p,
				 n == 0 ? " (empty entry)" : "");
			return -EINVAL;
		}
		if (acl->n == RP_ACL_MAX) {
			snprintf(why, why_len, "more than %d entries", RP_ACL_MAX);
			return -E2BIG;
		}
		memcpy(item, p, n);
		item[n] = '\0';
		rc = rp_cidr_parse(item, &acl->entry[acl->n], why, why_len);
		if (rc)
			return rc;
		acl->n++;
		if (!comma)
			return 0;
		p = comma + 1;
	}
}

bool rp_cidr_contains(const struct rp_cidr *c, int family, const uint8_t *addr)
{
	unsigned full = c->prefix / 8, rest = c->prefix % 8;

	if (family != c->family)
		return false;
	if (memcmp(c->addr, addr, full) != 0)
		return false;
	if (rest) {
		uint8_t mask = (uint8_t)(0xff00u >> rest);

		if ((c->addr[full] & mask) != (addr[full] & mask))
			return false;
	}
	return true;
}

bool rp_acl_allows(const struct rp_acl *acl, const struct sockaddr *sa, socklen_t len)
{
	static const uint8_t mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	uint8_t addr[16];
	int family;

	if (acl->n == 0)
		return true;
	if (sa->sa_family == AF_INET && len >= (socklen_t)sizeof(struct sockaddr_in)) {
		family = AF_INET;
		memcpy(addr, &((const struct sockaddr_in *)sa)->sin_addr, 4);
	} else if (sa->sa_family == AF_INET6 && len >= (socklen_t)sizeof(struct sockaddr_in6)) {
		const uint8_t *a6 = ((const struct sockaddr_in6 *)sa)->sin6_addr.s6_addr;

		family = AF_INET6;
		memcpy(addr, a6, 16);
		if (memcmp(a6, mapped, sizeof(mapped)) == 0) {
			family = AF_INET;   /* an IPv4 client of a dual-stack socket */
			memcpy(addr, a6 + 12, 4);
		}
	} else {
		return false;
	}
	for (size_t i = 0; i < acl->n; i++)
		if (rp_cidr_contains(&acl->entry[i], family, addr))
			return true;
	return false;
}
