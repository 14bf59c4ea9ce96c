ib_write_lat -d rxe0 -x 1 -p 19039 -F -s 64 -n 1000 127.0.0.1
