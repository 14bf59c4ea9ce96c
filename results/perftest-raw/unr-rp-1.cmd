rdmaprobe pair 127.0.0.1:19042 -d rxe0 -s 4096 -n 100 (listener: -d rxe2); default --timeout 10s
