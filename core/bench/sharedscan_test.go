package bench

import (
	"errors"
	"sync"
	"testing"

	"github.com/lmbench/lmbench/core/record"
)

// fakeScan hands out n records and counts its passes.
func fakeScan(n int, passes *int, fail error) scanFunc {
	return func(fn func(*record.Record) error) (record.Run, error) {
		*passes++
		var r record.Record
		for i := range n {
			r.Seq = int64(i)
			if err := fn(&r); err != nil {
				return record.Run{ID: "r"}, err
			}
		}
		return record.Run{ID: "r"}, fail
	}
}

func TestSharedScanOnePassForAllReaders(t *testing.T) {
	passes := 0
	s := newSharedScan(fakeScan(5, &passes, nil), 3)
	var (
		wg   sync.WaitGroup
		seen [3][]int64
		runs [3]string
	)
	for i := range 2 {
		scan, leave := s.reader()
		wg.Go(func() {
			defer leave()
			run, err := scan(func(r *record.Record) error { seen[i] = append(seen[i], r.Seq); return nil })
			if err != nil {
				t.Errorf("reader %d: %v", i, err)
			}
			runs[i] = run.ID
		})
	}
	_, leave := s.reader() // a reader that needs no records must not hold the others
	wg.Go(leave)
	wg.Wait()
	if passes != 1 {
		t.Errorf("journal read %d times, want once", passes)
	}
	for i := range 2 {
		if len(seen[i]) != 5 || seen[i][4] != 4 || runs[i] != "r" {
			t.Errorf("reader %d saw %v (run %q), want records 0..4 of run r", i, seen[i], runs[i])
		}
	}
}

func TestSharedScanErrorReachesEveryReader(t *testing.T) {
	passes, boom := 0, errors.New("torn journal")
	s := newSharedScan(fakeScan(2, &passes, boom), 2)
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i := range 2 {
		scan, leave := s.reader()
		wg.Go(func() {
			defer leave()
			_, errs[i] = scan(func(*record.Record) error { return nil })
		})
	}
	wg.Wait()
	for i, err := range errs {
		if !errors.Is(err, boom) {
			t.Errorf("reader %d: got %v, want %v", i, err, boom)
		}
	}
}

func TestSharedScanNobodyAsks(t *testing.T) {
	passes := 0
	s := newSharedScan(fakeScan(2, &passes, nil), 1)
	_, leave := s.reader()
	leave()
	<-s.done
	if passes != 0 {
		t.Errorf("journal read %d times with no reader asking, want 0", passes)
	}
}
