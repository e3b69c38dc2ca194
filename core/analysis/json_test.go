package analysis

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"
)

// TestComparisonsJSON: the JSON carries the table's figures; one not
// defined is null, not 0.
func TestComparisonsJSON(t *testing.T) {
	t.Parallel()
	a := craftRun(t, "w", 42, spread, 1)
	b := craftRun(t, "w", 42, spread, 2)
	// One-token answers in B: no TPOT.
	for i := range b.Records {
		b.Records[i].OutputTokens = 1
	}
	runs := []*Run{a, b}
	comps := CompareAll(runs, Options{Resamples: MinResamples})
	var buf bytes.Buffer
	if err := WriteComparisonsJSON(&buf, runs, comps, TextOptions{Pairs: true}); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Comparisons []struct {
			Resamples int `json:"resamples"`
			Metrics   []struct {
				Key    string   `json:"key"`
				Ratio  *float64 `json:"ratio"`
				Lo     *float64 `json:"ci_low"`
				Beyond bool     `json:"beyond_noise"`
			} `json:"metrics"`
			Pairing *struct {
				Paired   int      `json:"paired"`
				Median   *float64 `json:"ttft_ratio_median"`
				Requests []struct {
					ID    string   `json:"request_id"`
					Ratio *float64 `json:"ratio"`
				} `json:"requests"`
			} `json:"pairing"`
		} `json:"comparisons"`
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatalf("%v\n%s", err, buf.String())
	}
	c := doc.Comparisons[0]
	if c.Resamples != MinResamples {
		t.Errorf("resamples %d, want %d", c.Resamples, MinResamples)
	}
	for _, m := range c.Metrics {
		switch m.Key {
		case "tpot_mean", "tpot_p99":
			if m.Ratio != nil || m.Lo != nil || m.Beyond {
				t.Errorf("%s: ratio %v, ci_low %v, beyond %v; want null, null, false (B has no TPOT)", m.Key, m.Ratio, m.Lo, m.Beyond)
			}
		case "ttft_mean":
			if m.Ratio == nil || math.Abs(*m.Ratio-2) > 1e-9 || !m.Beyond {
				t.Errorf("ttft_mean: ratio %v beyond %v, want 2, beyond noise", m.Ratio, m.Beyond)
			}
		}
	}
	p := c.Pairing
	if p == nil || p.Paired != len(spread) || len(p.Requests) != len(spread) || p.Median == nil || math.Abs(*p.Median-2) > 1e-9 {
		t.Fatalf("pairing %+v, want %d pairs listed, median 2", p, len(spread))
	}
	if p.Requests[0].ID != "req00" || p.Requests[0].Ratio == nil || math.Abs(*p.Requests[0].Ratio-2) > 1e-9 {
		t.Errorf("first pair %+v, want req00 at ratio 2", p.Requests[0])
	}
}
