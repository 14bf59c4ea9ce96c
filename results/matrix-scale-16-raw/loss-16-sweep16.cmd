mpirun -np 16 rank.sh -s 64K -n 200 --sweep 16 --json loss-16-sweep16.json
