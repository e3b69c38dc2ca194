package overhead

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"time"

	"github.com/rs/zerolog"

	"github.com/lmbench/lmbench/core/dispatch"
	"github.com/lmbench/lmbench/core/engine"
	"github.com/lmbench/lmbench/core/record"
	"github.com/lmbench/lmbench/core/sim"
	"github.com/lmbench/lmbench/sdk/host/runloop"
	"github.com/lmbench/lmbench/sdk/protocol"
)

// Calibrate replays a finished run's measured schedule against the
// built-in engine with every cost at zero, through the run loop and the
// real-clock transport a run dispatches with (sdk/host/runloop, core/dispatch):
// the schedule is an open-loop workload handing its requests over ahead,
// each due at its offset. What TTFT and dispatch lag remain are the
// client's, for that schedule on this machine.
type Calibrate struct {
	Journal string
	Repeat  int // times the schedule is replayed, one after the other (0: once)
	Log     zerolog.Logger

	// observer, when set, also receives every replay's loop events (tests).
	observer runloop.Observer[dispatch.Measured]
}

// Check says what is wrong with c's settings, naming the flag, before
// anything is read.
func (c Calibrate) Check() error {
	switch {
	case c.Journal == "":
		return errors.New("--journal: required (the bench_journal.jsonl of a finished run)")
	case c.Repeat < 1:
		return fmt.Errorf("--repeat: must be >= 1, got %d", c.Repeat)
	}
	return nil
}

// Err says how many requests failed (nil when none did): their TTFT is
// left out, so the figures are of fewer requests than the schedule's.
func (c *Calibration) Err() error {
	if c.Failed == 0 {
		return nil
	}
	return fmt.Errorf("calibrate: %d of %d requests failed against the built-in engine (their TTFT is left out)", c.Failed, c.Requests*c.Repeat)
}

// Calibration is what a replay measured. Durations are milliseconds; a
// figure that is not defined is NaN.
type Calibration struct {
	Requests int           // in the schedule
	Repeat   int           // replays of it
	Span     time.Duration // from its first request's offset to its last
	CPUs     int
	Failed   int // requests that failed (over every replay)
	// TTFT is first token − submit of the successful requests: with an
	// engine that costs nothing, the client's own share of TTFT.
	TTFTP50Ms, TTFTP99Ms, TTFTMaxMs float64
	// DispatchLag is submit − due of every request.
	DispatchLagP50Ms, DispatchLagP99Ms, DispatchLagMaxMs float64
}

// replayed is one request of the schedule.
type replayed struct {
	id        string
	offset    time.Duration // from the schedule's first request
	words     int           // the prompt's length (a simulated token is a word)
	maxTokens int
}

// errNoMeasured is a journal with nothing to replay.
var errNoMeasured = errors.New("no measured requests to replay (did the run stop before its measured phase?)")

// scheduleOf is the measured schedule of a run's records: each request's
// id (made unique), its scheduled offset from the earliest, its input
// tokens as the prompt's length and its output tokens as max_tokens (at
// least 1 of each: a failed request reported none), in the order they
// were due.
func scheduleOf(recs []record.Record) []replayed {
	var out []replayed
	var first time.Time
	due := func(r *record.Record) time.Time {
		if r.Scheduled.IsZero() {
			return r.Submit
		}
		return r.Scheduled
	}
	for i := range recs {
		if r := &recs[i]; r.Phase == record.Measure && !due(r).IsZero() && (first.IsZero() || due(r).Before(first)) {
			first = due(r)
		}
	}
	seen := map[string]int{}
	for i := range recs {
		r := &recs[i]
		if r.Phase != record.Measure || due(r).IsZero() {
			continue
		}
		// The run loop refuses an id twice; a journal's ids are unique
		// but for a hand-joined one.
		id := r.RequestID
		if seen[id]++; seen[id] > 1 {
			id = fmt.Sprintf("%s#%d", id, seen[id])
		}
		out = append(out, replayed{id: id, offset: due(r).Sub(first),
			words: max(int(r.InputTokens), 1), maxTokens: max(int(r.OutputTokens), 1)})
	}
	slices.SortStableFunc(out, func(a, b replayed) int { return cmp.Compare(a.offset, b.offset) })
	return out
}

// zeroCostEngine is the built-in engine with nothing simulated: no
// prefill, load or decode time, no cache tiers, room for the longest
// request of the schedule.
func zeroCostEngine(plan []replayed) sim.Config {
	cfg := sim.DefaultConfig()
	cfg.TimeScale = 0
	cfg.PrefillPerToken, cfg.CPULoadPerToken, cfg.DiskLoadPerToken, cfg.DecodePerToken = 0, 0, 0, 0
	cfg.GPUGB, cfg.CPUGB, cfg.DiskGB = 0, 0, 0
	for _, p := range plan {
		cfg.MaxModelLen = max(cfg.MaxModelLen, p.words+p.maxTokens)
	}
	return cfg
}

