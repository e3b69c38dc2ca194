package bench

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/lmbench/lmbench/sdk/protocol"
)

// A scoring workload's scores reach the journal (on score lines, read
// back onto the records) and the exporters' records, which wait for
// them; a record the workload never scores reaches the exporters when
// its phase ends. --record-outputs keeps the answers' text; without it
// no record has any.
func TestExecuteScoresAndOutputs(t *testing.T) {
	t.Parallel()
	for _, outputs := range []bool{true, false} {
		seen := 0
		wl := &fakeWorkload{step: func(r protocol.StepRequest) (protocol.StepResponse, error) {
			if r.Phase == protocol.Warmup {
				return protocol.StepResponse{Next: nextDone}, nil
			}
			if seen == 0 && len(r.Finished) == 0 {
				seen = -1
				return protocol.StepResponse{Requests: []protocol.Request{chat("a", nil), chat("b", nil)}, Next: waitForFinish}, nil
			}
			var scores []protocol.Score
			for _, f := range r.Finished {
				seen++
				if f.ID == "a" {
					scores = append(scores, protocol.Score{RequestID: "a", Phase: protocol.Measure, Values: map[string]float64{"exact": 1}})
				}
			}
			next := waitForFinish
			if seen == 1 { // -1 + both
				next = nextDone
			}
			return protocol.StepResponse{Scores: scores, Next: next}, nil
		}}
		exp := &fakeExporter{}
		p, _ := plan(t, wl, &fakeSender{}, exp)
		p.Capabilities, p.WantsText = protocol.Capabilities{protocol.FinishedInStep, protocol.Scores}, true
		p.ScoreKeys, p.RecordOutputs = []string{"exact"}, outputs
		res, err := Execute(context.Background(), p)
		if err != nil || res.Err != nil {
			t.Fatalf("Execute: %v, %v", err, res.Err)
		}
		want := map[string]map[string]float64{"a": {"exact": 1}, "b": nil}
		text := func(id string) string {
			if outputs {
				return "answer to " + id
			}
			return ""
		}
		got, texts := map[string]map[string]float64{}, map[string]string{}
		for _, r := range exp.records {
			got[r.RequestID], texts[r.RequestID] = r.Scores, r.OutputText
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("outputs %v: the exporter's scores (-want +got):\n%s", outputs, d)
		}
		if d := cmp.Diff(map[string]string{"a": text("a"), "b": text("b")}, texts); d != "" {
			t.Errorf("outputs %v: the exporter's texts (-want +got):\n%s", outputs, d)
		}
		c := readJournal(t, p)
		got = map[string]map[string]float64{}
		for _, r := range c.Records {
			got[r.RequestID] = r.Scores
			if r.OutputText != text(r.RequestID) {
				t.Errorf("outputs %v: journal's %s text %q", outputs, r.RequestID, r.OutputText)
			}
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("outputs %v: the journal's scores (-want +got):\n%s", outputs, d)
		}
		if d := cmp.Diff([]string{"exact"}, c.Run.ScoreKeys); d != "" {
			t.Errorf("score keys (-want +got):\n%s", d)
		}
	}
}
