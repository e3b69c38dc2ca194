package main

// End-to-end tests of the built-in engine's settings as options: set by
// LMBENCH_SIM_* variables, written by --export-config, recorded with the
// run, replayed from the file.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/lmbench/lmbench/core/config"
	"github.com/lmbench/lmbench/core/config/simconfig"
	"github.com/lmbench/lmbench/core/record"
)

// simLDQA is long-doc-qa on the built-in engine: documents of 500 tokens,
// two questions each, tokens per GB from the engine's /status.
func simLDQA(volume string, extra ...string) []string {
	return append([]string{"run", "--engine-url", "builtin", "--workload", "long-doc-qa",
		"--kv-cache-volume", volume, "--ldqa-document-length", "500", "--ldqa-query-per-document", "2",
		"--sim-tokens-per-gb", "4096", "--sim-time-scale", "0", "--no-interactive", "-q", "--json"}, extra...)
}

// cachedTokens returns the measured requests' cached_tokens of a run's journal.
func cachedTokens(t *testing.T, dir string) []int {
	t.Helper()
	var out []int
	for _, r := range readJournal(t, filepath.Join(dir, record.JournalName)).Records {
		if r.Phase == record.Measure {
			out = append(out, int(r.CachedTokens))
		}
	}
	return out
}

// recordedSim returns the sim_* keys of the configuration the run's
// journal header records, and those of its bench_summary.json's config.
func recordedSim(t *testing.T, dir string) (journal, summary map[string]any) {
	t.Helper()
	var cfg map[string]any
	if err := json.Unmarshal(readJournal(t, filepath.Join(dir, record.JournalName)).Run.Config, &cfg); err != nil {
		t.Fatal(err)
	}
	doc := readJSONFile(t, filepath.Join(dir, "bench_summary.json"))
	sum, _ := doc["config"].(map[string]any)
	pick := func(m map[string]any) map[string]any {
		out := map[string]any{}
		for k, v := range m {
			if strings.HasPrefix(k, config.SimKeyPrefix) {
				out[k] = v
			}
		}
		return out
	}
	return pick(cfg), pick(sum)
}

// LMBENCH_SIM_GPU_GB=1 shrinks the engine's GPU tier: with no CPU tier
// either, 16 documents of 500 tokens (8,000 tokens) no longer fit in its
// 4,096 tokens and some questions find their document evicted, where the
// default 8 GB tier keeps every document. The run records the setting.
func TestSimSettingFromTheEnvironment(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	small, dflt := t.TempDir(), t.TempDir()
	r := lmbench(t, []string{"LMBENCH_SIM_GPU_GB=1", "LMBENCH_SIM_CPU_GB=0"}, simLDQA("2", "--output-dir", small)...)
	if r.code != 0 {
		t.Fatalf("exit %d\nstderr:\n%s", r.code, r.stderr)
	}
	r = lmbench(t, []string{"LMBENCH_SIM_CPU_GB=0"}, simLDQA("2", "--output-dir", dflt)...)
	if r.code != 0 {
		t.Fatalf("exit %d\nstderr:\n%s", r.code, r.stderr)
	}
	whole := func(c int) bool { return c == 496 } // every full 16-token block of the document
	if got := cachedTokens(t, dflt); len(got) != 32 || !allOf(got, whole) {
		t.Fatalf("default GPU tier: cached_tokens %v, want 32 requests each finding its document (496)", got)
	}
	if got := cachedTokens(t, small); len(got) != 32 || allOf(got, whole) {
		t.Errorf("LMBENCH_SIM_GPU_GB=1: cached_tokens %v, want some documents evicted", got)
	}
	journal, summary := recordedSim(t, small)
	if journal["sim_gpu_gb"] != 1.0 || journal["sim_cpu_gb"] != 0.0 || summary["sim_gpu_gb"] != 1.0 || summary["sim_cpu_gb"] != 0.0 {
		t.Errorf("recorded sim_gpu_gb and sim_cpu_gb: journal %v, summary %v; want 1 and 0", journal, summary)
	}
	if len(journal) != len(simconfig.Options("")) || len(summary) != len(journal) {
		t.Errorf("the journal records %d sim_* keys, the summary %d; want all %d", len(journal), len(summary), len(simconfig.Options("")))
	}
}

func allOf(xs []int, f func(int) bool) bool {
	return !slices.ContainsFunc(xs, func(x int) bool { return !f(x) })
}

