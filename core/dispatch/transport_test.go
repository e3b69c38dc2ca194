package dispatch

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/lmbench/lmbench/core/engine"
	"github.com/lmbench/lmbench/sdk/host/runloop"
	"github.com/lmbench/lmbench/sdk/protocol"
)

// holdSender answers "fast" at once and holds every other request until
// its send is cancelled.
type holdSender struct{}

func (holdSender) Send(ctx context.Context, req engine.Request) engine.Result {
	res := engine.Result{ID: req.ID, Submit: time.Now()}
	if req.ID != "fast" {
		<-ctx.Done()
		res.Finish, res.Error = time.Now(), ctx.Err().Error()
		return res
	}
	res.Success, res.FirstToken, res.LastToken, res.Finish = true, res.Submit, res.Submit, res.Submit
	res.OutputTokens = 1
	return res
}

// --- the transport alone ---

func TestTransportWait(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	snd := holdSender{}
	runCtx, cancelRun := context.WithCancel(ctx)
	tr := New(runCtx, snd, nil)
	defer tr.Close()

	// Nothing finishes: Wait returns at until, not before.
	until := time.Now().Add(20 * time.Millisecond)
	if fs := tr.Wait(ctx, until); len(fs) != 0 || time.Now().Before(until) {
		t.Errorf("Wait returned %v at %v before until", fs, time.Until(until))
	}
	if fs := tr.Wait(ctx, time.Now().Add(-time.Second)); len(fs) != 0 {
		t.Errorf("Wait with until in the past = %v", fs)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if fs := tr.Wait(cancelled, time.Time{}); len(fs) != 0 {
		t.Errorf("Wait with a cancelled context = %v", fs)
	}

	// A finished request comes back once, with what was sent.
	out := &runloop.Outgoing{Phase: protocol.Measure, ID: "fast", Prompt: "p", Completion: true, MaxTokens: 3}
	tr.Send(out)
	bound := func() time.Time { return time.Now().Add(30 * time.Second) } // only against a hang
	fs := tr.Wait(ctx, bound())
	if len(fs) != 1 || fs[0].Req != out || !fs[0].Outcome.Success || fs[0].Measured.Result.ID != "fast" || fs[0].Measured.Header != nil {
		t.Fatalf("Wait = %+v, want fast, a success", fs)
	}
	if more := tr.Poll(); len(more) != 0 {
		t.Errorf("Poll after the only result = %v", more)
	}

	// The run's cancellation is not the sends': only Abandon cancels them.
	cancelRun()
	if tr.ctx.Err() != nil {
		t.Fatal("cancelling the run cancelled the sends")
	}
	slow := &runloop.Outgoing{Phase: protocol.Measure, ID: "slow", Messages: []runloop.Message{{Role: "user", Content: "x"}}, MaxTokens: 1}
	tr.Send(slow)
	tr.Abandon()
	fs = tr.Wait(ctx, bound())
	if len(fs) != 1 || fs[0].Req != slow || fs[0].Outcome.Success || fs[0].Outcome.Error != context.Canceled.Error() {
		t.Fatalf("after Abandon Wait = %+v, want slow, failed by the cancellation", fs)
	}
	if fs[0].Outcome.TTFT != -1 || fs[0].Measured.Result.Error != fs[0].Outcome.Error {
		t.Errorf("abandoned outcome %+v, measured %+v", fs[0].Outcome, fs[0].Measured.Result)
	}
}

// engineRequest and outcome are the two conversions between the loop and
// the engine sender.
func TestEngineRequestAndOutcome(t *testing.T) {
	t.Parallel()
	calls := []protocol.ToolCall{{ID: "call_0", Name: "get_weather", Arguments: `{"city":"Paris"}`}}
	chatOut := &runloop.Outgoing{ID: "q", MaxTokens: 16, Tags: map[string]string{"doc": "1"}, Messages: []runloop.Message{
		{Role: "system", Content: "Be brief."},
		{Role: "assistant", ToolCalls: calls},
		{Role: "tool", Content: `{"temp_c":21}`, ToolCallID: "call_0"},
	}, Tools: []protocol.Tool{{Name: "get_weather", Description: "Weather.", Parameters: `{"type":"object"}`}}}
	want := engine.Request{ID: "q", MaxTokens: 16, Messages: []engine.Message{
		{Role: "system", Content: "Be brief."},
		{Role: "assistant", ToolCalls: []engine.ToolCall{{ID: "call_0", Name: "get_weather", Arguments: `{"city":"Paris"}`}}},
		{Role: "tool", Content: `{"temp_c":21}`, ToolCallID: "call_0"},
	}, Tools: []engine.Tool{{Name: "get_weather", Description: "Weather.", Parameters: `{"type":"object"}`}}}
	if d := cmp.Diff(want, engineRequest(chatOut)); d != "" {
		t.Errorf("chat request (-want +got):\n%s", d)
	}
	compl := &runloop.Outgoing{ID: "c", Prompt: "Once", Completion: true, MaxTokens: 2}
	if d := cmp.Diff(engine.Request{ID: "c", Prompt: "Once", Completion: true, MaxTokens: 2}, engineRequest(compl)); d != "" {
		t.Errorf("completions request (-want +got):\n%s", d)
	}
	exact := &runloop.Outgoing{ID: "e", Prompt: "Once", Completion: true, MaxTokens: 9, IgnoreEOS: true}
	if d := cmp.Diff(engine.Request{ID: "e", Prompt: "Once", Completion: true, MaxTokens: 9, IgnoreEOS: true}, engineRequest(exact)); d != "" {
		t.Errorf("ignore-EOS request (-want +got):\n%s", d)
	}

	t0 := time.Unix(100, 0)
	ok := engine.Result{ID: "q", Success: true, Text: "sunny", ToolCalls: []engine.ToolCall{{ID: "call_1", Name: "f", Arguments: "{}"}},
		Submit: t0, FirstToken: t0.Add(250 * time.Millisecond), LastToken: t0.Add(time.Second), Finish: t0.Add(1500 * time.Millisecond),
		InputTokens: 12, OutputTokens: 5}
	wantOK := runloop.Outcome{Success: true, Text: "sunny", ToolCalls: []protocol.ToolCall{{ID: "call_1", Name: "f", Arguments: "{}"}},
		TTFT: 0.25, Latency: 1.5, InputTokens: 12, OutputTokens: 5, Finish: t0.Add(1500 * time.Millisecond)}
	if d := cmp.Diff(wantOK, outcome(&ok)); d != "" {
		t.Errorf("outcome of a success (-want +got):\n%s", d)
	}
	failed := engine.Result{ID: "q", Error: "HTTP 500: engine on fire", Submit: t0, Finish: t0.Add(time.Second)}
	wantFailed := runloop.Outcome{Error: "HTTP 500: engine on fire", TTFT: -1, Latency: 1, Finish: t0.Add(time.Second)}
	if d := cmp.Diff(wantFailed, outcome(&failed)); d != "" {
		t.Errorf("outcome of a failure (-want +got):\n%s", d)
	}
}

// BenchmarkWaitDeadline measures how late Wait returns for a deadline a
// millisecond ahead, as the loop waits for a request handed over before it
// is due: p50 and p99 lateness, in µs.
func BenchmarkWaitDeadline(b *testing.B) {
	tr := New(context.Background(), nil, nil)
	defer tr.Close()
	late := make([]float64, 0, b.N)
	for b.Loop() {
		until := time.Now().Add(time.Millisecond)
		tr.Wait(context.Background(), until)
		late = append(late, float64(time.Since(until).Microseconds()))
	}
	slices.Sort(late)
	b.ReportMetric(late[len(late)/2], "p50-late-µs")
	b.ReportMetric(late[len(late)*99/100], "p99-late-µs")
}
