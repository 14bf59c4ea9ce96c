#!/bin/sh
r=$OMPI_COMM_WORLD_RANK
exec "/work/main/build/rdmaprobe" matrix --node node$r -d =rxe$r "$@"
