package kvcache

import (
	"strings"
	"testing"
	"time"

	"github.com/lmbench/lmbench/core/record"
	"github.com/lmbench/lmbench/core/report"
)

// TestTTFTGain: hits are set beside cold requests of similar prompt
// length in the same phase only; hits as slow as cold requests are
// flagged with the figures, hits that are faster are not, and a phase
// whose hits have no cold peers (long-doc-qa's cold warmup, hot measured
// phase) is not compared at all.
func TestTTFTGain(t *testing.T) {
	t.Parallel()
	rec := func(ph record.Phase, input, cached int64, ttft float64) record.Record {
		return record.Record{Phase: ph, Success: true, InputTokens: input, CachedTokens: cached, TTFT: ttft}
	}
	rep := func(n int, r record.Record) []record.Record {
		out := make([]record.Record, n)
		for i := range out {
			out[i] = r
			out[i].TTFT += float64(i) * 0.001
		}
		return out
	}
	cat := func(rs ...[]record.Record) []record.Record {
		var out []record.Record
		for _, r := range rs {
			out = append(out, r...)
		}
		return out
	}
	m, w := record.Measure, record.Warmup
	for _, tt := range []struct {
		name string
		recs []record.Record
		// want is the verdict's start ("" none); nilGain: no comparison.
		want    string
		nilGain bool
		ratio   float64 // want within 0.05, when compared
	}{
		{"hits faster", cat(rep(4, rec(m, 2000, 1984, 0.010)), rep(4, rec(m, 2010, 0, 0.100))), "", false, 0.10},
		{"hits as slow", cat(rep(4, rec(m, 2000, 1984, 0.100)), rep(4, rec(m, 2010, 0, 0.100))),
			"hits without a TTFT gain over cold requests: 4 requests that found 99% of their prompt cached (median) " +
				"had a median TTFT of 101.5 ms, 4 cold requests of similar prompt length in the same phase 101.5 ms (ratio 1.00",
			false, 1},
		{"cold warmup, hot measure", cat(rep(8, rec(w, 2000, 0, 0.020)), rep(8, rec(m, 2000, 1984, 0.150))), "", true, 0},
		{"other lengths only", cat(rep(4, rec(m, 2000, 1984, 0.100)), rep(4, rec(m, 500, 0, 0.025))), "", true, 0},
		{"too few cold", cat(rep(4, rec(m, 2000, 1984, 0.100)), rep(2, rec(m, 2000, 0, 0.100))), "", true, 0},
		{"a one-block hit is not a hit here", cat(rep(4, rec(m, 2000, 16, 0.100)), rep(4, rec(m, 2000, 0, 0.100))), "", true, 0},
		{"failed requests left out", cat(rep(4, rec(m, 2000, 1984, 0.100)), rep(4, record.Record{Phase: m, InputTokens: 2000, TTFT: -1})),
			"", true, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var l report.CacheLedger
			if err := judgeLedger(&l, scanOf(tt.recs...), "long-doc-qa", nil, 16, [2]expectation{}); err != nil {
				t.Fatal(err)
			}
			var got string
			for _, v := range l.Verdicts {
				if strings.HasPrefix(v, "hits without a TTFT gain") {
					got = v
				}
			}
			if tt.want == "" && got != "" || tt.want != "" && !strings.HasPrefix(got, tt.want) {
				t.Errorf("verdict %q, want %q", got, tt.want)
			}
			if (l.TTFTGain == nil) != tt.nilGain {
				t.Fatalf("TTFTGain %+v, want nil %v", l.TTFTGain, tt.nilGain)
			}
			if g := l.TTFTGain; g != nil && (g.Ratio < tt.ratio-0.05 || g.Ratio > tt.ratio+0.05) {
				t.Errorf("ratio %.3f, want %.2f", g.Ratio, tt.ratio)
			}
		})
	}
}

// TestTTFTGainUnderSaturation: hits that were sent into a queue the cold
// requests never met (a trace's hits come after the cold requests that
// warmed their prefix, behind a backlog) are not blamed on the cache: the
// verdict says the comparison cannot tell, with the queue each joined.
// Hits and cold requests that met the same queue are still judged.
func TestTTFTGainUnderSaturation(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	req := func(input, cached int64, sent, ttft float64) record.Record {
		return record.Record{Phase: record.Measure, Success: true, InputTokens: input, CachedTokens: cached, TTFT: ttft,
			Submit: at(sent), FirstToken: at(sent + ttft), Finish: at(sent + ttft + 0.05)}
	}
	var alone, queued []record.Record
	for i := range 4 { // one request at a time: nothing ahead of any
		alone = append(alone, req(2000, 0, float64(2*i), 0.1), req(2000, 1984, float64(2*i+1), 0.1))
		queued = append(queued, req(2000, 0, float64(i), 0.1))
	}
	for i := range 8 { // a backlog of other prompts, sent just before the hits
		queued = append(queued, req(500, 0, 9.9, 0.2+0.1*float64(i)))
	}
	for i := range 4 {
		queued = append(queued, req(2000, 1984, 10+0.001*float64(i), 1+0.1*float64(i)))
	}
	for _, tt := range []struct {
		name string
		recs []record.Record
		want string
	}{
		{"same queue", alone, "hits without a TTFT gain over cold requests: 4 requests"},
		{"hits behind a backlog", queued, "hits and cold requests cannot be compared under saturation: 4 requests that " +
			"found 99% of their prompt cached had a median TTFT of 1150.0 ms, 4 cold requests of similar prompt length " +
			"100.0 ms (ratio 11.50), but the hits were sent with a median of 10 of the run's requests ahead of them " +
			"still waiting for a first token, the cold requests with 0: TTFT counts that wait"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var l report.CacheLedger
			if err := judgeLedger(&l, scanOf(tt.recs...), "trace-replay", nil, 16, [2]expectation{}); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, v := range l.Verdicts {
				if strings.HasPrefix(v, "hits") {
					got = append(got, v)
				}
			}
			if len(got) != 1 || !strings.HasPrefix(got[0], tt.want) {
				t.Errorf("verdicts %q, want one starting %q", got, tt.want)
			}
		})
	}
}
