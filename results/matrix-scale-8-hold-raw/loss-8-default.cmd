mpirun -np 8 rank.sh -s 64K -n 200  --json loss-8-default.json  # rdmaprobe 0.1.0 (35e3bad+dirty) features: verbs rdmacm cuda mpi
