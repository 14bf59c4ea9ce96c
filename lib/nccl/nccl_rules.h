/* nccl_rules.h: NCCL releases and the rules that changed between them.
 *
 * One table (nccl_rules.c) lists every rule of NCCL's IB device selection, GID choice and topology
 * that differs between the modelled releases (2.18.1 to 2.30.7), each with the first release that
 * has it, the first that no longer has it, and the NCCL source file it was read from at those tags.
 * The rest of lib/nccl*.c asks rp_nccl_rule_on() instead of comparing versions itself.
 *
 * A version is NCCL's own code: major * 10000 + minor * 100 + patch (what ncclGetVersion() returns
 * since 2.9: 2.30.7 is 23007).
 */
#ifndef RP_NCCL_RULES_H
#define RP_NCCL_RULES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RP_NCCL_V(maj, min, pat) ((maj) * 10000 + (min) * 100 + (pat))
#define RP_NCCL_VERSION_OLDEST RP_NCCL_V(2, 18, 1)
#define RP_NCCL_VERSION_NEWEST RP_NCCL_V(2, 30, 7)

enum rp_nccl_rule {
	RP_NCCL_R_MAX_DEVS_32,        /* MAX_IB_DEVS is 32 (16 before): NCCL_IB_HCA entries and ports */
	RP_NCCL_R_MERGE_ONE_DIGIT,    /* the VF merge zeroes only the last device digit of the bus id */
	RP_NCCL_R_NO_PATH_MERGE,      /* the PCI path handed to the topology is not merged at all */
	RP_NCCL_R_GID_AUTO,           /* RoCE GID walk; NCCL_IB_GID_INDEX defaults to -1 (0 before) */
	RP_NCCL_R_RANGE_SLASH_CRASH,  /* NCCL_IB_ADDR_RANGE without '/' dereferences NULL + 1 */
	RP_NCCL_R_FLID_GID,           /* IB ports use NCCL_IB_ROUTABLE_FLID_GID_INDEX when it has a FLID */
	RP_NCCL_R_TYPES_EINVAL_OK,    /* a gid_attrs/types read failing with EINVAL is not an error */
	RP_NCCL_R_PCI_ORDER,          /* ports sorted by PCI address (NCCL_IB_DEVICE_PCI_ORDER, default 1) */
	RP_NCCL_R_HCA_FIELDS,         /* strtok/strsep parser: "dev:" every port, :rail:plane, 63-char names */
	RP_NCCL_R_MERGE_NICS_STRCMP,  /* NCCL_IB_MERGE_NICS strcmp()s PCI paths of ports: a NULL one crashes */
	RP_NCCL_R_GPU_LINK_NVML,      /* a GPU's own PCI link from NVML's current generation and width */
	RP_NCCL_R_AMD_SYS_BW,         /* AMD CPUs link at 16 GB/s (before: as local, 5000) */
	RP_NCCL_R_INTEL_SRP_ERP,      /* Intel Sapphire/Emerald Rapids classes (22, 40 GB/s between CPUs) */
	RP_NCCL_R_COUNT_
};

struct rp_nccl_rule_info {
	const char *name;             /* stable: "pci_order" */
	uint32_t since;               /* first release with the rule; 0: older than every modelled one */
	uint32_t until;               /* first release without it; 0: still in the newest */
	const char *source;           /* NCCL file it was read from */
	const char *what;             /* for a person */
};

/* The table entry (never NULL for a valid rule). */
const struct rp_nccl_rule_info *rp_nccl_rule_info(enum rp_nccl_rule r);
/* Does release v apply rule r? */
bool rp_nccl_rule_on(uint32_t v, enum rp_nccl_rule r);
/* MAX_IB_DEVS of release v: the most NCCL_IB_HCA entries parsed and the port table's size. */
int rp_nccl_max_devs(uint32_t v);

/* "2.30.7" (also "2.30.7-1", NCCL's tag form) -> 23007. -EINVAL when malformed; does not log. */
int rp_nccl_version_parse(const char *s, uint32_t *v_p);
/* "2.30.7" into buf. */
void rp_nccl_version_format(uint32_t v, char *buf, size_t len);
/* Is v one of the releases read (a tag of NCCL's repository from 2.18.1 on)? */
bool rp_nccl_version_is_release(uint32_t v);
/* The release whose rules apply to v: v itself when modelled, the newest for a newer one, 0 when
 * older than RP_NCCL_VERSION_OLDEST. Versions between releases get the rules of the release before. */
uint32_t rp_nccl_version_modelled(uint32_t v);
/* Is v newer than the newest modelled release? Then msg (when len) says so for a person, naming
 * both versions: the answer follows the newest release's rules and is not exact for v. */
bool rp_nccl_newer_than_model(uint32_t v, char *msg, size_t len);

#endif
