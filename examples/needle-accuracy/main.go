// Command needle-accuracy reads the Parquet file of a needle-qa run
// (lmbench run --workload needle-qa --exporter parquet, with
// --record-outputs for the answers) and prints the exact-match accuracy
// by depth and by cached share, then every wrong answer:
//
//	go run ./examples/needle-accuracy out/bench_results.parquet
//
// It reads only the columns it names (docs/results-schema.md), so a file
// of a later schema version reads the same.
package main

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/parquet-go/parquet-go"
)

// answer is the part of a result row this program reads.
type answer struct {
	Phase        string             `parquet:"phase"`
	RequestID    string             `parquet:"request_id"`
	TTFTMs       *float64           `parquet:"ttft_ms,optional"`
	InputTokens  int64              `parquet:"input_tokens"`
	CachedTokens int64              `parquet:"cached_tokens"`
	OutputText   *string            `parquet:"output_text,optional"`
	Scores       map[string]float64 `parquet:"scores"`
	Depth        *string            `parquet:"tag_depth,optional"`
}

// Group is the accuracy of the measured answers in one group.
type Group struct {
	Label          string
	Answers, Exact int
}

// Accuracy is Exact / Answers.
func (g Group) Accuracy() float64 { return float64(g.Exact) / float64(g.Answers) }

// Report is what the program prints.
type Report struct {
	All     Group
	ByDepth []Group // in depth order
	ByShare []Group // under half cached, half or more
	Wrong   []answer
}

// Read summarizes the needle-qa results in the Parquet file at path.
func Read(path string) (Report, error) {
	rows, err := parquet.ReadFile[answer](path)
	if err != nil {
		return Report{}, err
	}
	r := Report{All: Group{Label: "all"}}
	depths, shares := map[string]*Group{}, map[string]*Group{}
	count := func(m map[string]*Group, label string, exact bool) {
		if m[label] == nil {
			m[label] = &Group{Label: label}
		}
		m[label].Answers++
		if exact {
			m[label].Exact++
		}
	}
	for _, a := range rows {
		s, scored := a.Scores["exact"]
		if a.Phase != "measure" || !scored {
			continue
		}
		exact := s == 1
		r.All.Answers++
		if exact {
			r.All.Exact++
		} else {
			r.Wrong = append(r.Wrong, a)
		}
		if a.Depth != nil {
			count(depths, *a.Depth, exact)
		}
		share := "under half cached"
		if a.InputTokens > 0 && 2*a.CachedTokens >= a.InputTokens {
			share = "half or more cached"
		}
		count(shares, share, exact)
	}
	for _, m := range []struct {
		from map[string]*Group
		to   *[]Group
	}{{depths, &r.ByDepth}, {shares, &r.ByShare}} {
		for _, g := range m.from {
			*m.to = append(*m.to, *g)
		}
		slices.SortFunc(*m.to, func(a, b Group) int { return strings.Compare(a.Label, b.Label) })
	}
	return r, nil
}

// Write prints r.
func (r Report) Write(w io.Writer) {
	line := func(g Group) {
		fmt.Fprintf(w, "  %-22s %3d answers  exact %5.1f%%\n", g.Label, g.Answers, 100*g.Accuracy())
	}
	fmt.Fprintln(w, "Accuracy (exact match):")
	line(r.All)
	for _, g := range r.ByDepth {
		line(Group{Label: "depth " + g.Label, Answers: g.Answers, Exact: g.Exact})
	}
	for _, g := range r.ByShare {
		line(g)
	}
	if len(r.Wrong) == 0 {
		return
	}
	fmt.Fprintln(w, "Wrong answers:")
	for _, a := range r.Wrong {
		text := "(not recorded: run with --record-outputs)"
		if a.OutputText != nil {
			text = fmt.Sprintf("%q", *a.OutputText)
		}
		fmt.Fprintf(w, "  %-12s cached %d of %d tokens: %s\n", a.RequestID, a.CachedTokens, a.InputTokens, text)
	}
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: needle-accuracy RESULTS.parquet")
		os.Exit(2)
	}
	r, err := Read(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	r.Write(os.Stdout)
}
