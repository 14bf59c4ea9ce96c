/* sim_topology.c: the native topology file (lib/discover/fabtopo.h) of a simulated fabric model's switches
 * (lib/sim/sim_fabric.h), for scripts/bench-localize.sh: build/sim-topology MODEL > TOPOLOGY. */
#include <stdio.h>

#include "sim/sim_fabric.h"
#include "sim/sim_model.h"

int main(int argc, char **argv)
{
	struct rp_sim_model m;
	struct rp_sim_error err;
	int rc;

	if (argc != 2) {
		fprintf(stderr, "usage: sim-topology MODEL\n");
		return 2;
	}
	rc = rp_sim_model_load(argv[1], &m, &err);
	if (rc) {
		fprintf(stderr, "sim-topology: %s line %u: %s\n", argv[1], err.line, err.msg);
		return 2;
	}
	if (!m.fabric) {
		fprintf(stderr, "sim-topology: %s has no 'fabric' line\n", argv[1]);
		rp_sim_model_fini(&m);
		return 2;
	}
	rc = rp_sim_fabric_write_topology(&m, stdout);
	rp_sim_model_fini(&m);
	return rc || fflush(stdout) ? 1 : 0;
}
