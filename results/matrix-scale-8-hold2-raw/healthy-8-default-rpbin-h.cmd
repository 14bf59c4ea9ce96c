mpirun -np 8 rank.sh -s 64K -n 200  --json healthy-8-default-rpbin-h.json  # rdmaprobe 0.1.0 (0eb197d) features: verbs rdmacm cuda mpi
