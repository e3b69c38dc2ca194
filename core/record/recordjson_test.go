package record

import (
	"math"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Every field of a Record has a key in the journal: one that had none
// would come back zero. The record sets every field, and reflection
// checks that it does, so a field added to Record and not to
// recordFields fails here.
func TestRecordFieldsCoverRecord(t *testing.T) {
	t.Parallel()
	r := fullRecord(1)
	r.ChunkOffsetsTruncated, r.StatedPromptTokens, r.Error = true, 2005, "cut short"
	r.TargetTier = "blend"
	r.OutputText, r.Scores = "The code is \"4832\".\n", map[string]float64{"exact": 0, "contains": 1}
	r.OutputLogprobs = `[{"token":"The","logprob":-0.25,"top":[{"token":"The","logprob":-0.25}]}]`
	v := reflect.ValueOf(r)
	for i := range v.NumField() {
		if v.Field(i).IsZero() {
			t.Errorf("the record leaves %s unset", v.Type().Field(i).Name)
		}
	}
	if got, want := len(recordFields), v.NumField(); got != want {
		t.Errorf("%d journal keys for %d record fields", got, want)
	}
	back, err := decodeRecord(JournalVersion, AppendJSON(nil, &r))
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(r, back); d != "" {
		t.Errorf("through the journal (-want +got):\n%s", d)
	}
}

// A version 2 journal written before a key existed reads it as its zero
// value (a float as NaN), as docs/results-schema.md promises.
func TestDecodeRecordAbsentKeys(t *testing.T) {
	t.Parallel()
	got, err := decodeRecord(JournalVersion, []byte(`{"run_id":"r","phase":"measure","request_id":"q","ttft_s":0.5}`))
	if err != nil {
		t.Fatal(err)
	}
	want := Record{RunID: "r", Phase: Measure, RequestID: "q", TTFT: 0.5, Latency: math.NaN(), DecodeSpeed: math.NaN(), ITL: math.NaN()}
	if d := cmp.Diff(want, got, cmpRecords); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}
