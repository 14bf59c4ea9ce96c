mpirun -np 8 rank.sh -s 64K -n 200 --sweep 8 --json healthy-8-sweep8-bin-main.json  # rdmaprobe 0.1.0 (f30fa4b) features: verbs rdmacm cuda mpi
