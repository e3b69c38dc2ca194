package sdktest_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/lmbench/lmbench/sdk/option"
	"github.com/lmbench/lmbench/sdk/sdktest"
	"github.com/lmbench/lmbench/sdk/workload"
)

type noOptions struct{}

// script is a Workload made of funcs; a nil step ends every phase at once.
type script struct {
	step     func(in workload.StepInput) (workload.StepOutput, error)
	finished func(rs []workload.Result)
}

func (s *script) Step(_ context.Context, in workload.StepInput) (workload.StepOutput, error) {
	if s.step == nil {
		return workload.Done(), nil
	}
	return s.step(in)
}

func (s *script) OnFinished(_ context.Context, rs []workload.Result) error {
	if s.finished != nil {
		s.finished(rs)
	}
	return nil
}

func inline(newFn func(env workload.Env) *script) workload.Definition[noOptions] {
	return workload.Definition[noOptions]{
		Name: "inline", Prefix: "in", Summary: "an inline test workload",
		New: func(_ noOptions, env workload.Env) (workload.Workload, error) { return newFn(env), nil },
	}
}

// measure is a workload that skips WARMUP and runs step in MEASURE.
func measure(step func(in workload.StepInput) workload.StepOutput) workload.Definition[noOptions] {
	return inline(func(workload.Env) *script {
		return &script{step: func(in workload.StepInput) (workload.StepOutput, error) {
			if in.Phase == workload.Warmup {
				return workload.Done(), nil
			}
			return step(in), nil
		}}
	})
}

func req(id string) workload.Request { return workload.Chat(id, workload.User(workload.Text("hi"))) }

// latencies answers each request after the latency given for its id (10ms
// when not listed).
func latencies(by map[string]time.Duration) sdktest.Engine {
	return func(s sdktest.Sent) sdktest.Reply {
		lat, ok := by[s.ID]
		if !ok {
			lat = 10 * time.Millisecond
		}
		return sdktest.Reply{Success: true, TTFT: lat / 2, Latency: lat, OutputTokens: 1}
	}
}

func offsets(sent []sdktest.Sent) []string {
	out := make([]string, len(sent))
	for i, s := range sent {
		out[i] = fmt.Sprintf("%s@%v/%v", s.ID, s.Offset, s.Scheduled)
	}
	return out
}

func TestWakeAt(t *testing.T) {
	t.Parallel()
	wakes := []time.Duration{100 * time.Millisecond, 250 * time.Millisecond, 50 * time.Millisecond, time.Second}
	var steps []time.Duration
	i := 0
	def := measure(func(in workload.StepInput) workload.StepOutput {
		steps = append(steps, in.Offset)
		out := workload.Send(req(fmt.Sprintf("q%d", i)))
		if i == len(wakes) {
			return out.Done()
		}
		i++
		return out.WakeAt(wakes[i-1])
	})
	tr := sdktest.Run(t, def, sdktest.Options{Engine: latencies(nil)})
	// 50ms is already past at 250ms: the step comes at once.
	want := []string{"q0@0s/0s", "q1@100ms/100ms", "q2@250ms/250ms", "q3@250ms/250ms", "q4@1s/1s"}
	if d := cmp.Diff(want, offsets(tr.Measured())); d != "" {
		t.Errorf("sent (-want +got):\n%s", d)
	}
	wantSteps := []time.Duration{0, 100 * time.Millisecond, 250 * time.Millisecond, 250 * time.Millisecond, time.Second}
	if d := cmp.Diff(wantSteps, steps); d != "" {
		t.Errorf("step offsets (-want +got):\n%s", d)
	}
	if got, want := tr.MeasureElapsed, time.Second+10*time.Millisecond; got != want {
		t.Errorf("MeasureElapsed = %v, want %v (the last finish)", got, want)
	}
}

// events logs Step and OnFinished calls in order.
type events []string

func (e *events) step(in workload.StepInput) {
	*e = append(*e, fmt.Sprintf("%s step@%v in_flight=%d", in.Phase, in.Offset, in.InFlight))
}

