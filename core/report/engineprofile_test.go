package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/lmbench/lmbench/core/failure"
	"github.com/lmbench/lmbench/core/stats"
)

// A stream the engine ended early says why it may have.
func TestFailureLinesSayWhyAStreamBroke(t *testing.T) {
	t.Parallel()
	got := failureLines(failure.Breakdown{Requests: 3, Failed: 1, Kinds: []failure.Count{{Kind: failure.StreamBroken, Count: 1,
		Example: "stream ended before [DONE]: EOF after 31 data lines (30 with content)", ExampleRequest: "doc1_q0"}}})
	if !strings.Contains(got, "why? the engine ended the stream early") || !strings.Contains(got, "repeats 30 times") {
		t.Errorf("failure lines:\n%s", got)
	}
}

// The stream checks appear only when they flagged a request, in the
// terminal and in the JSON alike.
func TestStreamChecks(t *testing.T) {
	t.Parallel()
	if s := streamSection(Run{}, stats.Final{}); s != "" {
		t.Errorf("section without flags: %q", s)
	}
	if doc := withStreamChecks(nil, Run{}, stats.Final{}); doc != nil {
		t.Errorf("member without flags: %v", doc)
	}
	s := streamSection(Run{ShortUnderIgnoreEOS: 4}, stats.Final{CoarseStreams: 2})
	for _, want := range []string{"Coarse streams (no decode/TPOT/ITL):", "Short under ignore_eos:", "ignored ignore_eos"} {
		if !strings.Contains(strings.ReplaceAll(s, "\n  ", " "), want) {
			t.Errorf("section lacks %q:\n%s", want, s)
		}
	}
	var b bytes.Buffer
	writeObjectTo(&b, withStreamChecks(nil, Run{ShortUnderIgnoreEOS: 4}, stats.Final{CoarseStreams: 2}))
	if !strings.Contains(b.String(), `"coarse_streams": 2`) || !strings.Contains(b.String(), `"short_under_ignore_eos": 4`) {
		t.Errorf("JSON %s", b.String())
	}
}

// The engine block says what lmbench can and cannot measure; n/a, not 0,
// for cached figures an engine does not report.
func TestEngineBlockAndUnknownCachedTokens(t *testing.T) {
	t.Parallel()
	e := &EngineProfile{Kind: "ollama", Name: "Ollama", Version: "0.17.4", DetectedFrom: "GET /api/version", Seed: true,
		Cannot: []string{"no cached token counts: the cache ledger will use TTFT only"}}
	var b bytes.Buffer
	writeObjectTo(&b, withEngineProfile(nil, e))
	for _, want := range []string{`"kind": "ollama"`, `"cached_tokens": null`, `"cannot": [`, `"seed": true`} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("engine block lacks %s:\n%s", want, b.String())
		}
	}
	run := Run{EngineProfile: e}
	var term strings.Builder
	Terminal(&term, Config{Workload: "long-doc-qa"}, run, stats.Final{})
	if !strings.Contains(term.String(), "Measured cached tokens:                              n/a") {
		t.Errorf("terminal summary does not say n/a for the cached tokens:\n%s", term.String())
	}
	if !strings.Contains(string(SummaryJSON(Config{}, run, stats.Final{})), `"cached_tokens": null`) {
		t.Error("bench_summary.json's cache block does not write null cached tokens")
	}
}
