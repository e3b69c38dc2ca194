package report

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/lmbench/lmbench/core/stats"
)

// The workload's options are the recorded keys that are neither the
// host's nor the built-in engine's, in their order, and the summary's
// config holds them before the engine's settings.
func TestWorkloadSettingsInTheSummaryConfig(t *testing.T) {
	t.Parallel()
	recorded := []byte(`{"model":"m","ldqa_document_length":2000,"seed":42,"ldqa_hit_rate":0.5,"sim_gpu_gb":8.0}`)
	host := func(k string) bool { return k == "model" || k == "seed" }
	got := WorkloadSettings(recorded, host)
	want := []Setting{{"ldqa_document_length", int64(2000)}, {"ldqa_hit_rate", 0.5}}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("WorkloadSettings (-want +got):\n%s", d)
	}
	doc := string(SummaryJSON(Config{Model: "m", Options: got, Sim: SimSettings(recorded)}, Run{}, stats.Final{}))
	i, j := strings.Index(doc, `"ldqa_document_length": 2000`), strings.Index(doc, `"sim_gpu_gb"`)
	if i < 0 || j < 0 || i > j {
		t.Errorf("summary config lacks the workload's options before the engine's settings:\n%s", doc)
	}
}