func (e *events) finished(rs []workload.Result) {
	for _, r := range rs {
		*e = append(*e, fmt.Sprintf("finished %s@%v", r.ID, r.Finish))
	}
}

// logged wraps a step func so every call is logged.
func logged(ev *events, step func(n int, in workload.StepInput) workload.StepOutput) workload.Definition[noOptions] {
	return inline(func(workload.Env) *script {
		n := 0
		return &script{
			step: func(in workload.StepInput) (workload.StepOutput, error) {
				ev.step(in)
				n++
				return step(n, in), nil
			},
			finished: ev.finished,
		}
	})
}

func TestDriverSemantics(t *testing.T) {
	t.Parallel()
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	tests := []struct {
		name   string
		engine map[string]time.Duration
		step   func(n int, in workload.StepInput) workload.StepOutput
		want   []string
	}{
		{
			name:   "wait for finish steps right after each finish, with in_flight",
			engine: map[string]time.Duration{"a": ms(10), "b": ms(20), "c": ms(30)},
			step: func(n int, in workload.StepInput) workload.StepOutput {
				switch {
				case in.Phase == workload.Warmup:
					return workload.Done()
				case n == 2:
					return workload.Send(req("a"), req("b"), req("c")).WaitForFinish()
				case in.InFlight > 0:
					return workload.WaitForFinish()
				}
				return workload.Done()
			},
			want: []string{
				"warmup step@0s in_flight=0",
				"measure step@0s in_flight=0",
				"finished a@10ms", "measure step@10ms in_flight=2",
				"finished b@20ms", "measure step@20ms in_flight=1",
				"finished c@30ms", "measure step@30ms in_flight=0",
			},
		},
		{
			name:   "wait for finish or a deadline, whichever comes first",
			engine: map[string]time.Duration{"slow": ms(100)},
			step: func(n int, in workload.StepInput) workload.StepOutput {
				switch n {
				case 1:
					return workload.Send(req("slow")).WaitForFinishOr(ms(40))
				case 2:
					return workload.WaitForFinishOr(ms(500))
				}
				return workload.Done()
			},
			want: []string{
				"warmup step@0s in_flight=0",
				"warmup step@40ms in_flight=1",
				"finished slow@100ms", "warmup step@100ms in_flight=0",
				"measure step@0s in_flight=0",
			},
		},
		{
			name:   "done waits for in-flight requests; their results come before the next phase",
			engine: map[string]time.Duration{"w0": ms(300), "m0": ms(50), "m1": ms(200)},
			step: func(n int, in workload.StepInput) workload.StepOutput {
				if in.Phase == workload.Warmup {
					return workload.Send(req("w0")).Done()
				}
				return workload.Send(req("m0"), req("m1")).Done()
			},
			want: []string{
				"warmup step@0s in_flight=0",
				"finished w0@300ms",
				"measure step@0s in_flight=0",
				"finished m0@50ms",
				"finished m1@200ms",
			},
		},
		{
			name:   "wake at: finishes before the wake-up are delivered first",
			engine: map[string]time.Duration{"a": ms(5)},
			step: func(n int, in workload.StepInput) workload.StepOutput {
				switch {
				case in.Phase == workload.Warmup:
					return workload.Done()
				case n == 2:
					return workload.Send(req("a")).WakeAt(ms(20))
				}
				return workload.Done()
			},
			want: []string{
				"warmup step@0s in_flight=0",
				"measure step@0s in_flight=0",
				"finished a@5ms",
				"measure step@20ms in_flight=0",
			},
		},
		{
			name: "polling with nothing to send advances a millisecond",
			step: func(n int, in workload.StepInput) workload.StepOutput {
				if in.Phase == workload.Measure || n > 3 {
					return workload.Done()
				}
				return workload.Send()
			},
			want: []string{
				"warmup step@0s in_flight=0", "warmup step@1ms in_flight=0", "warmup step@2ms in_flight=0",
				"warmup step@3ms in_flight=0", "measure step@0s in_flight=0",
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var ev events
			sdktest.Run(t, logged(&ev, tc.step), sdktest.Options{Engine: latencies(tc.engine)})
			if d := cmp.Diff(tc.want, []string(ev)); d != "" {
				t.Errorf("events (-want +got):\n%s", d)
			}
		})
	}
}

