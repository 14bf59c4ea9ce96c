ib_write_bw -d rxe0 -x 1 -p 19047 -F -s 4096 -n 100 127.0.0.1 (server: -d rxe2)
