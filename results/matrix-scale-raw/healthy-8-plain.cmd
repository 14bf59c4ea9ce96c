mpirun -np 8 rank.sh -s 64K -n 200  --json healthy-8-plain.json
