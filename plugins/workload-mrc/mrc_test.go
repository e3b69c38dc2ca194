package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/rs/zerolog"

	"github.com/lmbench/lmbench/sdk/arrival"
	"github.com/lmbench/lmbench/sdk/option"
	"github.com/lmbench/lmbench/sdk/protocol"
	"github.com/lmbench/lmbench/sdk/sdktest"
	"github.com/lmbench/lmbench/sdk/workload"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/")

// small is a cheap configuration: 1 GB × 150 tokens/GB / (20 + 30) = 3
// sessions, 10 requests per second for 1 s.
func small() map[string]any {
	return map[string]any{
		"shared-prompt-length": 20, "chat-history-length": 30, "user-input-length": 3,
		"output-length": 5, "qps": 10.0, "duration": 1.0,
	}
}

var threeSessions = workload.Common{KVCacheVolumeGB: 1, TokensPerGB: 150}

// with returns small() with overrides.
func with(kv ...any) map[string]any {
	o := small()
	for i := 0; i < len(kv); i += 2 {
		o[kv[i].(string)] = kv[i+1]
	}
	return o
}

// newDirect builds the workload for calling Step and OnFinished directly.
func newDirect(t *testing.T, o Options, c workload.Common) *multiRoundChat {
	t.Helper()
	wl, err := Definition.New(o, workload.Env{Common: c, Logger: zerolog.Nop(), Content: workload.NewRegistry()})
	if err != nil {
		t.Fatal(err)
	}
	return wl.(*multiRoundChat)
}

// directOptions is the original tests' _make_config: 100/200/10/20, qps 10, 5 s.
func directOptions() Options {
	return Options{SharedPromptLength: 100, ChatHistoryLength: 200, UserInputLength: 10, OutputLength: 20, QPS: 10,
		Arrival: arrival.Constant, Burstiness: 1, Duration: 5}
}

// sessionsCommon sizes directOptions to n sessions (300 tokens each).
func sessionsCommon(n int) workload.Common {
	return workload.Common{Seed: 42, KVCacheVolumeGB: 1, TokensPerGB: int64(300 * n)}
}

func TestSchema(t *testing.T) {
	t.Parallel()
	specs, err := option.Specs(Definition.Defaults)
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		Name, Label string
		Default     any
	}
	var got []row
	for _, s := range specs {
		got = append(got, row{s.Name, s.Label, s.Default})
		if s.Help == "" {
			t.Errorf("%s has no help", s.Name)
		}
	}
	want := []row{
		{"shared-prompt-length", "System prompt length (tokens)", int64(2000)},
		{"chat-history-length", "Chat history length (tokens)", int64(10000)},
		{"user-input-length", "User input length (tokens)", int64(50)},
		{"output-length", "Output length (tokens)", int64(200)},
		{"qps", "Queries per second", 1.0},
		{"arrival", "Arrival process", "constant"},
		{"burstiness", "Burstiness (gamma shape)", 1.0},
		{"duration", "Duration (seconds)", 60.0},
		{"max-rounds", "Max rounds per conversation", int64(0)},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("option schema (-want +got):\n%s", d)
	}
}

func TestConfigDefaults(t *testing.T) {
	t.Parallel()
	// Default options, one session, a short run so it stays cheap.
	tr := sdktest.Run(t, Definition, sdktest.Options{
		Options: map[string]any{"duration": 2.0},
		Common:  workload.Common{KVCacheVolumeGB: 1, TokensPerGB: 12000},
	})
	want := map[string]any{
		"shared-prompt-length": int64(2000), "chat-history-length": int64(10000), "user-input-length": int64(50),
		"output-length": int64(200), "qps": 1.0, "arrival": "constant", "burstiness": 1.0, "duration": 2.0, "max-rounds": int64(0),
		"num-concurrent-users": int64(1),
	}
	if d := cmp.Diff(want, tr.Resolved); d != "" {
		t.Errorf("resolved (-want +got):\n%s", d)
	}
	if got := sdktest.IDs(tr.Measured()); !cmp.Equal(got, []string{"s0_r0", "s0_r1"}) {
		t.Errorf("measured %v, want s0_r0 s0_r1", got)
	}
	for _, s := range tr.Measured() {
		if s.MaxTokens != 200 {
			t.Errorf("%s: max_tokens %d, want 200", s.ID, s.MaxTokens)
		}
	}
}

