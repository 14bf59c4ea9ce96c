/work/main/build/rdmaprobe matrix --transport sim --fabric-model /work/main/results/sim-mpi-raw/r32.model --pattern rail --nccl-version 2.28.9 --summary --json /tmp/rp-sim-mpi.YIjfyR/r32-one.json
