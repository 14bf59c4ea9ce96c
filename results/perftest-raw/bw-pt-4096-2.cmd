ib_write_bw -d rxe0 -x 1 -p 19004 -F -s 4096 -n 1000 -t 128 -Q 100 --report_gbits 127.0.0.1
