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
	// Results travel in the next Step to the newest host's workloads and
	// through OnFinished to an older host's: the workload hears the same.
	hosts := map[string][]string{"newest host": nil, "host of protocol minor 0": {}}
	for _, tc := range tests {
		for host, caps := range hosts {
			t.Run(tc.name+", "+host, func(t *testing.T) {
				t.Parallel()
				var ev events
				sdktest.Run(t, logged(&ev, tc.step), sdktest.Options{Engine: latencies(tc.engine), HostCapabilities: caps})
				if d := cmp.Diff(tc.want, []string(ev)); d != "" {
					t.Errorf("events (-want +got):\n%s", d)
				}
			})
		}
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
	def.WantsResponseText = true
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
	// A workload that does not want response text does not get it.
	def.WantsResponseText = false
	for i := range want {
		want[i].Text = ""
	}
	if d := cmp.Diff(want, sdktest.Run(t, def, sdktest.Options{Engine: engine}).Results); d != "" {
		t.Errorf("results without response text (-want +got):\n%s", d)
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
			want: `measure phase: workload inline returned an invalid request: request "q": id: is not unique: an earlier request of this run has it`,
		},
		{
			name: "duplicate id across steps",
			def: measure(func(in workload.StepInput) workload.StepOutput {
				if in.Offset == 0 {
					return workload.Send(req("q")).WakeAt(time.Second)
				}
				return workload.Send(req("q")).Done()
			}),
			want: `measure phase: workload inline returned an invalid request: request "q": id: is not unique: an earlier request of this run has it`,
		},
		{
			name: "duplicate id across phases",
			def: inline(func(workload.Env) *script {
				return &script{step: func(workload.StepInput) (workload.StepOutput, error) { return workload.Send(req("q")).Done(), nil }}
			}),
			want: `measure phase: workload inline returned an invalid request: request "q": id: is not unique: an earlier request of this run has it`,
		},
		{
			name: "request without id",
			def:  measure(func(workload.StepInput) workload.StepOutput { return workload.Send(req("")).Done() }),
			want: "measure phase: workload inline returned an invalid request: a request without an id: id: is empty",
		},
		{
			name: "chat without messages",
			def:  measure(func(workload.StepInput) workload.StepOutput { return workload.Send(workload.Chat("q")).Done() }),
			want: `measure phase: workload inline returned an invalid request: request "q": messages: a chat request needs at least one message`,
		},
		{
			name: "waiting for a finish with nothing in flight",
			def:  measure(func(workload.StepInput) workload.StepOutput { return workload.WaitForFinish() }),
			want: "measure phase: workload inline: the workload waits for a request to finish, but none is in flight",
		},
		{
			name: "unregistered content",
			def: measure(func(workload.StepInput) workload.StepOutput {
				return workload.Send(workload.Chat("q", workload.User(workload.Segment{Ref: "nope"}))).Done()
			}),
			want: `measure phase: workload inline returned an invalid request: request "q": messages[0].content[0]: references content "nope", which is not registered (or was released)`,
		},
		{
			name: "released content",
			def:  releasing(),
			want: `measure phase: workload inline returned an invalid request: request "m": messages[0].content[0]: references content "doc", which is not registered (or was released)`,
		},
		{
			name: "never finishing",
			def:  measure(func(in workload.StepInput) workload.StepOutput { return workload.WakeAt(in.Offset + time.Second) }),
			o:    sdktest.Options{MaxSteps: 10},
			want: "measure phase: more than 10 steps without finishing the phase",
		},
		{
			name: "step error",
			def: inline(func(workload.Env) *script {
				return &script{step: func(workload.StepInput) (workload.StepOutput, error) {
					return workload.StepOutput{}, errors.New("boom")
				}}
			}),
			want: "warmup phase: step: step: boom",
		},
		{
			name: "tools for a host without tool calls",
			def: measure(func(workload.StepInput) workload.StepOutput {
				return workload.Send(req("q").WithTools(workload.Tool{Name: "f"})).Done()
			}),
			o:    sdktest.Options{HostCapabilities: []string{}},
			want: `measure phase: step: request "q" uses tool calls, which this lmbench (protocol minor 0) does not send: update lmbench`,
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
			if err == nil || err.Error() != tc.want {
				t.Errorf("RunE error = %v, want %q", err, tc.want)
			}
		})
	}
}

// releasing ships content with its warmup request, releases it in the
// first measure Step and references it again in the second.
func releasing() workload.Definition[noOptions] {
	return inline(func(env workload.Env) *script {
		doc := env.Content.Register("doc", "text")
		return &script{step: func(in workload.StepInput) (workload.StepOutput, error) {
			switch {
			case in.Phase == workload.Warmup:
				return workload.Send(workload.Chat("w", workload.User(doc))).Done(), nil
			case in.Offset == 0:
				env.Content.Release("doc")
				return workload.WakeAt(time.Second), nil
			}
			return workload.Send(workload.Chat("m", workload.User(doc))).Done(), nil
		}}
	})
}

