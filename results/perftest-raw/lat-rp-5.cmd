rdmaprobe pair 127.0.0.1:19040 -d rxe0 --latency -s 64 -n 1000 (listener: rdmaprobe pair --listen -d rxe1 -p 19040)
