package bench

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/lmbench/lmbench/core/record"
	"github.com/lmbench/lmbench/sdk/protocol"
)

// journalWriter is what a run writes its records to: a *record.Journal
// (tests put a failing one in its place).
type journalWriter interface {
	Append(recs ...*record.Record) error
	AppendScores(scores ...protocol.Score) error
	Flush() error
	Close(summary *record.Summary) error
	Path() string
}

// keeper writes every finished record to the run's journal before
// anything else sees it and, when the journal cannot be written (a full
// disk), keeps them anyway: from the first record the journal lost on,
// every record stays in memory and goes to a fallback journal in another
// place, a copy of the journal's good part followed by them, so one file
// still holds the whole run (lmbench export --journal rebuilds from it).
type keeper struct {
	run     record.Run
	primary journalWriter
	dirs    []string // where a fallback journal may go, in order

	failed error            // the journal's error; nil while it works
	from   int64            // once failed: the first seq the journal may lack
	kept   []*record.Record // once failed: every record from `from` on
	fb     journalWriter    // the fallback journal; nil when none could be written
	fbErr  error            // why none could be
}

// defaultFallbackDirs are where a fallback journal goes: the temporary
// directory, else the user's cache or home directory.
func defaultFallbackDirs() []string {
	dirs := []string{os.TempDir()}
	if d, err := os.UserCacheDir(); err == nil {
		dirs = append(dirs, filepath.Join(d, "lmbench"))
	}
	if d, err := os.UserHomeDir(); err == nil {
		dirs = append(dirs, d)
	}
	return dirs
}

// add writes rec to the journal, flushed. It returns the journal's error
// the first time it fails (the run must stop); rec and every later one
// are kept from then on, and add returns nil for them.
func (k *keeper) add(rec *record.Record) error {
	if k.failed == nil {
		err := k.primary.Append(rec)
		if err == nil {
			err = k.primary.Flush()
		}
		if err == nil {
			return nil
		}
		k.failed, k.from = err, rec.Seq
		k.kept = append(k.kept, rec)
		k.writeFallback()
		return err
	}
	k.kept = append(k.kept, rec)
	if k.fb != nil {
		err := k.fb.Append(rec)
		if err == nil {
			err = k.fb.Flush()
		}
		if err == nil {
			return nil
		}
		k.dropFallback()
	}
	k.writeFallback()
	return nil
}

// writeFallback writes the whole run so far to the first place that
// takes it.
func (k *keeper) writeFallback() {
	var errs []error
	for _, dir := range k.dirs {
		path := filepath.Join(dir, "lmbench-"+k.run.ID+"-journal.jsonl")
		j, err := record.CreateJournal(path, k.run)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if err := k.copyInto(j); err != nil {
			j.Close(nil)
			os.Remove(path)
			errs = append(errs, fmt.Errorf("%s: %w", path, err))
			continue
		}
		k.fb, k.fbErr = j, nil
		return
	}
	k.fbErr = errors.Join(errs...)
	if len(k.dirs) == 0 {
		k.fbErr = errors.New("no place to write one")
	}
}

func (k *keeper) dropFallback() {
	path := k.fb.Path()
	k.fb.Close(nil)
	os.Remove(path)
	k.fb = nil
}

// copyInto writes the journal's records before k.from, then the kept ones.
func (k *keeper) copyInto(j journalWriter) error {
	_, err := record.ScanJournal(k.primary.Path(), func(r *record.Record) error {
		if r.Seq < k.from {
			return j.Append(r)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if err := j.Append(k.kept...); err != nil {
		return err
	}
	return j.Flush()
}

// flush flushes whichever journal is in use.
func (k *keeper) flush() error {
	switch {
	case k.failed == nil:
		return k.primary.Flush()
	case k.fb != nil:
		return k.fb.Flush()
	}
	return nil
}

// scan hands every record of the run to fn, in completion order, and
// returns the run's journal header.
func (k *keeper) scan(fn func(*record.Record) error) (record.Run, error) {
	if k.failed != nil && k.fb != nil {
		c, err := record.ScanJournal(k.fb.Path(), fn)
		if err != nil {
			return k.run, err
		}
		return c.Run, nil
	}
	_, err := record.ScanJournal(k.primary.Path(), func(r *record.Record) error {
		if k.failed != nil && r.Seq >= k.from {
			return nil
		}
		return fn(r)
	})
	if err != nil {
		return k.run, err
	}
	for _, r := range k.kept {
		if err := fn(r); err != nil {
			return k.run, err
		}
	}
	return k.run, nil
}

// savedTo says where the run's records are once the journal failed.
func (k *keeper) savedTo() string {
	if k.fb != nil {
		return k.fb.Path()
	}
	return fmt.Sprintf("nowhere else: no fallback journal could be written (%v); %s has the records before #%d, the log the rest",
		k.fbErr, k.primary.Path(), k.from)
}

// close ends the journal in use with the summary.
func (k *keeper) close(summary *record.Summary) error {
	if k.failed == nil {
		return k.primary.Close(summary)
	}
	k.primary.Close(nil) // its error is the one already reported
	if k.fb == nil {
		return nil
	}
	return k.fb.Close(summary)
}
