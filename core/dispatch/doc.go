// Package dispatch is the run loop's transport on the real clock: the
// path every request of a run takes from sdk/host/runloop to the engine
// sender. Each request is sent on its own goroutine, so sending never
// waits for the loop; results come back over a channel; a deadline's last
// stretch is slept in the kernel so a request due then leaves on time;
// and the sends keep a context of their own, so Ctrl-C stops the stepping
// while what is in flight finishes (until Abandon).
//
// A run (core/bench's Execute) and lmbench calibrate (core/overhead) both
// dispatch through it:
//
//	tr := dispatch.New(ctx, sender, nil)
//	defer tr.Close()
//	res, err := runloop.Run(ctx, runloop.Config[dispatch.Measured]{Workload: w, Transport: tr, Observer: obs})
package dispatch
