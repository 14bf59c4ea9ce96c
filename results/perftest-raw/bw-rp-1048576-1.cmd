rdmaprobe pair 127.0.0.1:19022 -d rxe0 -s 1048576 -n 200 -t 128 --cq-mod 100 (listener: rdmaprobe pair --listen -d rxe1 -p 19022)
