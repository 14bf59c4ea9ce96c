mpirun -np 8 rank.sh -s 64K -n 200 --pattern full --json full-8.json
