package merge

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/lmbench/lmbench/core/record"
)

// shardJournal is one shard's journal, read.
type shardJournal struct {
	path    string
	c       *record.Contents
	summary record.Summary // its own, or computed when it was killed
	killed  bool
}

// status is how the shard ended, and why when it did not complete.
func (j *shardJournal) status() (record.Status, string) {
	if j.killed {
		return record.Interrupted, "its journal has no summary: the shard was killed"
	}
	status := j.summary.Status
	if status == "" {
		status = record.Completed
		if j.summary.Interrupted {
			status = record.Interrupted
		}
	}
	return status, j.summary.Reason
}

// readShards reads the shards' journals and checks they are the parts of
// one run: each a shard's (run with --shard), with the same run id,
// number of shards, configuration hash and workload, each index once.
// Missing indices are returned, not an error.
func readShards(paths []string) (parts []*shardJournal, missing []int, err error) {
	if len(paths) == 0 {
		return nil, nil, errors.New("no shard journals to merge")
	}
	byIndex := map[int]*shardJournal{}
	var first *shardJournal
	for _, p := range paths {
		c, summary, killed, err := ReadJournal(p)
		if err != nil {
			return nil, nil, err
		}
		if c.Run.Shard == nil {
			return nil, nil, fmt.Errorf("%s: not a shard's journal (run %s was not run with --shard)", p, c.Run.ID)
		}
		j := &shardJournal{path: p, c: c, summary: summary, killed: killed}
		if first == nil {
			first = j
		}
		if err := first.sameRun(j); err != nil {
			return nil, nil, err
		}
		sh := c.Run.Shard
		if prev, ok := byIndex[sh.Index]; ok {
			return nil, nil, fmt.Errorf("shard %d/%d is given twice: %s and %s", sh.Index, sh.Count, prev.path, p)
		}
		byIndex[sh.Index] = j
	}
	for i := range first.c.Run.Shard.Count {
		if j, ok := byIndex[i]; ok {
			parts = append(parts, j)
		} else {
			missing = append(missing, i)
		}
	}
	return parts, missing, nil
}

// sameRun says what makes j a shard of another run than first's (nil:
// nothing).
func (first *shardJournal) sameRun(j *shardJournal) error {
	f, sh, p := first.c.Run, j.c.Run.Shard, j.path
	switch {
	case sh.RunID != f.Shard.RunID:
		return fmt.Errorf("%s: shard %d/%d of run %s, but %s is of run %s: merge the shards of one run", p, sh.Index, sh.Count, sh.RunID, first.path, f.Shard.RunID)
	case sh.Count != f.Shard.Count:
		return fmt.Errorf("%s: shard %d of %d shards, but %s says the run has %d", p, sh.Index, sh.Count, first.path, f.Shard.Count)
	case sh.ConfigHash != f.Shard.ConfigHash:
		return fmt.Errorf("%s: shard %d/%d ran configuration %s, %s ran %s%s: the shards of one run share one configuration",
			p, sh.Index, sh.Count, sh.ConfigHash, first.path, f.Shard.ConfigHash, configDiff(j.c.Run.Config, f.Config))
	case j.c.Run.Workload != f.Workload:
		return fmt.Errorf("%s: workload %s, %s ran %s", p, j.c.Run.Workload, first.path, f.Workload)
	case sh.Index < 0 || sh.Index >= sh.Count:
		return fmt.Errorf("%s: shard index %d out of 0..%d", p, sh.Index, sh.Count-1)
	}
	return nil
}

// configDiff names the keys whose values differ between two recorded
// configurations, as " (key: A here, B there; …)"; "" when it finds
// none (a configuration that does not read as a JSON object).
func configDiff(here, there json.RawMessage) string {
	var a, b map[string]any
	if json.Unmarshal(here, &a) != nil || json.Unmarshal(there, &b) != nil {
		return ""
	}
	keys := map[string]bool{}
	for k := range a {
		keys[k] = true
	}
	for k := range b {
		keys[k] = true
	}
	show := func(m map[string]any, k string) string {
		v, ok := m[k]
		if !ok {
			return "unset"
		}
		j, _ := json.Marshal(v)
		return string(j)
	}
	var diffs []string
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		if x, y := show(a, k), show(b, k); x != y {
			diffs = append(diffs, fmt.Sprintf("%s: %s here, %s there", k, x, y))
		}
	}
	if len(diffs) == 0 {
		return ""
	}
	return " (" + strings.Join(diffs, "; ") + ")"
}

// shardList is "shard 2/3" or "shards 0/3, 2/3".
func shardList(idx []int, count int) string {
	parts := make([]string, len(idx))
	for i, x := range idx {
		parts[i] = fmt.Sprintf("%d/%d", x, count)
	}
	if len(parts) == 1 {
		return "shard " + parts[0]
	}
	return "shards " + strings.Join(parts, ", ")
}
