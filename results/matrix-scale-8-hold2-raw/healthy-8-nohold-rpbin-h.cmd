mpirun -np 8 rank.sh -s 64K -n 200 --hold off --json healthy-8-nohold-rpbin-h.json  # rdmaprobe 0.1.0 (0eb197d) features: verbs rdmacm cuda mpi
