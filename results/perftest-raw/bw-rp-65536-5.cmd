rdmaprobe pair 127.0.0.1:19020 -d rxe0 -s 65536 -n 1000 -t 128 --cq-mod 100 (listener: rdmaprobe pair --listen -d rxe1 -p 19020)
