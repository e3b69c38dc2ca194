// Package fault words what a plugin did wrong, once, for the host
// (core/plugin, core/report) and for sdktest, so that a plugin's author
// reads in a unit test the very sentence a run would print.
package fault

import "fmt"

// Crashed is the head of the error for a plugin that died (or, in
// sdktest, panicked) during op: "workload plugin bad (where) crashed or
// exited during Step". where is the plugin's path, or "in-process" in
// sdktest; the caller adds what the plugin said last (": panic: …").
func Crashed(kind, name, where, op string) string {
	return fmt.Sprintf("%s plugin %s (%s) crashed or exited during %s", kind, name, where, op)
}

// SlowStep says that a workload's Step, not the client, made requests go
// out late: "workload bad took up to 1.5 s to answer Step; the lag is
// the plugin's, not the client's".
// Under a second the time reads in milliseconds ("took up to 34 ms").
func SlowStep(workload string, maxSeconds float64) string {
	took := fmt.Sprintf("%.1f s", maxSeconds)
	if maxSeconds < 1 {
		took = fmt.Sprintf("%.0f ms", maxSeconds*1000)
	}
	return fmt.Sprintf("workload %s took up to %s to answer Step; the lag is the plugin's, not the client's",
		workload, took)
}
