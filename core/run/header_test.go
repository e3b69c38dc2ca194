package run

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	"github.com/rs/zerolog"

	workloadv1 "github.com/lmbench/lmbench/sdk/proto/lmbench/workload/v1"
)

// Config.RequestHeader's headers go out with each request and come back,
// with what was sent, in Finished; without it no header is added.
func TestRequestHeaderReachesSenderAndFinished(t *testing.T) {
	t.Parallel()
	for _, withHook := range []bool{false, true} {
		t.Run(fmt.Sprint("hook=", withHook), func(t *testing.T) {
			t.Parallel()
			compl := &workloadv1.Request{Id: "c", MaxTokens: 7, Body: &workloadv1.Request_Completion{Completion: &workloadv1.Completion{
				Prompt: []*workloadv1.Segment{{Kind: &workloadv1.Segment_Text{Text: "p"}}},
			}}}
			wl := &fakeWorkload{step: func(r *workloadv1.StepRequest) (*workloadv1.StepResponse, error) {
				if r.Phase == workloadv1.Phase_PHASE_WARMUP {
					return &workloadv1.StepResponse{Requests: []*workloadv1.Request{chat("w", "x")}, Next: done()}, nil
				}
				return &workloadv1.StepResponse{Requests: []*workloadv1.Request{chat("a", "x"), compl}, Next: done()}, nil
			}}
			snd, rec := &fakeSender{}, &recorder{}
			cfg := Config{Workload: wl, Sender: snd, Observer: rec, Log: zerolog.Nop()}
			calls := 0
			if withHook {
				cfg.RequestHeader = func() http.Header {
					calls++
					return http.Header{"Traceparent": {fmt.Sprintf("tp-%d", calls)}}
				}
			}
			if _, err := Run(context.Background(), cfg); err != nil {
				t.Fatal(err)
			}
			sent := map[string]string{}
			for _, r := range snd.got {
				sent[r.ID] = r.Header.Get("Traceparent")
				if !withHook && r.Header != nil {
					t.Errorf("%s sent with headers %v although no hook is set", r.ID, r.Header)
				}
			}
			if len(rec.finished) != 3 {
				t.Fatalf("%d finished, want 3", len(rec.finished))
			}
			seen := map[string]bool{}
			for _, f := range rec.finished {
				got := f.Header.Get("Traceparent")
				if got != sent[f.ID] {
					t.Errorf("%s: Finished.Header traceparent %q, sent %q", f.ID, got, sent[f.ID])
				}
				if withHook && (got == "" || seen[got]) {
					t.Errorf("%s: traceparent %q missing or reused", f.ID, got)
				}
				seen[got] = true
				wantMax, wantCompl := 1, false
				if f.ID == "c" {
					wantMax, wantCompl = 7, true
				}
				if f.MaxTokens != wantMax || f.Completion != wantCompl {
					t.Errorf("%s: Finished MaxTokens=%d Completion=%v, want %d %v", f.ID, f.MaxTokens, f.Completion, wantMax, wantCompl)
				}
			}
			if withHook && calls != 3 {
				t.Errorf("hook called %d times, want once per request (3)", calls)
			}
		})
	}
}
