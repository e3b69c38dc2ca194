package record

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/lmbench/lmbench/sdk/protocol"
)

// A record without outputs or scores is written as before they existed,
// so journals of runs that keep neither keep their exact bytes.
func TestAppendJSONWithoutOutputs(t *testing.T) {
	t.Parallel()
	r := Record{RunID: "r", Phase: Measure, RequestID: "q"}
	if got := string(AppendJSON(nil, &r)); strings.Contains(got, "output_text") || strings.Contains(got, "scores") {
		t.Errorf("record without outputs or scores mentions them: %s", got)
	}
}

// Scores written on "score" lines after their records come back on the
// records, by phase and request id, in both of the journal's readers.
func TestJournalScores(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), JournalName)
	run := testRun()
	run.ScoreKeys = []string{"exact", "contains"}
	j, err := CreateJournal(path, run)
	if err != nil {
		t.Fatal(err)
	}
	recs := []Record{
		{RunID: run.ID, Phase: Warmup, RequestID: "q1", Seq: 1},
		{RunID: run.ID, Phase: Measure, RequestID: "q1", Seq: 2, OutputText: "4832"},
		{RunID: run.ID, Phase: Measure, RequestID: "q2", Seq: 3},
	}
	for i := range recs {
		if err := j.Append(&recs[i]); err != nil {
			t.Fatal(err)
		}
	}
	exact := map[string]float64{"exact": 1, "contains": 1}
	if err := j.AppendScores(protocol.Score{RequestID: "q1", Phase: Measure, Values: exact}); err != nil {
		t.Fatal(err)
	}
	if err := j.Close(nil); err != nil {
		t.Fatal(err)
	}
	c, err := ReadJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]map[string]float64{}
	for _, r := range c.Records {
		got[r.Phase.String()+" "+r.RequestID] = r.Scores
	}
	want := map[string]map[string]float64{"warmup q1": nil, "measure q1": exact, "measure q2": nil}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("scores read back (-want +got):\n%s", d)
	}
	if d := cmp.Diff(run.ScoreKeys, c.Run.ScoreKeys); d != "" {
		t.Errorf("score keys (-want +got):\n%s", d)
	}
	if c.Records[1].OutputText != "4832" {
		t.Errorf("output text %q, want 4832", c.Records[1].OutputText)
	}
	b, _ := os.ReadFile(path)
	if !strings.Contains(string(b), `{"kind":"score","phase":"measure","request_id":"q1","scores":{"contains":1,"exact":1}}`) {
		t.Errorf("no score line in:\n%s", b)
	}
}
