package merge

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rs/zerolog"

	"github.com/lmbench/lmbench/core/record"
)

// A parent directory stands for the shards' directories under it; an
// earlier merge's output beside them is passed over, and a journal given
// twice is read once.
func TestShardJournalsFindsTheShards(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	spec := func(i int) shardSpec {
		return shardSpec{index: i, count: 2, runID: "r", hash: "h", status: record.Completed,
			recs: []record.Record{shardRec("q", 0, 0.01)}}
	}
	s0 := writeShard(t, filepath.Join(dir, "a"), spec(0))
	s1 := writeShard(t, filepath.Join(dir, "b"), spec(1))
	if _, err := (Merge{Sources: []string{dir}, OutputDir: filepath.Join(dir, "merged"), Log: zerolog.Nop()}).Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	got, err := shardJournals([]string{dir, s0})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{s0, s1}, got); diff != "" {
		t.Errorf("journals (-want +got):\n%s", diff)
	}
	if _, err := shardJournals([]string{filepath.Join(dir, "merged", "..", "none")}); err == nil {
		t.Error("a directory that does not exist: no error")
	}
	empty := t.TempDir()
	if _, err := shardJournals([]string{empty}); err == nil || !strings.Contains(err.Error(), "no shard's "+record.JournalName) {
		t.Errorf("a directory without shards: %v", err)
	}
}

// The merge waits for what is lacking: no journal, or shards still
// running (no summary yet).
func TestShardsComplete(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	spec := func(i int, st record.Status) shardSpec {
		return shardSpec{index: i, count: 3, runID: "r", hash: "h", status: st, recs: []record.Record{shardRec("q", 0, 0.01)}}
	}
	done0 := writeShard(t, filepath.Join(dir, "0"), spec(0, record.Completed))
	running1 := writeShard(t, filepath.Join(dir, "1"), spec(1, ""))
	done2 := writeShard(t, filepath.Join(dir, "2"), spec(2, record.Aborted))
	for _, tt := range []struct {
		journals []string
		done     bool
		why      string
	}{
		{nil, false, "no shard's journal yet"},
		{[]string{done0, running1}, false, "1 of 3 shards finished (1 running)"},
		{[]string{done0, done2}, false, "2 of 3 shards finished (0 running)"},
		{[]string{done0, done2, writeShard(t, filepath.Join(dir, "1b"), spec(1, record.Interrupted))}, true, ""},
	} {
		if done, why := shardsComplete(tt.journals); done != tt.done || why != tt.why {
			t.Errorf("%v: %v %q, want %v %q", tt.journals, done, why, tt.done, tt.why)
		}
	}
}
