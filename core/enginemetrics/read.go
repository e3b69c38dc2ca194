package enginemetrics

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
)

// File is a bench_metrics.jsonl read back: its header and every sample,
// in the order they were taken.
type File struct {
	URL       string
	IntervalS float64
	Samples   []Sample
	// Torn: the last line was cut short (a killed run) and is ignored.
	Torn bool
}

// ReadFile reads a bench_metrics.jsonl that a Scraper wrote. An error
// names the file, the line and what was wrong with it.
func ReadFile(path string) (*File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64*1024), 16<<20)
	out := &File{}
	n := 0
	var bad error
	for sc.Scan() {
		n++
		b := sc.Bytes()
		if len(b) == 0 {
			continue
		}
		if bad != nil {
			// Only the last line may be cut short.
			return nil, bad
		}
		if n == 1 {
			var h header
			if err := json.Unmarshal(b, &h); err != nil || h.Schema != Schema {
				return nil, fmt.Errorf("%s: line 1: not a %s header (want schema %q, got %.80q)", path, FileName, Schema, b)
			}
			out.URL, out.IntervalS = h.URL, h.IntervalS
			continue
		}
		var l line
		if err := json.Unmarshal(b, &l); err != nil {
			bad = fmt.Errorf("%s: line %d: %w", path, n, err)
			continue
		}
		s := Sample{Time: l.Time, Elapsed: l.ElapsedS, Point: l.Point, Snap: Snapshot{Values: l.Values, Hists: map[string]Hist{}}}
		if l.Phase != nil {
			s.Phase = *l.Phase
		}
		if l.Error != nil {
			s.Err = *l.Error
		}
		for k, h := range l.Hists {
			s.Snap.Hists[k] = Hist{Bounds: h.Bounds, Cum: h.Cumulative, Count: h.Count, Sum: h.Sum}
		}
		out.Samples = append(out.Samples, s)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if n == 0 {
		return nil, fmt.Errorf("%s: empty (want a %s header line)", path, FileName)
	}
	out.Torn = bad != nil
	return out, nil
}