func TestPhaseElapsedAndResults(t *testing.T) {
	t.Parallel()
	def := inline(func(workload.Env) *script {
		return &script{step: func(in workload.StepInput) (workload.StepOutput, error) {
			if in.Phase == workload.Warmup {
				return workload.Send(req("w0")).Done(), nil
			}
			return workload.Send(req("m0"), req("m1")).Done(), nil
		}}
	})
	engine := func(s sdktest.Sent) sdktest.Reply {
		if s.ID == "m1" {
			return sdktest.Reply{Error: "HTTP 500", Text: "dropped", Latency: 20 * time.Millisecond}
		}
		return sdktest.Reply{Success: true, Text: "ok " + s.ID, TTFT: 5 * time.Millisecond, Latency: 30 * time.Millisecond, InputTokens: 3, OutputTokens: 2}
	}
	tr := sdktest.Run(t, def, sdktest.Options{Engine: engine})
	if tr.WarmupElapsed != 30*time.Millisecond || tr.MeasureElapsed != 30*time.Millisecond {
		t.Errorf("elapsed = %v, %v; want 30ms each", tr.WarmupElapsed, tr.MeasureElapsed)
	}
	want := []workload.Result{
		{ID: "w0", Phase: workload.Warmup, Success: true, Text: "ok w0", TTFT: 0.005, Latency: 0.03, InputTokens: 3, OutputTokens: 2, Finish: 30 * time.Millisecond},
		{ID: "m1", Phase: workload.Measure, Error: "HTTP 500", TTFT: -1, Latency: 0.02, Finish: 20 * time.Millisecond},
		{ID: "m0", Phase: workload.Measure, Success: true, Text: "ok m0", TTFT: 0.005, Latency: 0.03, InputTokens: 3, OutputTokens: 2, Finish: 30 * time.Millisecond},
	}
	if d := cmp.Diff(want, tr.Results); d != "" {
		t.Errorf("results (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"w0"}, sdktest.IDs(tr.Warmup())); d != "" {
		t.Errorf("Warmup (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"m0", "m1"}, sdktest.IDs(tr.Measured())); d != "" {
		t.Errorf("Measured (-want +got):\n%s", d)
	}
}

func TestDriverErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		def  workload.Definition[noOptions]
		o    sdktest.Options
		want string
	}{
		{
			name: "duplicate id in one step",
			def:  measure(func(workload.StepInput) workload.StepOutput { return workload.Send(req("q"), req("q")).Done() }),
			want: `measure: duplicate request id "q"`,
		},
		{
			name: "duplicate id across steps",
			def: measure(func(in workload.StepInput) workload.StepOutput {
				if in.Offset == 0 {
					return workload.Send(req("q")).WakeAt(time.Second)
				}
				return workload.Send(req("q")).Done()
			}),
			want: `measure: duplicate request id "q"`,
		},
		{
			name: "waiting for a finish with nothing in flight",
			def:  measure(func(workload.StepInput) workload.StepOutput { return workload.WaitForFinish() }),
			want: "measure: workload waits for a finish with nothing in flight (stalled)",
		},
		{
			name: "unregistered content",
			def: measure(func(workload.StepInput) workload.StepOutput {
				return workload.Send(workload.Chat("q", workload.User(workload.Segment{Ref: "nope"}))).Done()
			}),
			want: `request q references unregistered content "nope"`,
		},
		{
			name: "never finishing",
			def:  measure(func(in workload.StepInput) workload.StepOutput { return workload.WakeAt(in.Offset + time.Second) }),
			o:    sdktest.Options{MaxSteps: 10},
			want: "measure: more than 10 steps without finishing the phase",
		},
		{
			name: "step error",
			def: inline(func(workload.Env) *script {
				return &script{step: func(workload.StepInput) (workload.StepOutput, error) {
					return workload.StepOutput{}, errors.New("boom")
				}}
			}),
			want: "warmup: step: rpc error: code = Unknown desc = step: boom",
		},
		{
			name: "unsupported option type",
			def:  measure(func(workload.StepInput) workload.StepOutput { return workload.Done() }),
			o:    sdktest.Options{Options: map[string]any{"x": []int{1}}},
			want: "option x: unsupported Go type []int",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := sdktest.RunE(tc.def, tc.o)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("RunE error = %v, want one containing %q", err, tc.want)
			}
		})
	}
}