// Run reads the journal, starts the engine on a loopback port and
// replays the schedule Repeat times.
func (c Calibrate) Run(ctx context.Context) (*Calibration, error) {
	if st, err := os.Stat(c.Journal); err == nil && st.IsDir() {
		return nil, fmt.Errorf("--journal %s: is a directory; expected its bench_journal.jsonl", c.Journal)
	}
	contents, err := record.ReadJournal(c.Journal)
	if err != nil {
		return nil, fmt.Errorf("--journal %s: %w", c.Journal, err)
	}
	plan := scheduleOf(contents.Records)
	if len(plan) == 0 {
		return nil, fmt.Errorf("--journal %s: %w", c.Journal, errNoMeasured)
	}
	repeat := max(c.Repeat, 1)
	cfg := zeroCostEngine(plan)
	srv, err := sim.New(cfg, c.Log.With().Str("component", "sim").Logger())
	if err != nil {
		return nil, fmt.Errorf("built-in engine: %w", err)
	}
	base, err := srv.Start("127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("built-in engine: %w", err)
	}
	defer srv.Close()
	sender, err := engine.New(engine.Config{BaseURL: base, Model: cfg.Model})
	if err != nil {
		return nil, err
	}
	defer sender.Close()

	m := &calibrationSamples{}
	obs := runloop.Observer[dispatch.Measured](m)
	if c.observer != nil {
		obs = observers{m, c.observer}
	}
	for i := range repeat {
		c.Log.Info().Int("replay", i+1).Int("of", repeat).Int("requests", len(plan)).Msg("replaying the schedule")
		if err := replay(ctx, sender, plan, obs); err != nil {
			return nil, err
		}
	}
	out := m.calibration()
	out.Requests, out.Repeat, out.Span, out.CPUs = len(plan), repeat, plan[len(plan)-1].offset, runtime.NumCPU()
	return out, nil
}

// calibrationSamples are a replay's measurements: a run loop observer.
type calibrationSamples struct {
	ttftMs, lagMs []float64
	failed        int
}

func (m *calibrationSamples) PhaseStarted(protocol.Phase, time.Time) {}
func (m *calibrationSamples) Sent(*runloop.Outgoing)                 {}
func (m *calibrationSamples) PhaseEnded(protocol.Phase, time.Time)   {}

func (m *calibrationSamples) Finished(f *runloop.Finished[dispatch.Measured]) error {
	r := &f.Measured.Result
	m.lagMs = append(m.lagMs, ms(r.Submit.Sub(f.Req.Due)))
	if !r.Success {
		m.failed++
		return nil
	}
	m.ttftMs = append(m.ttftMs, ms(r.FirstToken.Sub(r.Submit)))
	return nil
}

func (m *calibrationSamples) calibration() *Calibration {
	slices.Sort(m.ttftMs)
	slices.Sort(m.lagMs)
	return &Calibration{
		Failed:    m.failed,
		TTFTP50Ms: pctOf(m.ttftMs, 50), TTFTP99Ms: pctOf(m.ttftMs, 99), TTFTMaxMs: pctOf(m.ttftMs, 100),
		DispatchLagP50Ms: pctOf(m.lagMs, 50), DispatchLagP99Ms: pctOf(m.lagMs, 99), DispatchLagMaxMs: pctOf(m.lagMs, 100),
	}
}

// observers hands each loop event to every one of them, in order.
type observers []runloop.Observer[dispatch.Measured]

func (all observers) PhaseStarted(ph protocol.Phase, t time.Time) {
	for _, o := range all {
		o.PhaseStarted(ph, t)
	}
}

func (all observers) Sent(out *runloop.Outgoing) {
	for _, o := range all {
		o.Sent(out)
	}
}

func (all observers) Finished(f *runloop.Finished[dispatch.Measured]) error {
	var errs []error
	for _, o := range all {
		errs = append(errs, o.Finished(f))
	}
	return errors.Join(errs...)
}

func (all observers) PhaseEnded(ph protocol.Phase, t time.Time) {
	for _, o := range all {
		o.PhaseEnded(ph, t)
	}
}

// replay sends plan once as a run does: the replay workload hands each
// request over ahead, scheduled at its offset from the measured phase's
// start; the run loop holds it until due and the real-clock transport
// sends it over s. It waits for every answer; Ctrl-C abandons what is in
// flight at once.
func replay(ctx context.Context, s dispatch.Sender, plan []replayed, obs runloop.Observer[dispatch.Measured]) error {
	tr := dispatch.New(ctx, s, nil)
	defer tr.Close()
	res, err := runloop.Run(ctx, runloop.Config[dispatch.Measured]{
		Workload: newReplayWorkload(plan), Transport: tr, Observer: obs, Plugin: replayName,
		Capabilities: replayCapabilities,
		// An interrupted calibration reports nothing: no drain to wait out.
		DrainTimeout: time.Nanosecond,
	})
	if err != nil {
		return fmt.Errorf("calibration: %w", err)
	}
	if res.Interrupted {
		return fmt.Errorf("calibration interrupted: %w", ctx.Err())
	}
	return nil
}