func TestConfigCustom(t *testing.T) {
	t.Parallel()
	// test_resolve_passes_all_fields: 10 GB × 10000 tokens/GB / (500 + 5000) = 18 users.
	tr := sdktest.Run(t, Definition, sdktest.Options{
		Options: map[string]any{"shared-prompt-length": 500, "chat-history-length": 5000, "user-input-length": 100,
			"output-length": 300, "qps": 5.0, "duration": 2.0},
		Common: workload.Common{KVCacheVolumeGB: 10, TokensPerGB: 10000},
	})
	want := map[string]any{
		"shared-prompt-length": int64(500), "chat-history-length": int64(5000), "user-input-length": int64(100),
		"output-length": int64(300), "qps": 5.0, "arrival": "constant", "burstiness": 1.0, "duration": 2.0, "max-rounds": int64(0),
		"num-concurrent-users": int64(18),
	}
	if d := cmp.Diff(want, tr.Resolved); d != "" {
		t.Errorf("resolved (-want +got):\n%s", d)
	}
	if len(tr.Warmup()) != 18 || len(tr.Measured()) != 10 || tr.Planned != 10 {
		t.Errorf("warmup %d, measured %d, planned %d; want 18, 10, 10", len(tr.Warmup()), len(tr.Measured()), tr.Planned)
	}
}

func TestInvalidOptions(t *testing.T) {
	t.Parallel()
	sdktest.CheckFieldErrors(t, Definition, sdktest.Options{Common: threeSessions}, []sdktest.FieldErrorCase{
		{Name: "shared prompt 0", Options: with("shared-prompt-length", 0),
			Want: []option.FieldError{{Option: "shared-prompt-length", Message: "shared_prompt_length must be positive, got 0"}}},
		{Name: "history -1", Options: with("chat-history-length", -1),
			Want: []option.FieldError{{Option: "chat-history-length", Message: "chat_history_length must be positive, got -1"}}},
		{Name: "user input 0", Options: with("user-input-length", 0),
			Want: []option.FieldError{{Option: "user-input-length", Message: "user_input_length must be >= 1, got 0"}}},
		{Name: "output 0", Options: with("output-length", 0),
			Want: []option.FieldError{{Option: "output-length", Message: "output_length must be >= 1, got 0"}}},
		{Name: "history too long", Options: with("chat-history-length", 2000000000),
			Want: []option.FieldError{{Option: "chat-history-length", Message: "chat_history_length must be at most 16777216 tokens, got 2000000000"}}},
		{Name: "lengths too long reported together", Options: with("shared-prompt-length", 1<<24+1, "user-input-length", 1<<30, "output-length", 1<<25),
			Want: []option.FieldError{
				{Option: "shared-prompt-length", Message: "shared_prompt_length must be at most 16777216 tokens, got 16777217"},
				{Option: "user-input-length", Message: "user_input_length must be at most 16777216 tokens, got 1073741824"},
				{Option: "output-length", Message: "output_length must be at most 16777216 tokens, got 33554432"},
			}},
		{Name: "qps 0", Options: with("qps", 0.0),
			Want: []option.FieldError{{Option: "qps", Message: "qps must be positive, got 0.0"}}},
		{Name: "qps -0.5", Options: with("qps", -0.5),
			Want: []option.FieldError{{Option: "qps", Message: "qps must be positive, got -0.5"}}},
		{Name: "duration -1", Options: with("duration", -1.0),
			Want: []option.FieldError{{Option: "duration", Message: "duration must be positive, got -1.0"}}},
		{Name: "qps NaN", Options: with("qps", math.NaN()),
			Want: []option.FieldError{{Option: "qps", Message: "qps must be positive, got nan"}}},
		{Name: "duration inf", Options: with("duration", math.Inf(1)),
			Want: []option.FieldError{{Option: "duration", Message: "duration must be positive, got inf"}}},
		{Name: "all reported together", Options: with("shared-prompt-length", 0, "qps", 0.0),
			Want: []option.FieldError{
				{Option: "shared-prompt-length", Message: "shared_prompt_length must be positive, got 0"},
				{Option: "qps", Message: "qps must be positive, got 0.0"},
			}},
	})
}

func TestNumSessions(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name            string
		kv              float64
		tokensPerGB     int64
		prompt, history int
		want            int
	}{
		{"resolve basic", 100, 6000, 2000, 10000, 50},
		{"fractional floors", 1, 10000, 2000, 5000, 1},
		{"minimum one", 0.001, 1, 2000, 10000, 1},
		{"all fields", 10, 10000, 500, 5000, 18},
		{"factory default", 100, 50000, 2000, 10000, 416},
		{"float product", 0.1, 30, 1, 2, 1}, // 3.0000000000000004/3 → 1
		{"huge lengths", 1, 1, math.MaxInt, math.MaxInt, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := numSessions(tc.kv, tc.tokensPerGB, tc.prompt, tc.history)
			if err != nil || got != tc.want {
				t.Errorf("numSessions(%v, %d, %d, %d) = %d, %v; want %d", tc.kv, tc.tokensPerGB, tc.prompt, tc.history, got, err, tc.want)
			}
		})
	}
	_, err := numSessions(1e12, 1e9, 1, 1)
	var fe *option.FieldError
	if !errors.As(err, &fe) || fe.Option != "chat-history-length" || !strings.Contains(fe.Message, "sessions, more than") {
		t.Errorf("an absurd session count gave %v", err)
	}
}

