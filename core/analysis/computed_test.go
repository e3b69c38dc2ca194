package analysis

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/lmbench/lmbench/core/record"
)

// A killed run's summary is judged against the SLO its configuration
// recorded, as lmbench export's and merge's are (one Summarize): the
// goodput counts the requests within the limit.
func TestSummarizeJudgesTheRecordedSLO(t *testing.T) {
	t.Parallel()
	cfg := json.RawMessage(`{"workload":"w","slo":"ttft:20"}`)
	h := record.Run{ID: "killed", Workload: "w", Config: cfg, Started: t0}
	var recs []record.Record
	for i, ms := range []float64{10, 15, 30, 40} {
		submit := t0.Add(time.Duration(i) * 100 * time.Millisecond)
		ttft := time.Duration(ms * float64(time.Millisecond))
		recs = append(recs, record.Record{RunID: h.ID, Workload: "w", Phase: record.Measure, RequestID: fmt.Sprint(i), Success: true,
			TTFT: ttft.Seconds(), Latency: (ttft + 10*time.Millisecond).Seconds(), InputTokens: 10, OutputTokens: 2, Chunks: 2,
			Scheduled: submit, Submit: submit, FirstToken: submit.Add(ttft), Finish: submit.Add(ttft + 10*time.Millisecond), Seq: int64(i + 1)})
	}
	s := Summarize(h, recs)
	var doc struct {
		Run     struct{ Interrupted bool }
		Goodput struct {
			SLO  struct{ TTFT *float64 } `json:"slo_ms"`
			Good *int                    `json:"good_requests"`
		}
	}
	if err := json.Unmarshal(s.JSON, &doc); err != nil {
		t.Fatal(err)
	}
	if !doc.Run.Interrupted || doc.Goodput.SLO.TTFT == nil || *doc.Goodput.SLO.TTFT != 20 || doc.Goodput.Good == nil || *doc.Goodput.Good != 2 {
		t.Errorf("summary: interrupted %v, goodput %+v; want interrupted, the SLO's 20 ms and 2 good requests\n%s", doc.Run.Interrupted, doc.Goodput, s.JSON)
	}
	if s.Total != 4 || s.Successful != 4 || !s.Interrupted {
		t.Errorf("summary line: %+v", s)
	}
}
