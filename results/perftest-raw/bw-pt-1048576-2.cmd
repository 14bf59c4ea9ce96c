ib_write_bw -d rxe0 -x 1 -p 19024 -F -s 1048576 -n 200 -t 128 -Q 100 --report_gbits 127.0.0.1
