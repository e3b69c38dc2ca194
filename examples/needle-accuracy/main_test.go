package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// The sample is a permuted needle-qa run on the built-in engine with half
// its blended chunks corrupted (testdata/README.md says how it was made):
// its summary said 15 of 18 exact, all 9 answers with half or more of
// the prompt cached right, every wrong answer "I do not know.".
func TestRead(t *testing.T) {
	t.Parallel()
	r, err := Read(filepath.Join("testdata", "needle-permuted.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	if r.All.Answers != 18 || r.All.Exact != 15 {
		t.Errorf("all: %+v, want 15 of 18", r.All)
	}
	if len(r.ByDepth) != 3 || r.ByDepth[2] != (Group{Label: "0.9", Answers: 6, Exact: 6}) {
		t.Errorf("by depth: %+v", r.ByDepth)
	}
	if len(r.ByShare) != 2 || r.ByShare[0] != (Group{Label: "half or more cached", Answers: 9, Exact: 9}) {
		t.Errorf("by share: %+v", r.ByShare)
	}
	for _, a := range r.Wrong {
		if a.OutputText == nil || *a.OutputText != "I do not know." {
			t.Errorf("wrong answer %s: %v", a.RequestID, a.OutputText)
		}
	}
	var out strings.Builder
	r.Write(&out)
	if !strings.Contains(out.String(), "all                     18 answers  exact  83.3%") {
		t.Errorf("output:\n%s", out.String())
	}
}
