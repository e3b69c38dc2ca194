package report

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The built-in engine's settings of a recorded configuration end the
// summary's config, typed as they were written.
func TestSimSettingsInTheSummary(t *testing.T) {
	t.Parallel()
	recorded := []byte(`{"model":"m","seed":42,"sim_model":"m","sim_block_size":16,"sim_gpu_gb":8.0,"sim_blend":false,"sim_prefill_per_token":"50µs","kv_cache_volume":1.0}`)
	got := SimSettings(recorded)
	want := []Setting{{"sim_model", "m"}, {"sim_block_size", int64(16)}, {"sim_gpu_gb", 8.0}, {"sim_blend", false}, {"sim_prefill_per_token", "50µs"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("SimSettings (-want +got):\n%s", diff)
	}
	if s := SimSettings([]byte(`{"model":"m"}`)); len(s) != 0 {
		t.Errorf("no sim keys: %v", s)
	}
	if s := SimSettings(nil); len(s) != 0 {
		t.Errorf("no configuration: %v", s)
	}
	cfg, run, f := summaryFixture()
	cfg.Sim = got
	var doc struct {
		Config map[string]any `json:"config"`
	}
	b := SummaryJSON(cfg, run, f)
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	for _, s := range want {
		v := s.Value
		if n, ok := v.(int64); ok {
			v = float64(n)
		}
		if doc.Config[s.Key] != v {
			t.Errorf("config %s = %v, want %v", s.Key, doc.Config[s.Key], v)
		}
	}
	if doc.Config["quiet"] == nil {
		t.Error("the original's keys are gone")
	}
}
