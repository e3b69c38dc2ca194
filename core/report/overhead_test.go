package report

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

// certificates are an idle run's, a saturated one's and one with nothing
// defined (no measured request, no probe).
func certificates() map[string]*Overhead {
	nan := math.NaN()
	idle := &Overhead{
		PhaseSeconds: 12.5, Requests: 200, DispatchLagP50Ms: 0.04, DispatchLagP99Ms: 0.31, DispatchLagMaxMs: 0.52,
		SpreadGroups: 1, SendSpreadP99Ms: 0.45, SendSpreadMaxMs: 0.45,
		LoopSamples: 2500, LoopPeriodMs: 5, LoopLagP99Ms: 0.82, LoopLagMaxMs: 1.9,
		CPUSeconds: 1.25, CPUCorePercent: 10, CPUMachinePercent: 5, CPUs: 2,
		GCPauses: 6, GCPauseTotalMs: 0.6, GCPauseMaxMs: 0.25,
		Verdict: Verdict{BoundMs: 0.82, InflationMs: 1.13, CPUThresholdPercent: 80, LagThresholdMs: 10},
	}
	saturated := *idle
	saturated.DispatchLagP99Ms, saturated.DispatchLagMaxMs, saturated.LoopLagP99Ms = 305.5, 380, 12.25
	saturated.LoopLagMaxMs, saturated.CPUCorePercent, saturated.CPUMachinePercent = 40, 193, 96.5
	saturated.Verdict = Verdict{Saturated: true, CPUOver: true, LagOver: true, BoundMs: 305.5, InflationMs: 317.75,
		CPUThresholdPercent: 80, LagThresholdMs: 10}
	none := &Overhead{
		PhaseSeconds: nan, DispatchLagP50Ms: nan, DispatchLagP99Ms: nan, DispatchLagMaxMs: nan,
		SendSpreadP99Ms: nan, SendSpreadMaxMs: nan, LoopPeriodMs: 5, LoopLagP99Ms: nan, LoopLagMaxMs: nan,
		CPUSeconds: nan, CPUCorePercent: nan, CPUMachinePercent: nan, CPUs: 2,
		GCPauses: -1, GCPauseTotalMs: nan, GCPauseMaxMs: nan,
		Verdict: Verdict{BoundMs: nan, InflationMs: nan, CPUThresholdPercent: 80, LagThresholdMs: 10},
	}
	return map[string]*Overhead{"idle": idle, "saturated": &saturated, "none": none}
}

func TestOverheadSection(t *testing.T) {
	t.Parallel()
	var all strings.Builder
	for _, name := range []string{"idle", "saturated", "none"} {
		s := overheadSection(certificates()[name])
		for _, l := range strings.Split(strings.TrimSuffix(s, "\n"), "\n") {
			if n := utf8.RuneCountInString(l); n > Width {
				t.Errorf("%s: line wider than %d: %q", name, Width, l)
			}
		}
		all.WriteString("# " + name + "\n" + s)
	}
	golden(t, "overhead.golden", []byte(all.String()))
	if got := overheadSection(nil); got != "" {
		t.Errorf("no certificate: %q, want no section", got)
	}
}

func TestOverheadVerdictLines(t *testing.T) {
	t.Parallel()
	c := certificates()
	for name, want := range map[string]string{
		"idle": "Client-added latency at most 0.82 ms at p99",
		"saturated": "WARNING: the client was saturated (CPU 96.50% of the machine > 80%; dispatch lag p99 305.50 ms > 10 ms; " +
			"event-loop lag p99 12.25 ms > 10 ms): its TTFT may be inflated by up to 317.75 ms at p99 (dispatch lag p99 + event-loop lag p99)",
		"none": "Client-added latency: n/a (no measured request, no probe sample)",
	} {
		if got := c[name].Text(); got != want {
			t.Errorf("%s: %q, want %q", name, got, want)
		}
	}
}

func TestOverheadJSON(t *testing.T) {
	t.Parallel()
	var all strings.Builder
	for _, name := range []string{"idle", "saturated", "none"} {
		doc := withOverhead([]kv{{"results", []kv{{"total_requests", 1}}}}, certificates()[name])
		var b strings.Builder
		writeObject(&b, doc, 0)
		var parsed map[string]any
		if err := json.Unmarshal([]byte(b.String()), &parsed); err != nil {
			t.Fatalf("%s: not JSON: %v\n%s", name, err, b.String())
		}
		all.WriteString(b.String() + "\n")
	}
	golden(t, "overhead.json", []byte(all.String()))

	doc := []kv{{"results", nil}}
	if diff := cmp.Diff(1, len(withOverhead(doc, nil))); diff != "" {
		t.Errorf("no certificate adds a member (-want +got):\n%s", diff)
	}
}

// Figures not defined are null; the verdict says which bound applies.
func TestOverheadJSONNulls(t *testing.T) {
	t.Parallel()
	decode := func(o *Overhead) map[string]map[string]any {
		var b strings.Builder
		writeObject(&b, withOverhead(nil, o), 0)
		var doc struct {
			Overhead map[string]json.RawMessage `json:"overhead"`
		}
		if err := json.Unmarshal([]byte(b.String()), &doc); err != nil {
			t.Fatal(err)
		}
		out := map[string]map[string]any{}
		for k, raw := range doc.Overhead {
			var m map[string]any
			if json.Unmarshal(raw, &m) == nil {
				out[k] = m
			}
		}
		return out
	}
	c := certificates()
	none := decode(c["none"])
	for _, k := range [][2]string{{"dispatch_lag_ms", "p99"}, {"send_spread_ms", "max"}, {"loop_lag_ms", "p99"},
		{"cpu", "machine_percent"}, {"gc_pauses", "count"}, {"verdict", "client_added_p99_ms"}} {
		if v, ok := none[k[0]][k[1]]; !ok || v != nil {
			t.Errorf("%s.%s = %v (present %v), want null", k[0], k[1], v, ok)
		}
	}
	idle, sat := decode(c["idle"])["verdict"], decode(c["saturated"])["verdict"]
	if idle["client_added_p99_ms"] != 0.82 || idle["ttft_inflation_p99_ms"] != nil || idle["saturated"] != false {
		t.Errorf("idle verdict %v", idle)
	}
	if sat["client_added_p99_ms"] != nil || sat["ttft_inflation_p99_ms"] != 317.75 || sat["saturated"] != true {
		t.Errorf("saturated verdict %v", sat)
	}
}
