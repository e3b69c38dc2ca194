// Package overhead measures what the client itself adds to a run's
// figures.
//
// The overhead certificate: while the measured phase runs, a cheap
// [Probe] samples the client (how late a ticker's ticks are received, the
// process's CPU time, Go's GC pauses); at the end [Certificate] adds each
// measured request's dispatch lag and the send spread of requests due
// together, read back from the journal, and a verdict bounds the latency
// the client added or warns that it was saturated.
//
// [Calibrate] (lmbench calibrate) replays a finished run's measured
// schedule against the built-in engine with every cost at zero, through
// the same run loop (sdk/host/runloop) and real-clock transport
// (core/dispatch) a run uses, the schedule handed over by an in-process
// open-loop workload: what TTFT and dispatch lag remain are the client's.
//
// [ServePprof] and [ProfileToFiles] are the profiler hooks for looking
// into the client's own CPU and memory (LMBENCH_PPROF_ADDR,
// LMBENCH_CPUPROFILE, LMBENCH_MEMPROFILE).
package overhead