func TestResolveDefaults(t *testing.T) {
	t.Parallel()
	// New is cheap (session texts are built on first use), so the full
	// default size can be checked without running it.
	w := newDirect(t, Definition.Defaults, workload.Common{Seed: 42, KVCacheVolumeGB: 100, TokensPerGB: 50000})
	if got := w.Resolved(); !cmp.Equal(got, map[string]any{"num-concurrent-users": 416}) {
		t.Errorf("Resolved() = %v, want num-concurrent-users 416", got)
	}
	if got := w.PlannedRequests(); got != 60 {
		t.Errorf("PlannedRequests() = %d, want 60 (1 qps × 60 s)", got)
	}
}

func TestPlannedRequests(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		qps, duration float64
		want          int
	}{
		{20, 3, 60}, {10, 0.01, 1}, {0.3, 5, 2}, {3, 1.1, 4}, {1e-12, 5, 1},
	} {
		o := directOptions()
		o.QPS, o.Duration = tc.qps, tc.duration
		if got := newDirect(t, o, sessionsCommon(1)).PlannedRequests(); got != tc.want {
			t.Errorf("qps %v duration %v: planned %d, want %d", tc.qps, tc.duration, got, tc.want)
		}
	}
}

func TestBanner(t *testing.T) {
	t.Parallel()
	tr := sdktest.Run(t, Definition, sdktest.Options{Options: with("qps", 2.5, "duration", 1.0), Common: threeSessions})
	want := []workload.Field{
		{Label: "Concurrent users", Value: "3"},
		{Label: "Prompt length", Value: "20 tokens"},
		{Label: "History length", Value: "30 tokens"},
		{Label: "Query length", Value: "3 tokens"},
		{Label: "Output length", Value: "5 tokens"},
		{Label: "QPS", Value: "2.5"},
		{Label: "Duration", Value: "1.0s"},
	}
	if d := cmp.Diff(want, tr.Banner); d != "" {
		t.Errorf("banner (-want +got):\n%s", d)
	}
	if tr.Title != "multi-round-chat" {
		t.Errorf("title %q", tr.Title)
	}
	b := newDirect(t, Definition.Defaults, sessionsCommon(1)).Banner()
	if b[5].Value != "1.0" || b[6].Value != "60.0s" {
		t.Errorf("default QPS %q and duration %q, want Python's 1.0 and 60.0s", b[5].Value, b[6].Value)
	}
}

// text resolves inline segments (unit tests build sessions from text).
func text(segs []workload.Segment) string {
	var b strings.Builder
	for _, s := range segs {
		b.WriteString(s.Text)
	}
	return b.String()
}

type msg struct{ Role, Content string }

func plain(msgs []workload.Message) []msg {
	out := make([]msg, len(msgs))
	for i, m := range msgs {
		out[i] = msg{m.Role, text(m.Content)}
	}
	return out
}

func TestSessionMessages(t *testing.T) {
	t.Parallel()
	s := &session{id: 0, system: workload.Text("System.")}
	if s.inFlight || len(s.exchanges) != 0 {
		t.Error("a new session is busy or has rounds")
	}
	if d := cmp.Diff([]msg{{"system", "System."}, {"user", "Hello"}}, plain(s.messages(workload.Text("Hello")))); d != "" {
		t.Errorf("no history (-want +got):\n%s", d)
	}

	s.history = workload.Text("Context text.")
	want := []msg{{"system", "System."}, {"user", "Context text."}, {"assistant", understood}, {"user", "Hello"}}
	if d := cmp.Diff(want, plain(s.messages(workload.Text("Hello")))); d != "" {
		t.Errorf("history (-want +got):\n%s", d)
	}

	s.history = workload.Segment{}
	s.inFlight = true
	s.record(workload.Text("q1"), workload.Text("a1"), "a1")
	if s.inFlight {
		t.Error("record left the session busy")
	}
	s.record(workload.Text("q2"), workload.Text("a2"), "a2")
	want = []msg{{"system", "System."}, {"user", "q1"}, {"assistant", "a1"}, {"user", "q2"}, {"assistant", "a2"}, {"user", "q3"}}
	if d := cmp.Diff(want, plain(s.messages(workload.Text("q3")))); d != "" {
		t.Errorf("exchanges (-want +got):\n%s", d)
	}
}