type countOptions struct {
	N int `opt:"n" help:"Requests." min:"1"`
}

func TestConfigError(t *testing.T) {
	t.Parallel()
	def := workload.Definition[countOptions]{
		Name: "count", Prefix: "c", Summary: "s", Defaults: countOptions{N: 1},
		New: func(o countOptions, _ workload.Env) (workload.Workload, error) {
			if o.N == 7 {
				return nil, option.Errorf("n", "7 is reserved")
			}
			return &script{}, nil
		},
	}
	for opts, want := range map[int]string{0: "n: must be >= 1, got 0", 7: "n: 7 is reserved"} {
		_, err := sdktest.RunE(def, sdktest.Options{Options: map[string]any{"n": opts}})
		var ce *sdktest.ConfigError
		if !errors.As(err, &ce) || ce.Error() != want {
			t.Errorf("n=%d: error %v, want a *ConfigError %q", opts, err, want)
		}
	}
}

func TestCommon(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   workload.Common
		want workload.Common
	}{
		{"defaults", workload.Common{}, workload.Common{Seed: 42, Model: "test-model", KVCacheVolumeGB: 100, TokensPerGB: 50000}},
		{"given", workload.Common{Seed: 1, Model: "m", KVCacheVolumeGB: 2, TokensPerGB: 3, CompletionsMode: true},
			workload.Common{Seed: 1, Model: "m", KVCacheVolumeGB: 2, TokensPerGB: 3, CompletionsMode: true}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var got workload.Common
			sdktest.Run(t, inline(func(env workload.Env) *script { got = env.Common; return &script{} }), sdktest.Options{Common: tc.in})
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("Common (-want +got):\n%s", d)
			}
		})
	}
}

// rich exercises everything that crosses the wire: registered content
// (from New and from Step), chat and completions, tags, max_tokens,
// schedules, banner, resolved settings and planned requests.
type rich struct {
	script
}

func (*rich) Banner() []workload.Field { return []workload.Field{{Label: "Docs", Value: "2"}} }
func (*rich) Resolved() map[string]any { return map[string]any{"derived": 2.5} }
func (*rich) PlannedRequests() int     { return 3 }
func richDef() workload.Definition[noOptions] {
	return workload.Definition[noOptions]{
		Name: "rich", Prefix: "r", Summary: "everything", TagKeys: []string{"doc"},
		New: func(_ noOptions, env workload.Env) (workload.Workload, error) {
			doc := env.Content.Register("doc0", "Once upon a time.")
			w := &rich{}
			w.step = func(in workload.StepInput) (workload.StepOutput, error) {
				if in.Phase == workload.Warmup {
					return workload.Send(workload.Chat("warm", workload.User(doc)).WithMaxTokens(1)).Done(), nil
				}
				if in.Offset == 0 {
					late := env.Content.Register("doc1", "The end.")
					return workload.Send(
						workload.Chat("q0", workload.System(workload.Text("Be brief.")), workload.User(doc, workload.Text(" Why?"))).Tag("doc", "0"),
						workload.Completion("q1", late, workload.Text(" Next:")).WithMaxTokens(7).Tag("doc", "1").At(time.Millisecond),
					).WakeAt(time.Second), nil
				}
				return workload.Send(workload.Chat("q2", workload.User(workload.Text("bye")))).Done(), nil
			}
			return w, nil
		},
	}
}

