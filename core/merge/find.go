package merge

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"time"

	"github.com/lmbench/lmbench/core/record"
)

// pollEvery is how often a merge with Wait looks for the shards again.
const pollEvery = 2 * time.Second

// journals returns the journals the sources name once every shard's is
// complete (has its summary) or, when Wait is 0 or has passed, as they
// are; s3:// sources are fetched by f.
func (m Merge) journals(ctx context.Context, f *fetcher) ([]string, error) {
	deadline := time.Now().Add(m.Wait)
	var last string
	for {
		local, err := f.fetch(ctx, m.Sources) // s3:// sources: the journals uploaded so far
		if err != nil {
			return nil, err
		}
		journals, err := shardJournals(local)
		done, why := false, ""
		if err == nil {
			done, why = shardsComplete(journals)
		} else {
			why = err.Error()
		}
		if m.Wait == 0 || done || time.Now().After(deadline) {
			if err != nil {
				return nil, err
			}
			if !done && m.Wait > 0 {
				m.tell(fmt.Sprintf("stopped waiting after %s: %s", m.Wait, why))
			}
			return journals, nil
		}
		if why != last {
			m.tell("waiting: " + why)
			last = why
		}
		select {
		case <-ctx.Done():
			return nil, errors.New("interrupted while waiting for the shards")
		case <-time.After(pollEvery):
		}
	}
}

func (m Merge) tell(msg string) {
	if m.OnWait != nil {
		m.OnWait(msg)
	}
}

// shardJournals finds the journals the arguments name: a journal file, a
// directory holding one, or a directory whose subdirectories do.
func shardJournals(args []string) ([]string, error) {
	var out []string
	for _, a := range args {
		st, err := os.Stat(a)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", a, err)
		}
		if !st.IsDir() {
			out = append(out, a)
			continue
		}
		if j := filepath.Join(a, record.JournalName); exists(j) {
			out = append(out, j)
			continue
		}
		found, err := subShards(a)
		if err != nil {
			return nil, err
		}
		if len(found) == 0 {
			return nil, fmt.Errorf("%s: no shard's %s in it or in its subdirectories", a, record.JournalName)
		}
		out = append(out, found...)
	}
	sort.Strings(out)
	return slices.Compact(out), nil
}

// subShards are the shards' journals in dir's subdirectories. Only
// shards': a merged run (an earlier merge's output kept beside the
// shards) or another run is left out.
func subShards(dir string) ([]string, error) {
	subs, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, d := range subs {
		j := filepath.Join(dir, d.Name(), record.JournalName)
		if !d.IsDir() || !exists(j) {
			continue
		}
		if run, err := record.ReadRun(j); err != nil || run.Shard == nil {
			continue
		}
		out = append(out, j)
	}
	return out, nil
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// shardsComplete says whether every shard of the run has a journal with
// its summary, and if not, what is lacking.
func shardsComplete(journals []string) (bool, string) {
	count, have, pending := 0, map[int]bool{}, 0
	for _, j := range journals {
		c, err := record.ScanJournal(j, func(*record.Record) error { return nil })
		if err != nil || c.Run.Shard == nil {
			continue // readShards says what is wrong with it
		}
		count = c.Run.Shard.Count
		if c.Summary == nil {
			pending++
			continue
		}
		have[c.Run.Shard.Index] = true
	}
	switch {
	case count == 0:
		return false, "no shard's journal yet"
	case len(have) == count:
		return true, ""
	}
	return false, fmt.Sprintf("%d of %d shards finished (%d running)", len(have), count, pending)
}
