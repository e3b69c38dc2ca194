package report

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/lmbench/lmbench/core/stats"
)

func TestSummaryPromptTokens(t *testing.T) {
	t.Parallel()
	var f stats.Final
	f.Prompts.Measure = stats.PromptCheck{Requests: 2, Stated: 4050, Measured: 4055, Differing: 1}
	var doc struct {
		Prompts *struct {
			Tokenizer string         `json:"tokenizer"`
			Warmup    map[string]any `json:"warmup"`
			Measure   map[string]any `json:"measure"`
		} `json:"prompt_tokens"`
	}
	if err := json.Unmarshal(SummaryJSON(Config{Tokenizer: "engine"}, Run{}, f), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Prompts == nil || doc.Prompts.Tokenizer != "engine" {
		t.Fatalf("prompt_tokens = %+v, want the tokenizer recorded", doc.Prompts)
	}
	want := map[string]any{"requests": 2.0, "stated": 4050.0, "measured": 4055.0, "differing": 1.0, "mean_difference": 2.5}
	if d := cmp.Diff(want, doc.Prompts.Measure); d != "" {
		t.Errorf("measure (-want +got):\n%s", d)
	}
	// Nothing stated in warmup: the figures are undefined, null.
	wantWarm := map[string]any{"requests": 0.0, "stated": nil, "measured": nil, "differing": nil, "mean_difference": nil}
	if d := cmp.Diff(wantWarm, doc.Prompts.Warmup); d != "" {
		t.Errorf("warmup (-want +got):\n%s", d)
	}
	// No tokenizer recorded (a re-export): no block, the summary as before.
	if s := string(SummaryJSON(Config{}, Run{}, f)); strings.Contains(s, "prompt_tokens\": {") {
		t.Errorf("summary without a tokenizer has the block:\n%s", s)
	}

	var term strings.Builder
	Terminal(&term, Config{Tokenizer: "engine"}, Run{}, f)
	for _, line := range []string{"Prompt tokens", "Tokenizer:", "engine", "Measured stated prompt tokens:", "4050", "4055"} {
		if !strings.Contains(term.String(), line) {
			t.Errorf("terminal summary lacks %q:\n%s", line, term.String())
		}
	}
}
