package workload

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/rs/zerolog"

	"github.com/lmbench/lmbench/sdk/protocol"
	"github.com/lmbench/lmbench/sdk/wire"
)

// scripted runs one func per workload Step and records what OnFinished got.
type scripted struct {
	steps    []func(in StepInput) StepOutput
	calls    int
	finished []string
}

func (s *scripted) Step(_ context.Context, in StepInput) (StepOutput, error) {
	if s.calls == len(s.steps) {
		return StepOutput{}, fmt.Errorf("step %d: the script has only %d", s.calls+1, len(s.steps))
	}
	s.calls++
	return s.steps[s.calls-1](in), nil
}

func (s *scripted) OnFinished(_ context.Context, rs []Result) error {
	for _, r := range rs {
		s.finished = append(s.finished, r.ID)
	}
	return nil
}

type noOptions struct{}

var newestHost = protocol.HostInfo{Version: "test", ProtocolMinor: protocol.Minor, Capabilities: protocol.HostCapabilities}

// scriptServer is a configured server of w, its Step answers split above limit bytes.
func scriptServer(t *testing.T, limit int, w func(env Env) *scripted) *server[noOptions] {
	t.Helper()
	def := Definition[noOptions]{
		Name: "split", Prefix: "sp", Summary: "splits",
		New: func(_ noOptions, env Env) (Workload, error) { return w(env), nil },
	}
	srv := NewServer(def, zerolog.Nop()).(*server[noOptions])
	srv.batchBytes = limit
	ctx := context.Background()
	if _, err := srv.Describe(ctx, newestHost); err != nil {
		t.Fatal(err)
	}
	if cr, err := srv.Configure(ctx, protocol.WorkloadConfig{}); err != nil || len(cr.Errors) > 0 {
		t.Fatalf("Configure: %v %v", cr.Errors, err)
	}
	return srv
}

func mustStep(t *testing.T, srv *server[noOptions], req protocol.StepRequest) protocol.StepResponse {
	t.Helper()
	resp, err := srv.Step(context.Background(), req)
	if err != nil {
		t.Fatalf("Step: %v", err)
	}
	return resp
}

func answerSize(r protocol.StepResponse) (size, items int) {
	for _, c := range r.Contents {
		size += contentSize(c)
	}
	for i := range r.Requests {
		size += requestSize(&r.Requests[i])
	}
	return size, len(r.Contents) + len(r.Requests)
}

func TestNewServerBatchBytes(t *testing.T) {
	t.Parallel()
	srv := NewServer(Definition[noOptions]{Name: "x"}, zerolog.Nop()).(*server[noOptions])
	if srv.batchBytes != wire.BatchBytes {
		t.Errorf("batchBytes = %d, want wire.BatchBytes (%d)", srv.batchBytes, wire.BatchBytes)
	}
}

