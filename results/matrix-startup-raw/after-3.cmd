RP_BENCH_BIN=/work/wt/startup/build/rdmaprobe mpirun -np 8 rank.sh -s 4K -n 20 -p sample:1 --timeout 2 --min-bw 0 --outlier 0 --json after-3.json
