package sweep

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Load puts the points in order of value (search points after the
// ladder's in the file), keeps a point whose run is gone with n/a
// latencies and why, and refuses a directory without a sweep summary.
func TestLoad(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	doc := `{"key":"mrc_qps","flag":"--mrc-qps","values":[1,4],"slo":"ttft_ms<=500","min_good_share":0.9,"complete":true,
	"points":[{"point":1,"value":1,"dir":"point-01","status":"completed","completion_rate":1},
	          {"point":2,"value":4,"dir":"point-02","status":"completed","completion_rate":3},
	          {"point":3,"value":2,"dir":"point-03","status":"completed","completion_rate":2,"search":true}]}`
	if err := os.WriteFile(filepath.Join(dir, SummaryName), []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if s.Key != "mrc_qps" || s.SLO != "ttft_ms<=500" || s.Name() != filepath.Base(dir) || len(s.Points) != 3 {
		t.Fatalf("loaded %+v", s)
	}
	for i, want := range []float64{1, 2, 4} {
		p := s.Points[i]
		if p.Value != want {
			t.Errorf("point %d: value %v, want %v (by value)", i, p.Value, want)
		}
		if p.LoadErr == "" || !math.IsNaN(p.Latency["ttft_ms"][0]) || !math.IsNaN(p.Latency["e2e_ms"][1]) {
			t.Errorf("point %v: load error %q, latencies %v; want why its run is missing and NaN", p.Value, p.LoadErr, p.Latency)
		}
	}
	if _, err := Load(t.TempDir()); err == nil || !strings.Contains(err.Error(), "no "+SummaryName) {
		t.Errorf("a directory without a sweep summary: %v", err)
	}
}
