mpirun -np 8 rank.sh -s 64K -n 200  --json loss-8-default.json  # rdmaprobe 0.1.0 (90cf7c4) features: verbs rdmacm cuda mpi
