/work/main/build/rdmaprobe matrix --transport sim --fabric-model /work/main/results/sim-mpi-raw/r128.model --pattern rail --nccl-version 2.28.9 --summary --json /tmp/rp-sim-mpi.YIjfyR/r128-one.json
