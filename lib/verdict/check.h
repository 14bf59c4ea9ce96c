/* check.h: the node health check (rdmaprobe check): what discovery, the static health checks, NCCL's
 * view and a short loopback of every selected port found, as one list of problems, one verdict and a
 * drain reason for Slurm.
 *
 * Each problem has a severity: FAIL makes the node unhealthy (an operator drains it), WARN is
 * reported and leaves it healthy. What fails:
 *   discovery  no_device (no RDMA adapter), adapter_unusable (listed in sysfs, unusable to verbs)
 *   health     port_down, port_no_sm, link_degraded, pcie_degraded (lib/health/health.h); the configuration
 *              findings pcie_bottleneck, acs_redirect, iommu_translated, gpudirect_unavailable warn
 *              (they are the same on every node of a model: draining one would not fix them); notes
 *              are left out
 *   nccl       every fatal warning of lib/nccl/nccl.h (NCCL would misbehave under the node's NCCL_IB_HCA),
 *              nccl_env (the variables cannot be read as NCCL reads them); the others warn
 *   loopback   a self pair that did not pass, with its status code (retry_exceeded, link_errors...),
 *              unless it is unconfirmed (failed once and never measured again: not a finding);
 *              its pair warnings (lossy, ...) warn. Bandwidth is reported, not judged: the loopback is
 *              short and loads every adapter at once
 * rp_check_status(): UNHEALTHY with any FAIL; else UNKNOWN when the check could not be completed
 * (rp_check_incomplete(): the budget ran out, a measurement could not be set up); else HEALTHY.
 *
 * The drain reason is "rdmaprobe: " and the first FAIL problem's summary ("rdmaprobe: mlx5_3:1 DOWN
 * (phys Disabled)"), with " (+N more)" when there are others, in printable ASCII without quotes or
 * backslashes, at most RP_CHECK_REASON_MAX bytes: it fits Slurm's reason field as one argument.
 * Problems are ordered: FAIL before WARN; within a severity discovery, health, loopback, nccl, check.
 *
 * Memory: struct rp_check is caller storage (zero it); the item list is allocated; rp_check_fini()
 * frees it (safe twice).
 */
#ifndef RP_CHECK_H
#define RP_CHECK_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "health/health.h"
#include "nccl/nccl.h"
#include "discover/node.h"
#include "base/result.h"

#define RP_CHECK_REASON_MAX 160

enum rp_check_sev { RP_CHECK_FAIL = 0, RP_CHECK_WARN };
enum rp_check_src { RP_CHECK_SRC_DISCOVERY = 0, RP_CHECK_SRC_HEALTH, RP_CHECK_SRC_LOOPBACK, RP_CHECK_SRC_NCCL,
		    RP_CHECK_SRC_CHECK, RP_CHECK_SRC_COUNT_ };
enum rp_check_status { RP_CHECK_HEALTHY = 0, RP_CHECK_UNHEALTHY = 1, RP_CHECK_UNKNOWN = 3 };

struct rp_check_problem {
	enum rp_check_sev sev;
	enum rp_check_src src;
	char code[40];                /* "port_down", "retry_exceeded", "prefix_overmatch" */
	char device[RP_NAME_MAX + 8]; /* "mlx5_3:1", "" for the node as a whole */
	char summary[112];            /* short, for the drain reason: "mlx5_3:1 DOWN (phys Disabled)" */
	char message[400];            /* for a person */
};

struct rp_check {
	struct rp_check_problem *items;
	size_t n, cap;
	bool incomplete;
	char incomplete_why[200];
};

/* "discovery", "health", "loopback", "nccl", "check". */
const char *rp_check_src_str(enum rp_check_src s);
/* "healthy", "unhealthy", "unknown". */
const char *rp_check_status_str(enum rp_check_status s);

/* Append one problem; summary NULL: "<device> <code>" (or the code alone). 0 or -ENOMEM (logged). */
int rp_check_add(struct rp_check *c, enum rp_check_sev sev, enum rp_check_src src, const char *code,
		 const char *device, const char *summary, const char *fmt, ...) __attribute__((format(printf, 7, 8)));
/* The check could not be completed: why (the first reason is kept). */
void rp_check_set_incomplete(struct rp_check *c, const char *why);

/* The problems of each source, as the table above says. 0 or -ENOMEM. */
int rp_check_from_node(struct rp_check *c, const struct rp_node *node);
int rp_check_from_health(struct rp_check *c, const struct rp_node *node, const struct rp_health *h);
int rp_check_from_nccl(struct rp_check *c, const struct rp_nccl_result *res);
int rp_check_from_pairs(struct rp_check *c, const struct rp_pair_result *res, size_t n);

/* Order the problems (stable): severity, then source. */
void rp_check_sort(struct rp_check *c);
enum rp_check_status rp_check_status(const struct rp_check *c);
size_t rp_check_count(const struct rp_check *c, enum rp_check_sev sev);
/* The drain reason into buf (room for RP_CHECK_REASON_MAX + 1); "" when nothing fails. Returns buf.
 * Call after rp_check_sort(). */
const char *rp_check_drain_reason(const struct rp_check *c, char *buf, size_t len);

/* {"status", "problems": [{"severity", "source", "code", "device", "summary", "message"}],
 * "incomplete": why or null, "drain_reason": text or null}. NULL when out of memory. */
json_t *rp_check_json(const struct rp_check *c);

void rp_check_fini(struct rp_check *c);

#endif
