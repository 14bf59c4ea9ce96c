mpirun -np 4 rank.sh -s 64K -n 200 --pattern full --json full-4.json
