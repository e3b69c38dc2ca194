package stats

import (
	"cmp"
	"maps"
	"math"
	"slices"
	"strconv"

	"github.com/lmbench/lmbench/core/record"
)

// Cached-share groups: a request's cached tokens over its prompt's.
const (
	ShareNone = "none cached"
	ShareSome = "under half cached"
	ShareMost = "half or more cached"
)

// ShareGroups are the cached-share groups, in order.
var ShareGroups = []string{ShareNone, ShareSome, ShareMost}

// CachedShare is a record's cached tokens over its prompt tokens (0
// without a prompt count).
func CachedShare(r *record.Record) float64 {
	if r.InputTokens <= 0 {
		return 0
	}
	return float64(r.CachedTokens) / float64(r.InputTokens)
}

// ShareGroup names the group of a cached share.
func ShareGroup(share float64) string {
	switch {
	case share <= 0:
		return ShareNone
	case share < 0.5:
		return ShareSome
	}
	return ShareMost
}

// Scores are the workload's scores of the measured answers (a needle's
// exact match: its accuracy), overall, by the value of the workload's
// first tag key (needle-qa's depth) and by cached share, each group with
// its mean TTFT beside it.
type Scores struct {
	Keys []string // score names, sorted
	All  ScoreGroup
	// By is the tag key ByTag splits on ("" and no groups when the
	// workload declares none).
	By      string
	ByTag   []ScoreGroup
	ByShare []ScoreGroup
}

// ScoreGroup is the mean of each score over a group of scored requests.
type ScoreGroup struct {
	Label    string
	Requests int
	Means    map[string]float64 // by score name
	// MeanTTFTMs is the group's mean TTFT over its successful requests
	// (NaN with none).
	MeanTTFTMs float64
}

// scoreTally sums the scores as records come.
type scoreTally struct {
	keys  map[string]bool
	all   scoreSum
	tags  map[string]map[string]*scoreSum // tag key -> value -> sums
	share map[string]*scoreSum
}

type scoreSum struct {
	n     int
	sums  map[string]float64
	ttft  float64
	ttftN int
}

func (s *scoreSum) add(r *record.Record) {
	s.n++
	if s.sums == nil {
		s.sums = map[string]float64{}
	}
	for k, v := range r.Scores {
		s.sums[k] += v
	}
	if r.Success && r.TTFT >= 0 {
		s.ttft += r.TTFT * 1000
		s.ttftN++
	}
}

func (s *scoreSum) group(label string) ScoreGroup {
	g := ScoreGroup{Label: label, Requests: s.n, Means: map[string]float64{}, MeanTTFTMs: math.NaN()}
	for k, v := range s.sums {
		g.Means[k] = v / float64(s.n)
	}
	if s.ttftN > 0 {
		g.MeanTTFTMs = s.ttft / float64(s.ttftN)
	}
	return g
}

func sumOf[K comparable](m map[K]*scoreSum, k K) *scoreSum {
	s, ok := m[k]
	if !ok {
		s = &scoreSum{}
		m[k] = s
	}
	return s
}

// addScore takes a measured record the workload scored.
func (b *Builder) addScore(r *record.Record) {
	if r.Phase != record.Measure || len(r.Scores) == 0 {
		return
	}
	t := &b.scores
	if t.keys == nil {
		t.keys, t.tags, t.share = map[string]bool{}, map[string]map[string]*scoreSum{}, map[string]*scoreSum{}
	}
	for k := range r.Scores {
		t.keys[k] = true
	}
	t.all.add(r)
	for k, v := range r.Tags {
		if t.tags[k] == nil {
			t.tags[k] = map[string]*scoreSum{}
		}
		sumOf(t.tags[k], v).add(r)
	}
	sumOf(t.share, ShareGroup(CachedShare(r))).add(r)
}

// Scores are the scores of the measured answers split by the tag key by
// (the workload's first; "" for none), nil when no answer was scored.
// Tag values that are numbers sort as numbers.
func (b *Builder) Scores(by string) *Scores {
	t := &b.scores
	if t.all.n == 0 {
		return nil
	}
	s := &Scores{All: t.all.group("all"), By: by}
	s.Keys = slices.Sorted(maps.Keys(t.keys))
	if vals := t.tags[by]; by != "" {
		for _, v := range slices.SortedFunc(maps.Keys(vals), NaturalCompare) {
			s.ByTag = append(s.ByTag, vals[v].group(v))
		}
	}
	for _, g := range ShareGroups {
		if sum, ok := t.share[g]; ok {
			s.ByShare = append(s.ByShare, sum.group(g))
		}
	}
	return s
}

// NaturalCompare orders numbers by value before other strings (tag
// values such as depths and document numbers).
func NaturalCompare(a, b string) int {
	fa, ea := strconv.ParseFloat(a, 64)
	fb, eb := strconv.ParseFloat(b, 64)
	switch {
	case ea == nil && eb == nil:
		return cmp.Or(cmp.Compare(fa, fb), cmp.Compare(a, b))
	case ea == nil:
		return -1
	case eb == nil:
		return 1
	}
	return cmp.Compare(a, b)
}