// An answer larger than the batch size goes out over several Steps: every
// content and request arrives, in order, content first; each answer but
// the last asks to be stepped again at the offset of the Step that made
// the answer; the last carries the workload's own next action and the
// released ids. The workload is not stepped while the rest is queued, but
// results carried meanwhile still reach it.
func TestStepSplitsALargeAnswer(t *testing.T) {
	t.Parallel()
	const limit = 300
	var (
		wantContents []protocol.Content
		wantRequests []protocol.Request
	)
	var w *scripted
	srv := scriptServer(t, limit, func(env Env) *scripted {
		w = &scripted{steps: []func(StepInput) StepOutput{
			func(StepInput) StepOutput {
				env.Content.Register("old", "shipped in the first answer")
				return Send()
			},
			func(StepInput) StepOutput {
				env.Content.Release("old")
				var reqs []Request
				for i := range 6 {
					id := fmt.Sprintf("c%d", i)
					text := strings.Repeat(string(rune('a'+i)), 100)
					wantContents = append(wantContents, protocol.Content{ID: id, Text: text})
					doc := env.Content.Register(id, text)
					r := Chat(fmt.Sprintf("q%d", i), User(doc, Text(strings.Repeat("?", 80)))).Tag("doc", id)
					reqs = append(reqs, r)
					wantRequests = append(wantRequests, protocol.Request(r))
				}
				return Send(reqs...).WakeAt(9 * time.Second)
			},
			func(StepInput) StepOutput { return Done() },
		}}
		return w
	})

	mustStep(t, srv, protocol.StepRequest{Phase: protocol.Measure})
	const offset = 2 * time.Second
	var chunks []protocol.StepResponse
	for len(chunks) < 100 {
		req := protocol.StepRequest{Phase: protocol.Measure, Offset: offset + time.Duration(len(chunks))*time.Millisecond}
		if len(chunks) == 1 {
			req.Finished = []protocol.Result{{ID: "q-earlier", Phase: protocol.Measure, Success: true}}
		}
		resp := mustStep(t, srv, req)
		chunks = append(chunks, resp)
		if resp.Next.At == 9*time.Second {
			break
		}
	}
	if len(chunks) < 3 {
		t.Fatalf("the answer came in %d Steps, want it split over at least 3", len(chunks))
	}
	if w.calls != 2 {
		t.Errorf("the workload was stepped %d times while its answer drained, want 2", w.calls)
	}
	if d := cmp.Diff([]string{"q-earlier"}, w.finished); d != "" {
		t.Errorf("results delivered while draining (-want +got):\n%s", d)
	}

	var gotContents []protocol.Content
	var gotRequests []protocol.Request
	sawRequest := false
	for i, c := range chunks {
		if size, items := answerSize(c); size > limit && items > 1 {
			t.Errorf("answer %d: %d bytes in %d items, over the %d limit", i, size, items, limit)
		}
		if sawRequest && len(c.Contents) > 0 {
			t.Errorf("answer %d carries content after an earlier answer carried requests", i)
		}
		sawRequest = sawRequest || len(c.Requests) > 0
		gotContents = append(gotContents, c.Contents...)
		gotRequests = append(gotRequests, c.Requests...)
		last := i == len(chunks)-1
		wantNext := protocol.Next{Kind: protocol.NextWakeAt, At: offset}
		var wantReleased []string
		if last {
			wantNext, wantReleased = protocol.Next{Kind: protocol.NextWakeAt, At: 9 * time.Second}, []string{"old"}
		}
		if d := cmp.Diff(wantNext, c.Next); d != "" {
			t.Errorf("answer %d of %d: next (-want +got):\n%s", i+1, len(chunks), d)
		}
		if d := cmp.Diff(wantReleased, c.Released); d != "" {
			t.Errorf("answer %d of %d: released (-want +got):\n%s", i+1, len(chunks), d)
		}
	}
	if d := cmp.Diff(wantContents, gotContents); d != "" {
		t.Errorf("contents over all answers (-want +got):\n%s", d)
	}
	if d := cmp.Diff(wantRequests, gotRequests); d != "" {
		t.Errorf("requests over all answers (-want +got):\n%s", d)
	}

	// Drained: the next Step is the workload's again.
	if got := mustStep(t, srv, protocol.StepRequest{Phase: protocol.Measure, Offset: 9 * time.Second}); got.Next.Kind != protocol.NextDone {
		t.Errorf("Step after the split answer: next %+v, want the workload's Done", got.Next)
	}
	if w.calls != 3 {
		t.Errorf("workload stepped %d times, want 3", w.calls)
	}
}

// One item larger than the limit travels alone; what follows it starts a
// new answer.
func TestStepSplitsAroundAnOversizedItem(t *testing.T) {
	t.Parallel()
	big := protocol.Content{ID: "big", Text: strings.Repeat("x", 500)}
	small := protocol.Content{ID: "small", Text: "y"}
	srv := scriptServer(t, 200, func(env Env) *scripted {
		return &scripted{steps: []func(StepInput) StepOutput{func(StepInput) StepOutput {
			env.Content.Register(big.ID, big.Text)
			env.Content.Register(small.ID, small.Text)
			return Send(Completion("q", Segment{Ref: "small"})).Done()
		}}}
	})
	first := mustStep(t, srv, protocol.StepRequest{Phase: protocol.Warmup, Offset: time.Second})
	second := mustStep(t, srv, protocol.StepRequest{Phase: protocol.Warmup, Offset: time.Second})
	want := []protocol.StepResponse{
		{Contents: []protocol.Content{big}, Next: protocol.Next{Kind: protocol.NextWakeAt, At: time.Second}},
		{Contents: []protocol.Content{small}, Requests: []protocol.Request{{ID: "q", Completion: true, Prompt: []protocol.Segment{{Ref: "small"}}, MaxTokens: DefaultMaxTokens}},
			Next: protocol.Next{Kind: protocol.NextDone}},
	}
	if d := cmp.Diff(want, []protocol.StepResponse{first, second}, cmpopts.EquateEmpty()); d != "" {
		t.Errorf("answers (-want +got):\n%s", d)
	}
}

// An answer within the limit is not touched.
func TestStepDoesNotSplitASmallAnswer(t *testing.T) {
	t.Parallel()
	srv := scriptServer(t, 1000, func(env Env) *scripted {
		return &scripted{steps: []func(StepInput) StepOutput{func(StepInput) StepOutput {
			return Send(Chat("a", User(env.Content.Register("d", "doc"))), Chat("b", User(Text("hi")))).WaitForFinish()
		}}}
	})
	got := mustStep(t, srv, protocol.StepRequest{Phase: protocol.Measure, Offset: time.Second})
	if len(got.Contents) != 1 || len(got.Requests) != 2 || got.Next.Kind != protocol.NextWaitForFinish {
		t.Errorf("Step = %d contents, %d requests, next %+v; want the whole answer at once", len(got.Contents), len(got.Requests), got.Next)
	}
}