func TestSessionTexts(t *testing.T) {
	t.Parallel()
	for i := range 3 {
		p := systemPrompt(i, 100)
		if !strings.HasPrefix(p, fmt.Sprintf("Session %d. You are a helpful assistant. help help", i)) {
			t.Errorf("system prompt %d starts %.50q", i, p)
		}
		if w := strings.Fields(p); len(w) != 100 || w[99] != "help" || strings.Contains(p, "  ") || strings.HasSuffix(p, " ") {
			t.Errorf("system prompt %d: %d words, want 100 single-spaced", i, len(w))
		}
		h := historyText(i, 200)
		if !strings.HasPrefix(h, fmt.Sprintf("[Session %d history] hi hi", i)) {
			t.Errorf("history %d starts %.50q", i, h)
		}
		if w := strings.Fields(h); len(w) != 200 || strings.Count(h, "hi") != 197+1 { // +1: "history"
			t.Errorf("history %d: %d words", i, len(w))
		}
	}
	// Shorter than the header: the header alone, with its trailing space.
	if got := systemPrompt(7, 3); got != "Session 7. You are a helpful assistant. " {
		t.Errorf("short system prompt %q", got)
	}
	if got := historyText(7, 1); got != "[Session 7 history] " {
		t.Errorf("short history %q", got)
	}
	if got := queryText(10); strings.Count(got, "tell") != 10 || len(strings.Fields(got)) != 10 {
		t.Errorf("query %q, want 10 \"tell\"", got)
	}
	if got := queryText(1); got != "tell" {
		t.Errorf("single-word query %q", got)
	}
}

func TestSessionCreation(t *testing.T) {
	t.Parallel()
	w := newDirect(t, directOptions(), sessionsCommon(5))
	if len(w.sessions) != 5 {
		t.Fatalf("%d sessions, want 5", len(w.sessions))
	}
	for i, s := range w.sessions {
		if s.id != i || s.inFlight || len(s.exchanges) != 0 {
			t.Errorf("session %d: id %d, busy %v, %d rounds; want ready and empty", i, s.id, s.inFlight, len(s.exchanges))
		}
	}
}

func TestWarmup(t *testing.T) {
	t.Parallel()
	lg, logs := sdktest.CaptureLogs()
	tr := sdktest.Run(t, Definition, sdktest.Options{
		Options: with("duration", 0.25),                                // 3 measured requests
		Common:  workload.Common{KVCacheVolumeGB: 1, TokensPerGB: 100}, // 2 sessions
		Logger:  lg,
	})
	warm := tr.Warmup()
	if got := sdktest.IDs(warm); !cmp.Equal(got, []string{"warmup_s0", "warmup_s1"}) {
		t.Fatalf("warmup ids %v", got)
	}
	for i, s := range warm {
		want := []sdktest.Message{
			{Role: "system", Content: systemPrompt(i, 20)},
			{Role: "user", Content: historyText(i, 30)},
			{Role: "assistant", Content: understood},
			{Role: "user", Content: "Hello"},
		}
		if d := cmp.Diff(want, s.Messages); d != "" {
			t.Errorf("warmup %d (-want +got):\n%s", i, d)
		}
		if s.MaxTokens != 1 || s.Tags["session"] != strconv.Itoa(i) {
			t.Errorf("warmup %d: max_tokens %d, tags %v", i, s.MaxTokens, s.Tags)
		}
		// One at a time: each after the previous one finished.
		if i > 0 && s.Offset < warm[i-1].Offset+time.Millisecond {
			t.Errorf("warmup %d sent at %v, before warmup %d finished", i, s.Offset, i-1)
		}
	}
	// Warmup answers are not recorded: every session's first round is bare.
	for _, s := range tr.Measured()[:2] {
		if len(s.Messages) != 4 || s.Tags["round"] != "0" {
			t.Errorf("%s carries %d messages (round %s), want 4 (round 0)", s.ID, len(s.Messages), s.Tags["round"])
		}
	}
	var info []string
	for _, l := range logs.Lines(t) {
		if l.Level == "info" {
			info = append(info, l.Message)
		}
	}
	if d := cmp.Diff([]string{"Warmup 1/2", "Warmup 2/2", "Warmup complete: 2 sessions"}, info); d != "" {
		t.Errorf("info logs (-want +got):\n%s", d)
	}
}

func TestWarmupFailureLogged(t *testing.T) {
	t.Parallel()
	lg, logs := sdktest.CaptureLogs()
	sdktest.Run(t, Definition, sdktest.Options{
		Options: with("duration", 0.1), Common: threeSessions, Logger: lg,
		Engine: func(s sdktest.Sent) sdktest.Reply {
			if s.ID == "warmup_s1" {
				return sdktest.Reply{Error: "connection refused", Latency: time.Millisecond}
			}
			return sdktest.DefaultEngine(s)
		},
	})
	var warns []string
	for _, l := range logs.Lines(t) {
		if l.Level == "warn" {
			warns = append(warns, l.Message)
		}
	}
	if d := cmp.Diff([]string{"Warmup session 1 failed: connection refused"}, warns); d != "" {
		t.Errorf("warnings (-want +got):\n%s", d)
	}
}