// --export-config writes every sim_* key; a run from the file starts the
// same engine: its model (requests to another would get 404), its block
// size (the cached tokens come in 32-token blocks), and it records the
// file's settings.
func TestExportConfigReplaysTheBuiltinEngine(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "sim.json")
	r := lmbench(t, []string{"LMBENCH_SIM_GPU_GB=1"},
		simLDQA("0.5", "--sim-model", "m2", "--sim-block-size", "32", "--sim-fault-seed", "5", "--export-config", file)...)
	if r.code != 0 {
		t.Fatalf("exit %d\nstderr:\n%s", r.code, r.stderr)
	}
	exported := readJSONFile(t, file)
	for _, o := range simconfig.Options("") {
		if _, ok := exported[o.Key]; !ok {
			t.Errorf("the exported file lacks %s", o.Key)
		}
	}
	for k, want := range map[string]any{"sim_model": "m2", "sim_block_size": 32.0, "sim_gpu_gb": 1.0, "sim_tokens_per_gb": 4096.0,
		"sim_time_scale": 0.0, "sim_fault_seed": 5.0, "sim_prefill_per_token": "50µs", "sim_blend": false, "model": "m2"} {
		if exported[k] != want {
			t.Errorf("exported %s = %v, want %v", k, exported[k], want)
		}
	}

	out := t.TempDir()
	r = lmbench(t, nil, "run", "--engine-url", "builtin", "--config", file, "--no-interactive", "-q", "--json", "--output-dir", out)
	if r.code != 0 {
		t.Fatalf("replay: exit %d\nstderr:\n%s", r.code, r.stderr)
	}
	if got := cachedTokens(t, out); len(got) != 8 || !allOf(got, func(c int) bool { return c == 480 }) {
		t.Errorf("replayed: cached_tokens %v, want 8 requests finding 15 blocks of 32 (480)", got)
	}
	journal, summary := recordedSim(t, out)
	for k, v := range exported {
		if !strings.HasPrefix(k, config.SimKeyPrefix) {
			continue
		}
		if journal[k] != v || summary[k] != v {
			t.Errorf("%s: the file says %v, the replayed run recorded %v (summary %v)", k, v, journal[k], summary[k])
		}
	}
	if doc := readJSONFile(t, filepath.Join(out, "bench_summary.json")); doc["config"].(map[string]any)["model"] != "m2" {
		t.Errorf("replayed run's model: %v", doc["config"])
	}

	// Against another engine the file's sim_* keys and the variables are
	// ignored, with a warning.
	eng := newFakeEngine(t)
	other := filepath.Join(dir, "other.json")
	r = lmbench(t, []string{"LMBENCH_SIM_CPU_GB=2"}, "run", "--engine-url", eng.srv.URL, "--config", file, "--model", "fake-model",
		"--export-config", other)
	if r.code != 0 {
		t.Fatalf("another engine: exit %d\nstderr:\n%s", r.code, r.stderr)
	}
	// Every key of the file but sim_cpu_gb, which the variable sets.
	fileKeys := fmt.Sprintf(" (%d sim_* keys)", len(simconfig.Options(""))-1)
	if !strings.Contains(r.stderr, "ignoring the built-in engine's settings in "+file+fileKeys) ||
		!strings.Contains(r.stderr, "ignoring the built-in engine's variables") || !strings.Contains(r.stderr, "LMBENCH_SIM_CPU_GB") {
		t.Errorf("want a warning for the file's keys and one naming the variable:\n%s", r.stderr)
	}
	b, _ := os.ReadFile(other)
	if strings.Contains(string(b), config.SimKeyPrefix) {
		t.Errorf("exported for another engine, the file keeps sim_* keys:\n%s", b)
	}
}

// lmbench sim reads the LMBENCH_SIM_* variables too; its flags win.
func TestSimServesWithVariables(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	_, url := startSimEnv(t, []string{"LMBENCH_SIM_GPU_GB=1", "LMBENCH_SIM_MODEL=from-env", "LMBENCH_SIM_BLOCK_SIZE=64"},
		"--block-size", "32")
	resp, err := http.Get(strings.TrimSuffix(url, "/v1") + "/status")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var st struct {
		Meta map[string]struct {
			Model  string `json:"model_name"`
			Layout struct {
				Blocks    int `json:"num_blocks"`
				BlockSize int `json:"block_size"`
			} `json:"kv_cache_layout"`
		} `json:"cache_context_meta"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		t.Fatal(err)
	}
	// 1 GB x 8,192 tokens per GB / 32-token blocks.
	if m := st.Meta["0"]; m.Model != "from-env" || m.Layout.BlockSize != 32 || m.Layout.Blocks != 256 {
		t.Errorf("/status %+v, want model from-env, block size 32 (the flag), 256 GPU blocks", m)
	}
	r := lmbench(t, []string{"LMBENCH_SIM_GPU_GB=lots"}, "sim", "--port", "0")
	if r.code != exitUsage || !strings.Contains(r.stderr, `LMBENCH_SIM_GPU_GB: expected a number, got "lots"`) {
		t.Errorf("a bad variable: exit %d\n%s", r.code, r.stderr)
	}
}
