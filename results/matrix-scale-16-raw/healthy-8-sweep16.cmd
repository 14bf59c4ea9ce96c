mpirun -np 8 rank.sh -s 64K -n 200 --sweep 16 --json healthy-8-sweep16.json
