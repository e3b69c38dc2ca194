// Package abort is when a run stops early because its results could not
// mean anything: the policy (refused connections in a row, a failure rate
// over a window, failed warmup requests), the engine health probe that
// notices a dead engine even when no request finishes, and the failure
// log that tells of failures as they happen.
package abort

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/lmbench/lmbench/core/failure"
)

// Policy says when a run stops early because its results could not
// mean anything: the engine is gone, or nearly every request fails. The
// zero policy never aborts on failures (but a failed warmup request
// still fails the run, and so does an engine error on the first requests
// that every request would get).
type Policy struct {
	// ConnectionFailures: abort after this many requests in a row got
	// no HTTP response at all (refused, reset, DNS, TLS, a connect
	// timeout); 0 never.
	ConnectionFailures int
	// FailureRate: abort once at least this share (0 < rate <= 1) of the
	// last Window finished requests failed; 0 never.
	FailureRate float64
	Window      int
	// Health probes the engine every HealthInterval while the run goes
	// on; HealthFailures (3) failed probes in a row abort. A zero
	// interval or no URL: no probe.
	Health HealthProbe
	// AllowWarmupFailures measures even after warmup requests failed.
	AllowWarmupFailures bool
}

// HealthFailures failed probes in a row abort the run (the defaults of
// the policy's flags are core/config's).
const HealthFailures = 3

// Validate checks the policy's numbers; the errors name the field, the
// caller says which flag it came from.
func (p Policy) Validate() error {
	var errs []error
	if p.ConnectionFailures < 0 {
		errs = append(errs, fmt.Errorf("connection failures: must be >= 0 (0: never abort on them), got %d", p.ConnectionFailures))
	}
	if math.IsNaN(p.FailureRate) || p.FailureRate < 0 || p.FailureRate > 1 {
		errs = append(errs, fmt.Errorf("failure rate: must be in [0, 1] (0: never abort on it), got %v", p.FailureRate))
	}
	if p.FailureRate > 0 && p.Window < 1 {
		errs = append(errs, fmt.Errorf("window: must be >= 1, got %d", p.Window))
	}
	if p.Health.Interval < 0 {
		errs = append(errs, fmt.Errorf("health interval: must be >= 0 (0: no probe), got %s", p.Health.Interval))
	}
	return errors.Join(errs...)
}

// Cause is why lmbench stopped a run early. It is the run loop's error
// (the loop then drains what is in flight), and the summary's reason.
type Cause struct {
	// Title is the reason in a few words, for the summary's header.
	Title string
	// Reason is the whole of it, with the error that decided it.
	Reason string
}

func (a *Cause) Error() string { return a.Reason }

// State is the policy's state machine: fed every finished request
// in order, it says when the run must stop. It is deterministic: the
// same sequence of results always aborts at the same one.
type State struct {
	p         Policy
	inARow    int            // connection failures in a row
	window    []failure.Kind // the last Window results (the zero Kind: a success)
	next      int
	failed    int // failures in window
	succeeded bool
}

// NewState starts the policy's state, before any request finished.
func NewState(p Policy) *State {
	s := &State{p: p}
	if p.FailureRate > 0 && p.Window > 0 {
		s.window = make([]failure.Kind, 0, p.Window)
	}
	return s
}

// Observe takes one finished request. Requests lmbench cancelled itself
// (a drain timeout) say nothing about the engine: leave them out.
func (s *State) Observe(requestID string, success bool, msg string) *Cause {
	kind := failure.Kind{}
	if !success {
		kind = failure.Classify(msg)
	}
	s.push(kind)
	if success {
		s.inARow, s.succeeded = 0, true
		return nil
	}
	// An engine that turns the very first requests away for who sends
	// them or what they ask for (a wrong model, no key) would turn them
	// all away: stop at the first.
	if !s.succeeded && (kind.Status == 401 || kind.Status == 403 || kind.Status == 404) {
		return &Cause{Title: "engine error " + kind.Label,
			Reason: fmt.Sprintf("the engine rejected request %s, and every request would get the same: %s", requestID, msg)}
	}
	if kind.Connection {
		s.inARow++
	} else {
		s.inARow = 0
	}
	if n := s.p.ConnectionFailures; n > 0 && s.inARow >= n {
		return &Cause{Title: "engine unreachable",
			Reason: fmt.Sprintf("engine unreachable: %d requests in a row got no response (the last: %s)", s.inARow, msg)}
	}
	if s.window != nil && len(s.window) == s.p.Window && float64(s.failed) >= s.p.FailureRate*float64(s.p.Window) {
		return &Cause{Title: "too many failures",
			Reason: fmt.Sprintf("%d of the last %d requests failed (--abort-failure-rate %g): %s; the last: %s",
				s.failed, s.p.Window, s.p.FailureRate, s.windowKinds(), msg)}
	}
	return nil
}

