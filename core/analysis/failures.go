package analysis

import (
	"cmp"
	"slices"

	"github.com/lmbench/lmbench/core/record"
)

// FailureGroups are a phase's failures ("warmup" or "measure") by kind,
// most frequent first, each with one example: the summary's "failures"
// when it has them, otherwise the records' error texts grouped as
// written.
func FailureGroups(r *Run, phase record.Phase) (failed, requests int64, kinds []FailureKind) {
	if f, ok := r.Summary.Failures[phase.String()]; ok {
		return f.Failed, f.Requests, f.Kinds
	}
	idx := map[string]int{}
	for i := range r.Records {
		rec := &r.Records[i]
		if rec.Phase != phase {
			continue
		}
		requests++
		if rec.Success {
			continue
		}
		failed++
		label := rec.Error
		if label == "" {
			label = "(no error text)"
		}
		j, ok := idx[label]
		if !ok {
			j = len(kinds)
			idx[label] = j
			kinds = append(kinds, FailureKind{Label: label, Example: rec.Error, ExampleRequest: rec.RequestID})
		}
		kinds[j].Count++
	}
	slices.SortStableFunc(kinds, func(a, b FailureKind) int { return cmp.Compare(b.Count, a.Count) })
	return failed, requests, kinds
}
