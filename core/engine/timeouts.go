package engine

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// Timeouts are the time limits of every request. A zero field is no
// limit; a negative one is refused by New. The error a limit causes names
// it by lmbench run's flag, which sets it.
type Timeouts struct {
	// Connect bounds opening a connection (TCP, and TLS for https).
	Connect time.Duration
	// FirstToken bounds the time from submit to the first chunk with
	// output: the connection, the request body and the whole prefill,
	// which takes minutes on long contexts.
	FirstToken time.Duration
	// Idle bounds the gap between two data lines once output has begun.
	Idle time.Duration
	// Request bounds the whole request, from submit to [DONE].
	Request time.Duration
}

// The limits lmbench run uses unless told otherwise.
const (
	DefaultConnectTimeout    = 30 * time.Second
	DefaultFirstTokenTimeout = 10 * time.Minute
	DefaultIdleTimeout       = 2 * time.Minute
	DefaultRequestTimeout    = 0 // none
)

// DefaultTimeouts returns lmbench run's defaults.
func DefaultTimeouts() Timeouts {
	return Timeouts{Connect: DefaultConnectTimeout, FirstToken: DefaultFirstTokenTimeout,
		Idle: DefaultIdleTimeout, Request: DefaultRequestTimeout}
}

func (t Timeouts) validate() error {
	var errs []error
	for _, f := range []struct {
		name string
		v    time.Duration
	}{{"Connect", t.Connect}, {"FirstToken", t.FirstToken}, {"Idle", t.Idle}, {"Request", t.Request}} {
		if f.v < 0 {
			errs = append(errs, fmt.Errorf("engine: Timeouts.%s must be >= 0, got %v", f.name, f.v))
		}
	}
	return errors.Join(errs...)
}

// doneGrace is how long a request waits, after [DONE], for the end of the
// response body, so that its connection can serve the next request. An
// engine ends the body right after [DONE]; a proxy that holds it open
// costs the request this much (after its Finish time) and the connection.
const doneGrace = 20 * time.Millisecond

// timeoutError is the cause of a request's context when a limit expired.
type timeoutError struct {
	limit string // "first-token", "idle", "request"
	value time.Duration
}

func (e *timeoutError) Error() string {
	switch e.limit {
	case "first-token":
		return fmt.Sprintf("no first token within %v (--first-token-timeout)", e.value)
	case "idle":
		return fmt.Sprintf("no data for %v (--idle-timeout)", e.value)
	}
	return fmt.Sprintf("request not finished within %v (--request-timeout)", e.value)
}

// errHeldOpen cancels a request whose body stayed open after [DONE]; the
// request has succeeded by then, so it is never reported.
var errHeldOpen = errors.New("response body held open after [DONE]")

// watch enforces one request's limits on the real clock (whatever clock
// the timestamps use): one timer, re-armed only when it fires and when
// output begins; the data lines in between only store their time.
type watch struct {
	limits Timeouts
	cancel context.CancelCauseFunc
	start  time.Time    // real clock, at submit
	last   atomic.Int64 // offset from start of the latest data line, once output began

	mu     sync.Mutex
	timer  *time.Timer
	output bool // the first chunk with output has arrived
	done   bool // [DONE] read, or the request is over
}

func newWatch(limits Timeouts, cancel context.CancelCauseFunc) *watch {
	w := &watch{limits: limits, cancel: cancel, start: time.Now()}
	if next, ok := w.next(0); ok {
		w.timer = time.AfterFunc(next, w.check)
	}
	return w
}

// next returns how long until the earliest limit that applies now could
// expire, at el since the start; false when none applies. Called with mu
// held (or before the watch is shared).
func (w *watch) next(el time.Duration) (time.Duration, bool) {
	next, ok := time.Duration(0), false
	earliest := func(d time.Duration) {
		if !ok || d < next {
			next, ok = d, true
		}
	}
	if t := w.limits.Request; t > 0 {
		earliest(t - el)
	}
	switch {
	case !w.output && w.limits.FirstToken > 0:
		earliest(w.limits.FirstToken - el)
	case w.output && w.limits.Idle > 0:
		earliest(time.Duration(w.last.Load()) + w.limits.Idle - el)
	}
	return max(next, 0), ok
}

// expired returns the limit that has expired at el, or nil.
func (w *watch) expired(el time.Duration) error {
	if t := w.limits.Request; t > 0 && el >= t {
		return &timeoutError{"request", t}
	}
	if t := w.limits.FirstToken; !w.output && t > 0 && el >= t {
		return &timeoutError{"first-token", t}
	}
	if t := w.limits.Idle; w.output && t > 0 && el-time.Duration(w.last.Load()) >= t {
		return &timeoutError{"idle", t}
	}
	return nil
}

// check runs on the timer: it cancels the request if a limit expired, or
// re-arms the timer for the next one.
func (w *watch) check() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.done {
		w.cancel(errHeldOpen) // only armed by afterDone
		return
	}
	el := time.Since(w.start)
	if err := w.expired(el); err != nil {
		w.cancel(err)
		return
	}
	if next, ok := w.next(el); ok {
		w.timer.Reset(next)
	}
}

// data records a data line; output says it carried output. Only the first
// output takes the lock: from then on the idle limit applies.
func (w *watch) data(output bool) {
	el := time.Since(w.start)
	w.last.Store(int64(el))
	if !output || w.output { // w.output is written only here, on this goroutine
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.output = true
	if w.timer == nil || w.done {
		return
	}
	if next, ok := w.next(el); ok {
		w.timer.Reset(next)
	} else {
		w.timer.Stop()
	}
}

// afterDone ends the limits and gives the rest of the body doneGrace to
// arrive: then the request's context is cancelled, which closes the
// connection.
func (w *watch) afterDone() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.done = true
	if w.timer == nil {
		w.timer = time.AfterFunc(doneGrace, w.check)
	} else {
		w.timer.Reset(doneGrace)
	}
}

// stop ends the watch.
func (w *watch) stop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.done = true
	if w.timer != nil {
		w.timer.Stop()
	}
}

// connectTimeoutError is a dial that did not finish within the connect
// limit.
type connectTimeoutError struct {
	addr    string
	timeout time.Duration
}

func (e *connectTimeoutError) Error() string {
	return fmt.Sprintf("no connection to %s within %v (--connect-timeout)", e.addr, e.timeout)
}

// Timeout reports true, as net errors do for timeouts.
func (e *connectTimeoutError) Timeout() bool { return true }

// dialFunc opens a connection, as net.Dialer.DialContext.
type dialFunc func(ctx context.Context, network, addr string) (net.Conn, error)

// limitDial bounds dial by the connect limit; a dial the limit cut short
// fails with a *connectTimeoutError.
func limitDial(dial dialFunc, timeout time.Duration) dialFunc {
	if timeout <= 0 {
		return dial
	}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		dctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		c, err := dial(dctx, network, addr)
		if err != nil && ctx.Err() == nil && errors.Is(dctx.Err(), context.DeadlineExceeded) {
			return nil, &connectTimeoutError{addr: addr, timeout: timeout}
		}
		return c, err
	}
}
