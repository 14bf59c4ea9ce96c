mpirun -np 8 rank.sh -s 64K -n 200 --json full-8.json