func TestRunResolvesContent(t *testing.T) {
	t.Parallel()
	tr := sdktest.Run(t, richDef(), sdktest.Options{})
	want := []sdktest.Sent{
		{Phase: "warmup", ID: "warm", MaxTokens: 1, Messages: []sdktest.Message{{Role: "user", Content: "Once upon a time."}}},
		{Phase: "measure", ID: "q0", MaxTokens: workload.DefaultMaxTokens, Tags: map[string]string{"doc": "0"},
			Messages: []sdktest.Message{{Role: "system", Content: "Be brief."}, {Role: "user", Content: "Once upon a time. Why?"}}},
		{Phase: "measure", ID: "q1", Scheduled: time.Millisecond, MaxTokens: 7, Tags: map[string]string{"doc": "1"},
			Completion: true, Prompt: "The end. Next:"},
		{Phase: "measure", ID: "q2", Offset: time.Second, Scheduled: time.Second, MaxTokens: workload.DefaultMaxTokens,
			Messages: []sdktest.Message{{Role: "user", Content: "bye"}}},
	}
	if d := cmp.Diff(want, tr.Requests); d != "" {
		t.Errorf("requests (-want +got):\n%s", d)
	}
	if d := cmp.Diff(map[string]any{"derived": 2.5}, tr.Resolved); d != "" {
		t.Errorf("resolved (-want +got):\n%s", d)
	}
	if tr.Title != "rich" || tr.Planned != 3 || len(tr.Banner) != 1 {
		t.Errorf("title %q, planned %d, banner %v", tr.Title, tr.Planned, tr.Banner)
	}
}

func TestRunGRPCMatchesRun(t *testing.T) {
	t.Parallel()
	for name, def := range map[string]workload.Definition[noOptions]{
		"rich": richDef(),
		"waits": logged(new(events), func(n int, in workload.StepInput) workload.StepOutput {
			if n == 2 {
				return workload.Send(req("a"), req("b")).WaitForFinishOr(5 * time.Millisecond)
			}
			if in.InFlight > 0 {
				return workload.WaitForFinish()
			}
			return workload.Done()
		}),
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			o := sdktest.Options{Engine: latencies(map[string]time.Duration{"b": 50 * time.Millisecond})}
			inProcess := sdktest.Run(t, def, o)
			viaGRPC := sdktest.RunGRPC(t, def, o)
			if d := cmp.Diff(inProcess, viaGRPC, cmpopts.EquateEmpty()); d != "" {
				t.Errorf("transcript (-Run +RunGRPC):\n%s", d)
			}
		})
	}
}

func TestDefaultEngine(t *testing.T) {
	t.Parallel()
	got := sdktest.DefaultEngine(sdktest.Sent{
		ID: "q", MaxTokens: 10,
		Messages: []sdktest.Message{{Content: strings.Repeat("word ", 1500)}, {Content: "and 500 more"}},
		Prompt:   strings.Repeat("w ", 497),
	})
	want := sdktest.Reply{
		Success: true, Text: "answer to q", TTFT: 3 * time.Millisecond, Latency: 13 * time.Millisecond,
		InputTokens: 2000, OutputTokens: 10,
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("DefaultEngine (-want +got):\n%s", d)
	}
}

func TestGolden(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "sub", "g.jsonl")
	sdktest.Golden(t, path, []byte("a\nb\n"), true)
	sdktest.Golden(t, path, []byte("a\nb\n"), false)
	ft := &fakeT{TB: t}
	func() {
		defer func() { recover() }()
		sdktest.Golden(ft, path, []byte("a\nc\n"), false)
	}()
	if !strings.Contains(ft.msg, "line 2") || !strings.Contains(ft.msg, "want: b") || !strings.Contains(ft.msg, "got:  c") {
		t.Fatalf("message %q", ft.msg)
	}
}

type fakeT struct {
	testing.TB
	msg string
}

func (f *fakeT) Helper() {}
func (f *fakeT) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	panic("fatal")
}
