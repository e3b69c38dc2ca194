package main

import (
	"net"
	"net/http"
	"net/http/pprof"
	"os"
)

// servePprof serves Go's profiler on LMBENCH_PPROF_ADDR (a loopback
// address, e.g. 127.0.0.1:6060) when it is set: for looking into lmbench's
// own CPU and memory use during a run. Off by default.
func servePprof() {
	addr := os.Getenv("LMBENCH_PPROF_ADDR")
	if addr == "" {
		return
	}
	host, _, err := net.SplitHostPort(addr)
	if ip := net.ParseIP(host); err != nil || ip == nil || !ip.IsLoopback() {
		return // loopback only: the profiler shows the process's memory
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	go http.ListenAndServe(addr, mux)
}
