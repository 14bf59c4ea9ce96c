mpirun -np 4 rank.sh -s 64K -n 200  --json loss-4-default.json  # rdmaprobe 0.1.0 (48926c9) features: verbs rdmacm cuda mpi
