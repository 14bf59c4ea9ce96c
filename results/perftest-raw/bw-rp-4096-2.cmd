rdmaprobe pair 127.0.0.1:19003 -d rxe0 -s 4096 -n 1000 -t 128 --cq-mod 100 (listener: rdmaprobe pair --listen -d rxe1 -p 19003)