func TestStep(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	step := func(w *multiRoundChat, at time.Duration, inFlight int) string {
		out, err := w.Step(ctx, workload.StepInput{Phase: workload.Measure, Offset: at, InFlight: inFlight})
		if err != nil {
			t.Fatal(err)
		}
		return out.String()
	}

	// Dispatches and returns the next due time, 1 × 0.1 s.
	w := newDirect(t, directOptions(), sessionsCommon(2))
	if got := step(w, 0, 0); got != "send [s0_r0], then wake at 100ms" || w.next != 1 {
		t.Errorf("first step: %q, index %d", got, w.next)
	}
	if !w.sessions[0].inFlight {
		t.Error("session 0 not marked busy")
	}

	// A busy session holds the queue: nothing sent, the index stays.
	w = newDirect(t, directOptions(), sessionsCommon(1))
	w.sessions[0].inFlight = true
	w.next = 5 // due at 0.5 s
	if got := step(w, 500*time.Millisecond, 1); got != "send [], then wait for a finish or 5s" || w.next != 5 {
		t.Errorf("busy session: %q, index %d", got, w.next)
	}

	// Past the duration and idle: done.
	o := directOptions()
	o.Duration = 1
	w = newDirect(t, o, sessionsCommon(3))
	if got := step(w, 2*time.Second, 0); got != "send [], then done" {
		t.Errorf("past duration: %q", got)
	}

	// Past the duration with a request in flight: done too; the host
	// awaits it and delivers its answer.
	o.QPS, o.Duration = 100, 0.01
	w = newDirect(t, o, sessionsCommon(1))
	if got := step(w, 0, 0); got != "send [s0_r0], then wake at 10ms" {
		t.Errorf("first step: %q", got)
	}
	if got := step(w, time.Second, 1); got != "send [], then done" {
		t.Errorf("past duration with one pending: %q", got)
	}

	// Behind schedule: everything due goes out at once, in order.
	w = newDirect(t, directOptions(), sessionsCommon(3))
	if got := step(w, 350*time.Millisecond, 0); got != "send [s0_r0 s1_r1 s2_r2], then wait for a finish or 5s" {
		t.Errorf("catching up: %q", got)
	}
	// The next request is due after the duration: wake at the duration.
	o = directOptions()
	o.QPS, o.Duration = 0.3, 5
	w = newDirect(t, o, sessionsCommon(3))
	step(w, 0, 0)
	step(w, 3334*time.Millisecond, 1)
	if got := step(w, 3334*time.Millisecond, 2); got != "send [], then wake at 5s" {
		t.Errorf("next due after the duration: %q", got)
	}
}

func TestOnFinished(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newDirect(t, directOptions(), sessionsCommon(2))
	if _, err := w.Step(ctx, workload.StepInput{Phase: workload.Measure}); err != nil {
		t.Fatal(err)
	}
	err := w.OnFinished(ctx, []workload.Result{
		{ID: "warmup_s0", Phase: workload.Warmup, Success: true, Text: "warm"},
		{ID: "unknown_id", Phase: workload.Measure, Success: true, Text: "text"},
		{ID: "s0_r0", Phase: workload.Measure, Success: true, Text: "4"},
		{ID: "s0_r0", Phase: workload.Measure, Success: true, Text: "again"}, // already recorded
	})
	if err != nil {
		t.Fatal(err)
	}
	s := w.sessions[0]
	if s.inFlight || len(s.exchanges) != 1 {
		t.Fatalf("session 0: busy %v, %d rounds; want ready with 1", s.inFlight, len(s.exchanges))
	}
	if q, _ := w.content.Lookup(s.exchanges[0].query.Ref); q != queryText(10) {
		t.Errorf("recorded query %q", q)
	}
	if a, _ := w.content.Lookup(s.exchanges[0].answer.Ref); a != "4" {
		t.Errorf("recorded answer %q, want \"4\"", a)
	}
	if len(w.sessions[1].exchanges) != 0 {
		t.Error("session 1 got an answer")
	}
}

// TestDispatchFollowsSchedule: on the virtual clock, with answers faster
// than a session's turn comes round, request k is sent exactly at k/qps,
// stamped with that due time, round-robin over the sessions.
func TestDispatchFollowsSchedule(t *testing.T) {
	t.Parallel()
	tr := sdktest.Run(t, Definition, sdktest.Options{
		Options: with("qps", 20.0, "duration", 3.0),
		Common:  threeSessions,
		Engine:  sdktest.FixedEngine(120 * time.Millisecond), // < 3 × 50 ms, a session's period
	})
	m := tr.Measured()
	if len(m) != 60 || tr.Planned != 60 {
		t.Fatalf("%d measured, planned %d; want 60", len(m), tr.Planned)
	}
	for k, s := range m {
		due := time.Duration(k) * 50 * time.Millisecond
		if s.ID != fmt.Sprintf("s%d_r%d", k%3, k) || s.Offset != due || s.Scheduled != due {
			t.Errorf("request %d: %s sent at %v, scheduled %v; want s%d_r%d at %v", k, s.ID, s.Offset, s.Scheduled, k%3, k, due)
		}
		if s.Tags["session"] != strconv.Itoa(k%3) || s.Tags["round"] != strconv.Itoa(k/3) || s.MaxTokens != 5 {
			t.Errorf("request %d: tags %v, max_tokens %d", k, s.Tags, s.MaxTokens)
		}
	}
	// The phase lasts the duration, then awaits the last answer.
	if want := 2950*time.Millisecond + 120*time.Millisecond; tr.MeasureElapsed != want {
		t.Errorf("measured phase took %v, want %v", tr.MeasureElapsed, want)
	}
}

