mpirun -np 4 rank.sh -s 64K -n 200 --sweep 8 --json bridge-4-sweep8.json
