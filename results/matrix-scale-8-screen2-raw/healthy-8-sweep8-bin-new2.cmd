mpirun -np 8 rank.sh -s 64K -n 200 --sweep 8 --json healthy-8-sweep8-bin-new2.json  # rdmaprobe 0.1.0 (e13cb17) features: verbs rdmacm cuda mpi