func (s *State) push(k failure.Kind) {
	if s.window == nil {
		return
	}
	if len(s.window) < s.p.Window {
		s.window = append(s.window, k)
	} else {
		if s.window[s.next].ID != "" {
			s.failed--
		}
		s.window[s.next] = k
		s.next = (s.next + 1) % s.p.Window
	}
	if k.ID != "" {
		s.failed++
	}
}

// windowKinds are the window's failures by kind, "45× HTTP 500".
func (s *State) windowKinds() string {
	var t failure.Tally
	for _, k := range s.window {
		if k.ID != "" {
			t.AddFailure(k, "", "")
		}
	}
	return t.Breakdown().Summary()
}

// FailureLog tells of failures as they happen: the first of each kind at
// once, with its error, then every Every a line of what failed meanwhile,
// "12 of the last 40 requests failed: 12× connection refused".
type FailureLog struct {
	log   zerolog.Logger
	every time.Duration
	seen  map[string]bool

	since     time.Time // the current window's start
	n, failed int
	tally     failure.Tally
}

// FailureLogEvery is how often failures are summarised while they go on.
const FailureLogEvery = 5 * time.Second

func NewFailureLog(log zerolog.Logger, every time.Duration) *FailureLog {
	return &FailureLog{log: log, every: every, seen: map[string]bool{}}
}

// Add counts one finished request at now.
func (l *FailureLog) Add(now time.Time, phase, requestID string, success bool, msg string) {
	if l.since.IsZero() {
		l.since = now
	}
	l.n++
	l.tally.Add(success, requestID, msg)
	if !success {
		l.failed++
		if k := failure.Classify(msg); !l.seen[k.Label] && k.ID != failure.Cancelled.ID {
			l.seen[k.Label] = true
			what := "request failed"
			if k.Connection {
				what = "request got no response from the engine"
			}
			l.log.Warn().Str("phase", phase).Str("request", requestID).Str("kind", k.Label).Str("error", msg).
				Msgf("%s (first %s failure)", what, k.Label)
		}
	}
	if now.Sub(l.since) < l.every {
		return
	}
	if l.failed > 0 {
		l.log.Warn().Int("failed", l.failed).Int("finished", l.n).
			Msgf("%d of the last %d requests failed: %s", l.failed, l.n, l.tally.Breakdown().Summary())
	}
	l.since, l.n, l.failed, l.tally = now, 0, 0, failure.Tally{}
}

// WarmupFailures names the failed warmup requests, for the abort's reason.
type WarmupFailures struct {
	n     int
	named []string // "doc3 (HTTP 500: boom)", the first few
}

// warmupNamed is how many failed warmup requests the reason names.
const warmupNamed = 5

// Add counts one failed warmup request.
func (w *WarmupFailures) Add(requestID, msg string) {
	w.n++
	if len(w.named) < warmupNamed {
		w.named = append(w.named, fmt.Sprintf("%s (%s)", requestID, failure.Truncate(msg, 200)))
	}
}

// Cause is the run's abort for its failed warmup requests.
func (w *WarmupFailures) Cause() *Cause {
	list := strings.Join(w.named, ", ")
	if more := w.n - len(w.named); more > 0 {
		list += fmt.Sprintf(" and %d more", more)
	}
	req := "request"
	if w.n > 1 {
		req = "requests"
	}
	return &Cause{Title: "warmup failed",
		Reason: fmt.Sprintf("warmup failed: %d warmup %s failed, so the measured requests would not find what warmup was to cache: %s (--allow-warmup-failures measures anyway)",
			w.n, req, list)}
}
