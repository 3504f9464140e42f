module mitm-proxy/bench/goload

go 1.19
