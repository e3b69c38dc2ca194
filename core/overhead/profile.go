package overhead

import (
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"runtime"
	rpprof "runtime/pprof"
)

// ServePprof serves Go's profiler on LMBENCH_PPROF_ADDR (a loopback
// address, e.g. 127.0.0.1:6060) when it is set: for looking into lmbench's
// own CPU and memory use during a run. Off by default.
func ServePprof() {
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

// ProfileToFiles writes a CPU profile of the whole process to
// LMBENCH_CPUPROFILE and, at the end, a heap profile (every allocation
// since the start) to LMBENCH_MEMPROFILE, when they are set: for runs too
// short to attach to LMBENCH_PPROF_ADDR. The returned function ends them.
func ProfileToFiles() func() {
	var stops []func()
	if path := os.Getenv("LMBENCH_CPUPROFILE"); path != "" {
		if f, err := os.Create(path); err == nil && rpprof.StartCPUProfile(f) == nil {
			stops = append(stops, func() { rpprof.StopCPUProfile(); f.Close() })
		}
	}
	if path := os.Getenv("LMBENCH_MEMPROFILE"); path != "" {
		runtime.MemProfileRate = 4096
		stops = append(stops, func() {
			if f, err := os.Create(path); err == nil {
				rpprof.Lookup("allocs").WriteTo(f, 0)
				f.Close()
			}
		})
	}
	return func() {
		for _, stop := range stops {
			stop()
		}
	}
}
