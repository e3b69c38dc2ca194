package merge

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/lmbench/lmbench/core/config"
	"github.com/lmbench/lmbench/core/htmlreport"
	"github.com/lmbench/lmbench/core/record"
)

func TestMergeCheck(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in   Merge
		want string
	}{
		{Merge{Sources: []string{"d"}}, ""},
		{Merge{}, "no shard directories"},
		{Merge{Sources: []string{"d"}, Wait: -time.Second}, "--wait -1s: expected a duration of 0 or more"},
	} {
		err := c.in.Check()
		if (c.want == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: Check() = %v, want %q", c.in, err, c.want)
		}
	}
}

// With Report the merge writes the merged run's report.html and says
// where; Outcome is nil for a complete run and names an incomplete one.
func TestMergeReportAndOutcome(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var paths []string
	for i := range 2 {
		paths = append(paths, writeShard(t, filepath.Join(dir, string(rune('a'+i))), shardSpec{index: i, count: 2, runID: "r", hash: "h",
			status: record.Completed, recs: []record.Record{shardRec("q"+string(rune('0'+i)), 0, 0.01)}}))
	}
	out := filepath.Join(dir, "m")
	m, err := Merge{Sources: paths, OutputDir: out, Report: true, Version: "t", Log: zerolog.Nop()}.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(out, htmlreport.RunReportName); m.Report != want {
		t.Errorf("Report = %q, want %q", m.Report, want)
	}
	if st, err := os.Stat(m.Report); err != nil || st.Size() == 0 {
		t.Errorf("report: %v", err)
	}
	if err := m.Outcome(); err != nil {
		t.Errorf("complete merge: Outcome() = %v", err)
	}
	m.Status, m.Reason = record.Aborted, "shard 1/2 missing from the merge"
	if err := m.Outcome(); err == nil || err.Error() != "the merged run is aborted: shard 1/2 missing from the merge" {
		t.Errorf("aborted merge: Outcome() = %v", err)
	}
	m.Err = errors.New("parquet: disk full")
	if err := m.Outcome(); err != m.Err {
		t.Errorf("exporter failed: Outcome() = %v, want its error", err)
	}
}

func TestOpenUpload(t *testing.T) {
	t.Parallel()
	if u, err := OpenUpload(config.Upload{}); u != nil || err != nil {
		t.Errorf("none: %v, %v", u, err)
	}
	_, err := OpenUpload(config.Upload{To: "https://bench/x", Origin: "LMBENCH_UPLOAD_TO"})
	if err == nil || !strings.HasPrefix(err.Error(), `LMBENCH_UPLOAD_TO: "https://bench/x": expected s3://bucket/prefix`) {
		t.Errorf("not s3: %v", err)
	}
}