// TestNoDriftAcrossSteps: a qps whose interval is not a whole number of
// nanoseconds still puts request k at round(k/qps), not at k rounded steps.
func TestNoDriftAcrossSteps(t *testing.T) {
	t.Parallel()
	tr := sdktest.Run(t, Definition, sdktest.Options{
		Options: with("qps", 3.0, "duration", 100.0, "output-length", 1),
		Common:  threeSessions,
	})
	m := tr.Measured()
	if len(m) != 300 {
		t.Fatalf("%d measured, want 300", len(m))
	}
	for k, s := range m {
		due := time.Duration(math.Round(float64(k) / 3 * 1e9))
		if s.Offset != due || s.Scheduled != due {
			t.Fatalf("request %d sent at %v, scheduled %v; want %v", k, s.Offset, s.Scheduled, due)
		}
	}
}

// TestBusySessionHoldsQueue: a slow session delays its own turn and every
// turn after it (no skipping); late requests keep their due time, so the
// lag is visible, and go out back to back when the session is answered.
func TestBusySessionHoldsQueue(t *testing.T) {
	t.Parallel()
	// 2 sessions, a turn every 100 ms; session 0 takes 350 ms to answer,
	// session 1 10 ms.
	tr := sdktest.Run(t, Definition, sdktest.Options{
		Options: with("qps", 10.0, "duration", 1.0),
		Common:  workload.Common{KVCacheVolumeGB: 1, TokensPerGB: 100},
		Engine: func(s sdktest.Sent) sdktest.Reply {
			d := 10 * time.Millisecond
			if s.Phase == "measure" && s.Tags["session"] == "0" {
				d = 350 * time.Millisecond
			}
			return sdktest.Reply{Success: true, Text: "a " + s.ID, TTFT: d / 2, Latency: d}
		},
	})
	ms := time.Millisecond
	type sent struct {
		ID            string
		Offset, Sched time.Duration
	}
	var got []sent
	for _, s := range tr.Measured() {
		got = append(got, sent{s.ID, s.Offset, s.Scheduled})
	}
	want := []sent{
		{"s0_r0", 0, 0}, {"s1_r1", 100 * ms, 100 * ms},
		{"s0_r2", 350 * ms, 200 * ms}, {"s1_r3", 350 * ms, 300 * ms},
		{"s0_r4", 700 * ms, 400 * ms}, {"s1_r5", 700 * ms, 500 * ms},
		// s0_r6 would be due at 600 ms but s0 is busy until 1050 ms, past the duration.
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("sent (-want +got):\n%s", d)
	}
}

// TestLaterRoundsCarryAnswers: every request of a session carries all of
// the session's earlier rounds, each with the answer the engine gave; a
// failed round is carried with an empty answer and the session goes on.
func TestLaterRoundsCarryAnswers(t *testing.T) {
	t.Parallel()
	tr := sdktest.Run(t, Definition, sdktest.Options{
		Options: with("qps", 20.0, "duration", 1.5),
		Common:  threeSessions,
		Engine: func(s sdktest.Sent) sdktest.Reply {
			if s.ID == "s1_r4" {
				return sdktest.Reply{Error: "HTTP 500", Latency: 5 * time.Millisecond}
			}
			return sdktest.FixedEngine(20 * time.Millisecond)(s)
		},
	})
	m := tr.Measured()
	if len(m) != 30 {
		t.Fatalf("%d measured, want 30", len(m))
	}
	answers := map[string]string{}
	for _, r := range tr.Results {
		if r.Phase == workload.Measure {
			answers[r.ID] = r.Text
		}
	}
	query := queryText(3)
	earlier := map[string][]string{} // session → its earlier request ids
	for _, s := range m {
		sid := s.Tags["session"]
		i, err := strconv.Atoi(sid)
		if err != nil {
			t.Fatalf("%s: session tag %q", s.ID, sid)
		}
		want := []sdktest.Message{
			{Role: "system", Content: systemPrompt(i, 20)},
			{Role: "user", Content: historyText(i, 30)},
			{Role: "assistant", Content: understood},
		}
		for _, id := range earlier[sid] {
			want = append(want, sdktest.Message{Role: "user", Content: query}, sdktest.Message{Role: "assistant", Content: answers[id]})
		}
		want = append(want, sdktest.Message{Role: "user", Content: query})
		if d := cmp.Diff(want, s.Messages); d != "" {
			t.Fatalf("%s (-want +got):\n%s", s.ID, d)
		}
		if s.Tags["round"] != strconv.Itoa(len(earlier[sid])) {
			t.Errorf("%s: round %s, want %d", s.ID, s.Tags["round"], len(earlier[sid]))
		}
		earlier[sid] = append(earlier[sid], s.ID)
	}
	last := m[len(m)-1] // s2_r29, round 9
	if last.ID != "s2_r29" || len(last.Messages) != 4+2*9 || last.Messages[len(last.Messages)-2].Content != "answer to s2_r26" {
		t.Errorf("last request %s has %d messages", last.ID, len(last.Messages))
	}
	// Session 1's round after the failure carries an empty answer.
	for _, s := range m {
		if s.ID == "s1_r7" {
			if got := s.Messages[len(s.Messages)-2]; got.Role != "assistant" || got.Content != "" {
				t.Errorf("after the failed s1_r4, s1_r7 carries %+v", got)
			}
		}
	}
}

