package main

// End-to-end tests of --reset-cache and the carried-over-hits check
// (issue 13), through the real binaries against the built-in engine and
// a standalone `lmbench sim`.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

type ledgerSummary struct {
	Reset *struct {
		When    string `json:"when"`
		Status  *int   `json:"status"`
		Error   *string
		Cleared string `json:"cleared"`
		Detail  string `json:"detail"`
	} `json:"reset"`
	Warmup, Measure struct {
		Requests int      `json:"requests"`
		Journal  int64    `json:"journal_cached_tokens"`
		Engine   *float64 `json:"engine_hit_tokens"`
		Agrees   string   `json:"agrees"`
		Declared int      `json:"declared_requests"`
		Expected *float64 `json:"expected_cached_tokens"`
		Short    int      `json:"short_requests"`
	}
	Verdicts []string `json:"verdicts"`
}

func readLedger(t *testing.T, dir string) ledgerSummary {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "bench_summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Ledger *ledgerSummary `json:"cache_ledger"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Ledger == nil {
		t.Fatalf("no cache_ledger in %s", b)
	}
	return *doc.Ledger
}

func hasVerdict(l ledgerSummary, sub string) bool {
	for _, v := range l.Verdicts {
		if strings.Contains(v, sub) {
			return true
		}
	}
	return false
}

// TestResetThatDoesNotClearIsFlagged: a reset that answers 200 without
// clearing (--sim-fault-reset-noop) is reported as not cleared, with a
// warning; the same reset on an engine that clears is reported cleared.
func TestResetThatDoesNotClearIsFlagged(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	for name, noop := range map[string]bool{"clears": false, "noop": true} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			out := t.TempDir()
			args := []string{"run", "--engine-url", "builtin", "--workload", "long-doc-qa",
				"--kv-cache-volume", "0.5", "--ldqa-document-length", "500", "--ldqa-query-per-document", "2",
				"--sim-tokens-per-gb", "4096", "--sim-time-scale", "0", "--reset-cache", "before-measure",
				"--no-interactive", "-q", "--json", "--output-dir", out}
			if noop {
				args = append(args, "--sim-fault-reset-noop")
			}
			r := lmbench(t, nil, args...)
			if r.code != 0 {
				t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
			}
			l := readLedger(t, out)
			if l.Reset == nil || l.Reset.When != "before-measure" || l.Reset.Status == nil || *l.Reset.Status != 200 {
				t.Fatalf("reset = %+v, want before-measure answered 200", l.Reset)
			}
			want := "yes"
			if noop {
				want = "no"
			}
			if l.Reset.Cleared != want {
				t.Errorf("cleared = %q (%s), want %q", l.Reset.Cleared, l.Reset.Detail, want)
			}
			if got := hasVerdict(l, "did not clear"); got != noop {
				t.Errorf("verdicts %q: a did-not-clear warning = %v, want %v", l.Verdicts, got, noop)
			}
			if noop && !strings.Contains(strings.ReplaceAll(r.stdout, "\n  ", " "), "WARNING: the cache reset (before-measure) answered 200 but") {
				t.Errorf("terminal lacks the warning:\n%s", r.stdout)
			}
			// The probes are not workload requests.
			if l.Measure.Requests != 8 || l.Warmup.Requests != 4 {
				t.Errorf("ledger counts %d warmup, %d measured requests; want 4, 8 (probes left out)",
					l.Warmup.Requests, l.Measure.Requests)
			}
		})
	}
}

// TestCarriedOverHitsAreFlagged: long-doc-qa run twice against one
// engine finds its documents cached the second time, which is flagged;
// a reset before the warmup clears them and the flag goes.
func TestCarriedOverHitsAreFlagged(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	// Its address read from a pipe: polling a buffer the child writes races.
	_, url := startSim(t, "--time-scale", "0", "--cpu-gb", "0", "--tokens-per-gb", "4096")
	run := func(extra ...string) ledgerSummary {
		t.Helper()
		out := t.TempDir()
		r := lmbench(t, nil, append([]string{"run", "--engine-url", url, "--workload", "long-doc-qa",
			"--tokens-per-gb-kvcache", "4096", "--kv-cache-volume", "0.5", "--ldqa-document-length", "500",
			"--ldqa-query-per-document", "2", "--no-interactive", "-q", "--json", "--output-dir", out}, extra...)...)
		if r.code != 0 {
			t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
		}
		return readLedger(t, out)
	}
	// long-doc-qa declares its warmup requests cold (expected-reuse).
	const carried = "hits where none were expected"
	if l := run(); hasVerdict(l, carried) || l.Warmup.Journal != 0 {
		t.Errorf("first run: warmup cached %d, verdicts %q; want 0 and no carry-over", l.Warmup.Journal, l.Verdicts)
	}
	if l := run(); !hasVerdict(l, carried) || !hasVerdict(l, "4 warmup requests long-doc-qa declared cold found cached tokens") {
		t.Errorf("second run: warmup cached %d, verdicts %q; want the carry-over flagged for all 4 documents",
			l.Warmup.Journal, l.Verdicts)
	}
	l := run("--reset-cache", "before-warmup")
	if hasVerdict(l, carried) || l.Reset == nil || l.Reset.Cleared != "yes" {
		t.Errorf("after a reset: reset %+v, verdicts %q; want cleared and no carry-over", l.Reset, l.Verdicts)
	}
}