// An older host keeps released content (it cannot drop it), so a request
// referencing it again still resolves there.
func TestOlderHostKeepsReleasedContent(t *testing.T) {
	t.Parallel()
	tr, err := sdktest.RunE(releasing(), sdktest.Options{HostCapabilities: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	want := []sdktest.Sent{
		{Phase: "warmup", ID: "w", MaxTokens: workload.DefaultMaxTokens, Messages: []sdktest.Message{{Role: "user", Content: "text"}}},
		{Phase: "measure", ID: "m", Offset: time.Second, Scheduled: time.Second, MaxTokens: workload.DefaultMaxTokens,
			Messages: []sdktest.Message{{Role: "user", Content: "text"}}},
	}
	if d := cmp.Diff(want, tr.Requests); d != "" {
		t.Errorf("requests (-want +got):\n%s", d)
	}
}

// toolsDef sends a function-calling conversation and asks for the answer's text.
func toolsDef(got *[]workload.Result) workload.Definition[noOptions] {
	def := inline(func(workload.Env) *script {
		return &script{
			step: func(in workload.StepInput) (workload.StepOutput, error) {
				if in.Phase == workload.Warmup {
					return workload.Done(), nil
				}
				return workload.Send(workload.Chat("t0",
					workload.User(workload.Text("Weather in Paris?")),
					workload.AssistantCalls([]workload.ToolCall{{ID: "call_0", Name: "get_weather", Arguments: `{"city":"Paris"}`}}),
					workload.ToolReply("call_0", workload.Text(`{"temp_c":21}`)),
				).WithTools(workload.Tool{Name: "get_weather", Description: "Weather.", Parameters: `{"type":"object"}`})).Done(), nil
			},
			finished: func(rs []workload.Result) { *got = append(*got, rs...) },
		}
	})
	def.WantsResponseText = true
	return def
}

func TestToolCalls(t *testing.T) {
	t.Parallel()
	streamed := []workload.ToolCall{{ID: "call_1", Name: "get_weather", Arguments: `{"city":"Lyon"}`}}
	engine := func(s sdktest.Sent) sdktest.Reply {
		return sdktest.Reply{Success: true, TTFT: time.Millisecond, Latency: 2 * time.Millisecond, ToolCalls: streamed}
	}
	var heard []workload.Result
	tr := sdktest.Run(t, toolsDef(&heard), sdktest.Options{Engine: engine})
	want := []sdktest.Sent{{
		Phase: "measure", ID: "t0", MaxTokens: workload.DefaultMaxTokens,
		Messages: []sdktest.Message{
			{Role: "user", Content: "Weather in Paris?"},
			{Role: "assistant", ToolCalls: []workload.ToolCall{{ID: "call_0", Name: "get_weather", Arguments: `{"city":"Paris"}`}}},
			{Role: "tool", Content: `{"temp_c":21}`, ToolCallID: "call_0"},
		},
		Tools: []workload.Tool{{Name: "get_weather", Description: "Weather.", Parameters: `{"type":"object"}`}},
	}}
	if d := cmp.Diff(want, tr.Requests); d != "" {
		t.Errorf("requests (-want +got):\n%s", d)
	}
	wantHeard := []workload.Result{{ID: "t0", Phase: workload.Measure, Success: true, ToolCalls: streamed,
		TTFT: 0.001, Latency: 0.002, Finish: 2 * time.Millisecond}}
	if d := cmp.Diff(wantHeard, heard); d != "" {
		t.Errorf("results the workload heard (-want +got):\n%s", d)
	}
	if d := cmp.Diff(wantHeard, tr.Results); d != "" {
		t.Errorf("transcript results (-want +got):\n%s", d)
	}
}

// An answer larger than wire.BatchBytes is split over several Steps by
// the SDK and put back together by the host: every request arrives whole,
// in order.
func TestLargeAnswer(t *testing.T) {
	t.Parallel()
	const docs, words = 3, 2 << 20 // 4 MiB each: 12 MiB in one answer
	def := inline(func(env workload.Env) *script {
		return &script{step: func(in workload.StepInput) (workload.StepOutput, error) {
			if in.Phase == workload.Warmup {
				return workload.Done(), nil
			}
			var reqs []workload.Request
			for i := range docs {
				doc := env.Content.Register(fmt.Sprint("doc", i), strings.Repeat(fmt.Sprint(i, " "), words))
				reqs = append(reqs, workload.Chat(fmt.Sprint("q", i), workload.User(doc, workload.Text("?"))))
			}
			return workload.Send(reqs...).Done(), nil
		}}
	})
	for name, run := range map[string]func(testing.TB, workload.Definition[noOptions], sdktest.Options) *sdktest.Transcript{
		"in-process": sdktest.Run[noOptions], "over gRPC": sdktest.RunGRPC[noOptions],
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			tr := run(t, def, sdktest.Options{})
			if d := cmp.Diff([]string{"q0", "q1", "q2"}, sdktest.IDs(tr.Measured())); d != "" {
				t.Fatalf("measured (-want +got):\n%s", d)
			}
			for i, s := range tr.Measured() {
				if want := strings.Repeat(fmt.Sprint(i, " "), words) + "?"; s.Messages[0].Content != want {
					t.Errorf("%s: %d bytes of text, want the %d of doc%d and the question", s.ID, len(s.Messages[0].Content), len(want), i)
				}
			}
			// One warmup Step, and the measure answer over several.
			if tr.Steps < 3 {
				t.Errorf("%d Steps, want the 12 MiB answer split over at least two", tr.Steps)
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
		{Phase: "measure", ID: "q1", Offset: time.Millisecond, Scheduled: time.Millisecond, Explicit: true, MaxTokens: 7, Tags: map[string]string{"doc": "1"},
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
		"rich":  richDef(),
		"tools": toolsDef(new([]workload.Result)),
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
	// Both messages say how to declare the flag, which sdktest does not.
	for _, p := range []string{path, filepath.Join(t.TempDir(), "missing.jsonl")} {
		ft := &fakeT{TB: t}
		func() {
			defer func() { recover() }()
			sdktest.Golden(ft, p, []byte("a\nc\n"), false)
		}()
		if !strings.Contains(ft.msg, `var update = flag.Bool("update", false, "rewrite golden files")`) {
			t.Errorf("message %q does not say how to declare -update", ft.msg)
		}
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