// TestAnswersCrossOnce: an answer crosses back to the host once, as
// registered content; later rounds reference it.
func TestAnswersCrossOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	reg := workload.NewRegistry()
	o := directOptions()
	o.SharedPromptLength, o.ChatHistoryLength = 5, 5
	wl, err := Definition.New(o, workload.Env{Common: workload.Common{KVCacheVolumeGB: 1, TokensPerGB: 10}, Logger: zerolog.Nop(), Content: reg})
	if err != nil {
		t.Fatal(err)
	}
	w := wl.(*multiRoundChat)
	var registered []string
	drain := func() {
		for _, c := range reg.Drain() {
			registered = append(registered, c.ID)
		}
	}
	for r := range 3 {
		out, err := w.Step(ctx, workload.StepInput{Phase: workload.Measure, Offset: time.Duration(r) * 100 * time.Millisecond})
		if err != nil || len(out.Requests) != 1 {
			t.Fatalf("round %d: %v %v", r, out, err)
		}
		drain()
		req := out.Requests[0]
		if r == 2 {
			// system, history, ack, (q, a) × 2, q: the answers by reference.
			if got := req.Messages[4].Content[0].Ref; got != "s0_r0.answer" {
				t.Errorf("round 2 carries answer %+v", req.Messages[4].Content)
			}
		}
		if err := w.OnFinished(ctx, []workload.Result{{ID: req.ID, Phase: workload.Measure, Success: true, Text: "answer " + req.ID}}); err != nil {
			t.Fatal(err)
		}
	}
	drain()
	want := []string{"s0.system", "s0.history", "query", "s0_r0.answer", "s0_r1.answer", "s0_r2.answer"}
	if d := cmp.Diff(want, registered); d != "" {
		t.Errorf("registered (-want +got):\n%s", d)
	}
}

func TestSeedDoesNotChangeRequests(t *testing.T) {
	t.Parallel()
	// The original's multi-round-chat draws no random numbers: any seed
	// gives the same request stream.
	a := sdktest.Run(t, Definition, sdktest.Options{Options: small(), Common: threeSessions})
	c := threeSessions
	c.Seed = 7
	b := sdktest.Run(t, Definition, sdktest.Options{Options: small(), Common: c})
	if !bytes.Equal(a.JSONL(), b.JSONL()) {
		t.Error("seed 7 changed the request stream")
	}
}

func TestFullRun(t *testing.T) {
	t.Parallel()
	tr := sdktest.Run(t, Definition, sdktest.Options{Options: with("qps", 10.0, "duration", 0.5), Common: workload.Common{KVCacheVolumeGB: 1, TokensPerGB: 100}})
	if len(tr.Warmup()) != 2 || len(tr.Measured()) != 5 {
		t.Errorf("warmup %d, measured %d; want 2, 5", len(tr.Warmup()), len(tr.Measured()))
	}
	for _, r := range tr.Results {
		if !r.Success {
			t.Errorf("%s failed: %s", r.ID, r.Error)
		}
	}
}

// TestGolden pins the full request stream of a small run: 3 sessions,
// 4 requests per second for 2 s, so every session reaches round 2.
func TestGolden(t *testing.T) {
	t.Parallel()
	tr := sdktest.Run(t, Definition, sdktest.Options{
		Options: map[string]any{"shared-prompt-length": 12, "chat-history-length": 8, "user-input-length": 3,
			"output-length": 5, "qps": 4.0, "duration": 2.0},
		Common: workload.Common{KVCacheVolumeGB: 1, TokensPerGB: 60},
	})
	sdktest.Golden(t, filepath.Join("testdata", "transcript.golden.jsonl"), tr.JSONL(), *update)
	// Over gRPC the stream is the same.
	g := sdktest.RunGRPC(t, Definition, sdktest.Options{
		Options: map[string]any{"shared-prompt-length": 12, "chat-history-length": 8, "user-input-length": 3,
			"output-length": 5, "qps": 4.0, "duration": 2.0},
		Common: workload.Common{KVCacheVolumeGB: 1, TokensPerGB: 60},
	})
	if !bytes.Equal(tr.JSONL(), g.JSONL()) {
		t.Error("the gRPC run sent a different stream")
	}
}

