package runloop

import (
	"container/heap"
	"errors"
	"testing"
	"time"

	"github.com/lmbench/lmbench/sdk/protocol"
)

// nextWake alone: how each next action, returned at 10 ms, sets the next
// Step (the runs above pin the same through their send times).
func TestNextWake(t *testing.T) {
	t.Parallel()
	const now = 10 * ms
	for _, tc := range []struct {
		name       string
		next       protocol.Next
		quiet      bool
		handedOver int
		want       wake
		ok         bool
	}{
		{"wake at, ahead", wakeAt(15 * ms), false, 0, wake{at: 15 * ms}, true},
		{"wake at, ahead, quiet", wakeAt(15 * ms), true, 0, wake{at: 15 * ms}, true},
		{"wake at, passed: at once", wakeAt(2 * ms), false, 0, wake{at: now}, true},
		{"wake at, passed, quiet: a 1 ms tick", wakeAt(2 * ms), true, 0, wake{at: now + ms}, true},
		{"wake at now, quiet: a 1 ms tick", wakeAt(now), true, 0, wake{at: now + ms}, true},
		{"wake at or finish", wakeAtOrFinish(15 * ms), false, 3, wake{at: 15 * ms, onFinish: true}, true},
		{"wake at or finish, passed, quiet", wakeAtOrFinish(0), true, 3, wake{at: now + ms, onFinish: true}, true},
		{"wait for finish", protocol.Next{Kind: protocol.NextWaitForFinish}, false, 2, wake{at: never, onFinish: true}, true},
		{"below, not yet", belowN(3), false, 3, wake{at: never, onFinish: true, below: 3}, true},
		{"below, already", belowN(3), false, 2, wake{at: now}, true},
		{"below, already, quiet: a 1 ms tick", belowN(3), true, 2, wake{at: now + ms}, true},
		{"below 0 counts as 1", belowN(0), false, 1, wake{at: never, onFinish: true, below: 1}, true},
		{"below 0, nothing handed over", belowN(0), false, 0, wake{at: now}, true},
		{"done", done, false, 0, wake{}, false},
		{"no action", protocol.Next{}, false, 0, wake{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, ok := nextWake(tc.next, now, tc.quiet, tc.handedOver)
			if got != tc.want || ok != tc.ok {
				t.Errorf("nextWake = %+v, %v; want %+v, %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}

// until alone: the wait's deadline is the earliest of the next Step, the
// first request handed over ahead and the drain deadline, each only while
// it still counts.
func TestUntil(t *testing.T) {
	t.Parallel()
	base := time.Unix(100, 0)
	at := func(d time.Duration) time.Time { return base.Add(d) }
	timedAt := func(ds ...time.Duration) timed {
		var h timed
		for i, d := range ds {
			heap.Push(&h, timedReq{held: held{out: &Outgoing{Due: at(d)}}, seq: int64(i)})
		}
		return h
	}
	for _, tc := range []struct {
		name string
		p    phaseRun[time.Duration]
		want time.Time
	}{
		{"the next step", phaseRun[time.Duration]{wake: wake{at: 5 * ms}}, at(5 * ms)},
		{"only a finish: no deadline", phaseRun[time.Duration]{wake: wake{at: never}}, time.Time{}},
		{"done: no step", phaseRun[time.Duration]{wake: wake{at: 5 * ms}, done: true}, time.Time{}},
		{"a request due first", phaseRun[time.Duration]{loop: &loop[time.Duration]{timed: timedAt(7*ms, 3*ms)}, wake: wake{at: 5 * ms}}, at(3 * ms)},
		{"a request due, step only on a finish", phaseRun[time.Duration]{loop: &loop[time.Duration]{timed: timedAt(9 * ms)}, wake: wake{at: never}}, at(9 * ms)},
		{"the step first", phaseRun[time.Duration]{loop: &loop[time.Duration]{timed: timedAt(9 * ms)}, wake: wake{at: 5 * ms}}, at(5 * ms)},
		{"stopping: timed requests no longer go out", phaseRun[time.Duration]{loop: &loop[time.Duration]{timed: timedAt(3 * ms)},
			wake: wake{at: 5 * ms}, done: true, err: errors.New("x")}, time.Time{}},
		{"draining", phaseRun[time.Duration]{loop: &loop[time.Duration]{interrupted: true}, done: true, drainAt: at(30 * ms)}, at(30 * ms)},
		{"the drain deadline first", phaseRun[time.Duration]{wake: wake{at: 50 * ms}, drainAt: at(30 * ms)}, at(30 * ms)},
		{"the step before the drain deadline", phaseRun[time.Duration]{wake: wake{at: 20 * ms}, drainAt: at(30 * ms)}, at(20 * ms)},
		{"abandoned: the drain deadline is past", phaseRun[time.Duration]{done: true, drainAt: at(30 * ms), abandoned: true}, time.Time{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := tc.p
			if p.loop == nil {
				p.loop = &loop[time.Duration]{}
			}
			p.start = base
			if got := p.until(); !got.Equal(tc.want) {
				t.Errorf("until = %v, want %v", got, tc.want)
			}
		})
	}
}
