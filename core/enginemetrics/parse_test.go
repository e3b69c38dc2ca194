package enginemetrics

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func parseFile(t *testing.T, name string) Snapshot {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s, err := Parse(f)
	if err != nil {
		t.Fatalf("Parse(%s): %v", name, err)
	}
	return s
}

// TestParseFolds: every label set (data-parallel engines, LMCache
// workers, SGLang ranks and cache sources) is folded as its metric says:
// counters and queue depths summed, usage the largest, a hit rate the
// mean; old vLLM names and a counter family without _total are read.
func TestParseFolds(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		file string
		want map[string]float64
	}{
		{"vllm.txt", map[string]float64{
			VLLMRunning: 5, VLLMWaiting: 1, VLLMKVUsage: 0.42,
			VLLMPrefixQueries: 200000, VLLMPrefixHits: 136000,
			VLLMExternalQueries: 64000, VLLMExternalHits: 48000,
			VLLMPreemptions: 4, VLLMPromptTokens: 200000,
			LMCacheRetrieves: 50, LMCacheRequested: 64000, LMCacheHits: 48000,
		}},
		{"vllm_old.txt", map[string]float64{
			VLLMPrefixQueries: 5000, VLLMPrefixHits: 2000, VLLMKVUsage: 0.25, LMCacheHits: 700,
		}},
		{"sglang.txt", map[string]float64{
			SGLangPromptTokens: 1e7, SGLangCachedTokens: 5e6, SGLangHitRate: 0.5,
			SGLangRunning: 7, SGLangQueue: 12, SGLangTokenUsage: 0.28,
		}},
	} {
		t.Run(tt.file, func(t *testing.T) {
			t.Parallel()
			s := parseFile(t, tt.file)
			if diff := cmp.Diff(tt.want, s.Values); diff != "" {
				t.Errorf("values (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseHistograms(t *testing.T) {
	t.Parallel()
	s := parseFile(t, "vllm.txt")
	want := Hist{Bounds: []float64{0.001, 0.1, 0.5, 1}, Cum: []float64{0, 10, 20, 28}, Count: 30, Sum: 10}
	if diff := cmp.Diff(want, s.Hists[VLLMTTFT]); diff != "" {
		t.Errorf("TTFT folded over both engines (-want +got):\n%s", diff)
	}
	if got := parseFile(t, "vllm_old.txt").Hists[VLLMITL].Count; got != 20 {
		t.Errorf("ITL from time_per_output_token_seconds: count %v, want 20", got)
	}
	if got := parseFile(t, "sglang.txt").Hists[SGLangTTFT].Quantile(0.5); math.Abs(got-0.125) > 1e-12 {
		t.Errorf("SGLang TTFT p50 = %v, want 0.125", got)
	}
}

func TestQuantile(t *testing.T) {
	t.Parallel()
	h := Hist{Bounds: []float64{0.001, 0.1, 0.5, 1}, Cum: []float64{0, 10, 20, 28}, Count: 30, Sum: 10}
	for _, tt := range []struct{ q, want float64 }{
		{0.5, 0.3},    // rank 15: halfway through (0.1, 0.5]
		{0.9, 0.9375}, // rank 27: 7 of 8 into (0.5, 1]
		{0.99, 1},     // in the +Inf bucket: the highest finite bound
		{0.1, 0.0307}, // rank 3: 3 of 10 into (0.001, 0.1]
	} {
		if got := h.Quantile(tt.q); math.Abs(got-tt.want) > 1e-9 {
			t.Errorf("Quantile(%v) = %v, want %v", tt.q, got, tt.want)
		}
	}
	if got := (Hist{}).Quantile(0.5); !math.IsNaN(got) {
		t.Errorf("empty histogram: Quantile = %v, want NaN", got)
	}
	if got := h.Mean(); math.Abs(got-10.0/30) > 1e-12 {
		t.Errorf("Mean = %v, want 1/3", got)
	}
}

func TestHistSub(t *testing.T) {
	t.Parallel()
	a := Hist{Bounds: []float64{1, 2}, Cum: []float64{1, 3}, Count: 4, Sum: 5}
	b := Hist{Bounds: []float64{1, 2}, Cum: []float64{2, 6}, Count: 9, Sum: 12}
	d, ok := b.Sub(a)
	if !ok {
		t.Fatal("Sub: not ok")
	}
	if diff := cmp.Diff(Hist{Bounds: []float64{1, 2}, Cum: []float64{1, 3}, Count: 5, Sum: 7}, d); diff != "" {
		t.Errorf("Sub (-want +got):\n%s", diff)
	}
	if _, ok := a.Sub(b); ok {
		t.Error("a count that went down: Sub ok, want not")
	}
}

func TestParseError(t *testing.T) {
	t.Parallel()
	_, err := Parse(strings.NewReader("<html>not metrics</html>\n"))
	if err == nil || !strings.Contains(err.Error(), "parsing the exposition") {
		t.Errorf("HTML body: err = %v, want a parse error", err)
	}
}
