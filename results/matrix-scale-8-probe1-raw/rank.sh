#!/bin/sh
r=$OMPI_COMM_WORLD_RANK
if [ "$r" = 0 ]; then
	exec /usr/bin/time -f %M -o "$RP_BENCH_RSS" "$RP_BENCH_BIN" matrix --node node$r -d =rxe$r "$@"
fi
exec "$RP_BENCH_BIN" matrix --node node$r -d =rxe$r "$@"
