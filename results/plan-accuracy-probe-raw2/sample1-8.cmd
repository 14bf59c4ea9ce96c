mpirun -np 8 rank.sh -s 64K -n 200 --pattern sample:1 --json sample1-8.json
