/* sysfs.h: reading /sys (or a fixture tree standing in for it) and one parser per file format
 * (doc/devices.md, "sysfs formats").
 *
 * Two layers:
 * - Parsers (rp_sysfs_parse_*) are pure functions over a NUL-terminated string, the text of one
 *   file with its trailing newline already stripped. They never log, never read past the string,
 *   and return 0 or -EINVAL (malformed or empty input) / -ERANGE (a number out of range); on error
 *   the output is left untouched. Tests and the fuzzer call them directly.
 * - Readers (rp_sysfs_read*) join a root ("/sys" or a fixture) with a path relative to it, read the
 *   file (non-blocking, at most the buffer), strip the trailing whitespace, and return 0 or a
 *   negative errno (-ENOENT missing, -EINVAL as the kernel answers for an empty GID's attributes,
 *   -EISDIR/-EACCES unreadable, -ENAMETOOLONG a path too long, -EOVERFLOW a file larger than the
 *   buffer). They do not log either: a missing file is often expected, and the caller knows what the
 *   value was for.
 *
 * Memory: everything writes into caller buffers; nothing is allocated except by rp_sysfs_list_dir(),
 * whose result the caller frees with rp_sysfs_free_names().
 */
#ifndef RP_SYSFS_H
#define RP_SYSFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "discover/node.h"

/* ---- parsers ---- */

/* ports/N/state "4: ACTIVE" (0 NOP .. 5 ACTIVE_DEFER). A known number must carry its own name. */
int rp_sysfs_parse_state(const char *s, int *state_p);
/* ports/N/phys_state "5: LinkUp" (0 <unknown>, 1 Sleep .. 7 Phy Test). */
int rp_sysfs_parse_phys_state(const char *s, int *phys_p);
/* ports/N/rate "100 Gb/sec (4X EDR)", "2.5 Gb/sec (1X SDR)", old kernels "10 Gb/sec (4X)".
 * *gbps_p gets the number, text (size text_size) the width/speed inside the parentheses
 * ("4X EDR", "4X"), "" when there are none. */
int rp_sysfs_parse_rate(const char *s, double *gbps_p, char *text, size_t text_size);
/* ports/N/link_layer "InfiniBand" | "Ethernet" | "Unknown". */
int rp_sysfs_parse_link_layer(const char *s, enum rp_link_layer *ll_p);
/* ports/N/lid, sm_lid: "0x1a" (hex, as the kernel writes it) or plain decimal (some drivers). */
int rp_sysfs_parse_lid(const char *s, uint32_t *lid_p);
/* ports/N/gids/I: 8 groups of 1..4 hex digits (the kernel writes 4), or any IPv6 text. raw is 16 bytes. */
int rp_sysfs_parse_gid(const char *s, uint8_t raw[16]);
/* 16 bytes -> "xxxx:xxxx:xxxx:xxxx:xxxx:xxxx:xxxx:xxxx" lowercase; text needs RP_GID_TEXT bytes. */
void rp_sysfs_gid_to_text(const uint8_t raw[16], char text[RP_GID_TEXT]);
/* True for an all-zero GID (an empty table entry). */
bool rp_sysfs_gid_is_zero(const uint8_t raw[16]);
/* ports/N/gid_attrs/types/I "IB/RoCE v1" | "RoCE v2". (The kernel fails the read of an empty
 * entry with EINVAL; the reader reports that, this parser rejects "".) */
int rp_sysfs_parse_gid_type(const char *s, enum rp_gid_type *type_p);
/* ports/N/gid_attrs/ndevs/I: a netdev name (1..15 chars, no '/', no whitespace); copied to out. */
int rp_sysfs_parse_ndev(const char *s, char *out, size_t out_size);
/* fw_ver: printable text without control characters, fitting out. */
int rp_sysfs_parse_fw_ver(const char *s, char *out, size_t out_size);
/* node_guid "xxxx:xxxx:xxxx:xxxx": the 64-bit value and the normalized lowercase text (20 bytes). */
int rp_sysfs_parse_node_guid(const char *s, uint64_t *guid_p, char text[20]);
/* node_type "1: CA" (2 switch, 3 router, 4 RNIC, 5 usNIC, 6 usNIC UDP). */
int rp_sysfs_parse_node_type(const char *s, int *type_p);
/* numa_node: -1 (unknown) or 0..65535. */
int rp_sysfs_parse_numa(const char *s, int *numa_p);
/* A PCI address "dddd:bb:dd.f" (domain 1..8 hex digits, as Linux, CUDA and nvidia-smi write it;
 * "bb:dd.f" means domain 0). Normalized lowercase "%04x:%02x:%02x.%x" into out (RP_PCI_MAX). */
int rp_sysfs_parse_pci(const char *s, char out[RP_PCI_MAX]);
/* True when s is exactly NCCL's BDF shape: 12 chars "hhhh:hh:hh.h" (a path component test). */
bool rp_sysfs_is_bdf(const char *s);
/* vendor "0x10de", class "0x030200": hex with 0x, at most max. */
int rp_sysfs_parse_hex(const char *s, uint32_t max, uint32_t *out_p);

/* ---- readers ---- */

/* root + "/" + rel into out; -ENAMETOOLONG when it does not fit. rel may be "". */
int rp_sysfs_join(const char *root, const char *rel, char *out, size_t out_size);
/* Read root/rel into buf (trailing whitespace stripped). */
int rp_sysfs_read(const char *root, const char *rel, char *buf, size_t size);
/* Read with a printf-style relative path. */
int rp_sysfs_readf(const char *root, char *buf, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* realpath of root/rel, returned RELATIVE to realpath(root) ("devices/pci0000:00/..."); -ENOENT
 * when it does not resolve, -EXDEV when it resolves outside the root. */
int rp_sysfs_realpath_rel(const char *root, const char *rel, char *out, size_t out_size);
/* The entries of root/rel, sorted (numerically when all are numbers), without "." and "..".
 * *names_p is a NULL-terminated array the caller frees with rp_sysfs_free_names(). */
int rp_sysfs_list_dir(const char *root, const char *rel, char ***names_p, size_t *n_p);
void rp_sysfs_free_names(char **names);

#endif
