// Package runloop is the one interpreter of the workload protocol, for
// hosts and sdktest; plugin authors import workload, exporter, option and
// sdktest, never this package (scripts/check-layers.sh refuses a plugin
// that does).
//
// The loop steps a workload through its phases, keeps the content it
// registers, checks and resolves the requests it returns, hands them to a
// transport, and reports what finished back to the workload. The lmbench
// host runs it on the real clock with its HTTP sender; sdktest runs it on
// a virtual clock with a fake engine. Both get the same semantics, the
// same request rules and the same errors, because there is only this copy.
//
// A Transport is the clock and the sender together: Send starts a request,
// Poll and Wait hand back what finished. Time only moves inside Wait, so a
// virtual transport can jump to the next event. A Sleeper transport (the
// real clock) also sends requests handed over ahead while a Step is in
// flight; an Observer sees each phase start and end and each request go
// out and come back; Config.BeforePhase holds a phase back (a sharded
// run's start gate).
package runloop