// BenchmarkRequest is the plugin's cost per measured request (Step plus
// recording its answer) with the default prompt and history lengths and 50
// sessions, over a run long enough for conversations to grow.
func BenchmarkRequest(b *testing.B) {
	ctx := context.Background()
	wl, err := Definition.New(Definition.Defaults, workload.Env{
		Common: workload.Common{KVCacheVolumeGB: 1, TokensPerGB: 50 * 12000}, Logger: zerolog.Nop(), Content: workload.NewRegistry(),
	})
	if err != nil {
		b.Fatal(err)
	}
	w := wl.(*multiRoundChat)
	w.o.Duration, w.duration = math.MaxFloat64, time.Duration(math.MaxInt64)
	b.ReportAllocs()
	for b.Loop() {
		out, err := w.Step(ctx, workload.StepInput{Phase: workload.Measure, Offset: w.due(w.next)})
		if err != nil || len(out.Requests) != 1 {
			b.Fatalf("%v %v", out, err)
		}
		w.content.Drain()
		id := out.Requests[0].ID
		if err := w.OnFinished(ctx, []workload.Result{{ID: id, Phase: workload.Measure, Success: true, Text: "answer " + id}}); err != nil {
			b.Fatal(err)
		}
	}
}

// With max-rounds, a session starts a new conversation after that many
// answered rounds and its answers are released: the next request carries
// only the system prompt and the pre-filled history, and no request ever
// references a released answer (sdktest would fail the run if one did).
func TestMaxRoundsStartsNewConversations(t *testing.T) {
	t.Parallel()
	tr := sdktest.Run(t, Definition, sdktest.Options{
		Options: map[string]any{"shared-prompt-length": 10, "chat-history-length": 10, "user-input-length": 2,
			"output-length": 3, "qps": 20.0, "duration": 2.0, "max-rounds": 3},
		Common: workload.Common{KVCacheVolumeGB: 1, TokensPerGB: 40},
	})
	// 1 GB x 40 tokens / 20 tokens per session = 2 sessions, 40 requests
	rounds := map[string][]int{}
	for _, s := range tr.Measured() {
		// system, history, acknowledgement, 2 messages per answered round, query
		answered := (len(s.Messages) - 4) / 2
		rounds[s.Tags["session"]] = append(rounds[s.Tags["session"]], answered)
		if got := s.Tags["round"]; got != strconv.Itoa(answered) {
			t.Errorf("%s: round tag %s, %d rounds in its messages", s.ID, got, answered)
		}
	}
	for sid, got := range rounds {
		for i, n := range got {
			if n != i%3 {
				t.Fatalf("session %s: answered rounds per request %v, want 0 1 2 0 1 2 …", sid, got)
			}
		}
	}
	if len(rounds) != 2 || len(tr.Measured()) < 30 {
		t.Errorf("%d sessions, %d requests", len(rounds), len(tr.Measured()))
	}
}

// TestExpectedReuse: on a host that takes expected reuse, a session's
// first measured round expects its system prompt and history (what its
// warmup request carried), a later one its last round's whole prompt less
// the generation prompt; a failed round falls back to the shared part; a
// host without the capability gets no declaration.
func TestExpectedReuse(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	o := directOptions()
	o.SharedPromptLength, o.ChatHistoryLength = 50, 200
	type decl struct {
		Has    bool
		Tokens int
	}
	for _, caps := range [][]string{{protocol.ExpectedReuse}, nil} {
		wl, err := Definition.New(o, workload.Env{Common: workload.Common{KVCacheVolumeGB: 1, TokensPerGB: 300},
			Host: protocol.HostInfo{Capabilities: caps}, Logger: zerolog.Nop(), Content: workload.NewRegistry()})
		if err != nil {
			t.Fatal(err)
		}
		w := wl.(*multiRoundChat)
		var got []decl
		for r, res := range []workload.Result{
			{Success: true, InputTokens: 400}, {Success: false}, {Success: true, InputTokens: 900}, {Success: true, InputTokens: 1000},
		} {
			out, err := w.Step(ctx, workload.StepInput{Phase: workload.Measure, Offset: time.Duration(r) * 100 * time.Millisecond})
			if err != nil || len(out.Requests) != 1 {
				t.Fatalf("round %d: %v %v", r, out, err)
			}
			req := out.Requests[0]
			got = append(got, decl{req.HasExpectedCached, req.ExpectedCachedTokens})
			res.ID, res.Phase, res.Text = req.ID, workload.Measure, "answer"
			if err := w.OnFinished(ctx, []workload.Result{res}); err != nil {
				t.Fatal(err)
			}
		}
		want := []decl{{true, 250}, {true, 400 - generationSlack}, {true, 250}, {true, 900 - generationSlack}}
		if caps == nil {
			want = []decl{{}, {}, {}, {}}
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("host capabilities %v: declarations (-want +got):\n%s", caps, d)
		}
	}
}
