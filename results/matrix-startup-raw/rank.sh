#!/bin/sh
r=$OMPI_COMM_WORLD_RANK
exec "$RP_BENCH_BIN" matrix --node node$r -d =rxe$r "$@"
