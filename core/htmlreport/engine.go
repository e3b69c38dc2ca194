package htmlreport

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"path/filepath"

	"github.com/lmbench/lmbench/core/analysis"
	"github.com/lmbench/lmbench/core/enginemetrics"
)

// engineSamples are the run's bench_metrics.jsonl samples, or why there
// are none (a sentence for the panels' Empty).
func engineSamples(r *analysis.Run) ([]enginemetrics.Sample, string) {
	em := blocksOf(r).EngineMetrics
	switch {
	case em == nil:
		return nil, "the summary has no engine_metrics block (--no-metrics, a summary recomputed from the journal, or one written before lmbench read the engine's metrics)"
	case em.Engine == nil && em.FirstError != nil:
		return nil, "the engine exposed no /metrics: " + *em.FirstError
	case em.Engine == nil:
		return nil, fmt.Sprintf("the engine exposed no metric lmbench reads at %s", em.URL)
	case r.Journal == "":
		return nil, "the run was not read from a directory: no " + enginemetrics.FileName
	}
	name := enginemetrics.FileName
	if em.SamplesFile != nil && *em.SamplesFile != "" {
		name = *em.SamplesFile
	}
	path := filepath.Join(filepath.Dir(r.Journal), name)
	f, err := enginemetrics.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Sprintf("%s is not beside the journal (the summary names it)", name)
	}
	if err != nil {
		return nil, err.Error()
	}
	var ok []enginemetrics.Sample
	for _, s := range f.Samples {
		if s.OK() {
			ok = append(ok, s)
		}
	}
	if len(ok) == 0 {
		return nil, fmt.Sprintf("every scrape of %s failed", em.URL)
	}
	return ok, ""
}

// firstKey is the first of keys the samples hold (vLLM's name, then
// SGLang's).
func firstKey(samples []enginemetrics.Sample, keys ...string) string {
	for _, k := range keys {
		for _, s := range samples {
			if _, ok := s.Snap.Values[k]; ok {
				return k
			}
		}
	}
	return ""
}

// engineMarks are the phase boundaries as the engine's samples mark them:
// the boundaries the per-phase figures are deltas between.
func (v *view) engineMarks(samples []enginemetrics.Sample) []Mark {
	var out []Mark
	for _, s := range samples {
		switch s.Point {
		case enginemetrics.PointMeasureStart:
			out = append(out, Mark{X: v.sec(s.Time), Label: "measured phase starts"})
		case enginemetrics.PointMeasureEnd:
			out = append(out, Mark{X: v.sec(s.Time), Label: "measured phase ends"})
		}
	}
	return out
}

// maxEngineSamples is how many scrapes an engine chart draws at most.
const maxEngineSamples = 2000

// thinSamples keeps every k-th sample, and every phase boundary, so that
// at most about limit remain; a hit rate is then over the longer interval
// between the samples kept.
func thinSamples(samples []enginemetrics.Sample, limit int) ([]enginemetrics.Sample, int) {
	if len(samples) <= limit {
		return samples, 1
	}
	k := (len(samples) + limit - 1) / limit
	var out []enginemetrics.Sample
	for i, s := range samples {
		if i%k == 0 || i == len(samples)-1 || s.Point != enginemetrics.PointInterval {
			out = append(out, s)
		}
	}
	return out, k
}

// engine is the engine's own gauges and prefix-cache hit rate over the
// run, from bench_metrics.jsonl.
func (v *view) engine() []Panel {
	const xlabel = "scrape time since the run's start (s)"
	queue := Panel{ID: "engine-requests", Title: "Engine: requests running and waiting", Kind: Lines,
		X: Axis{Label: xlabel}, Y: Axis{Label: "requests (engine gauge)"}}
	kv := Panel{ID: "engine-kv-usage", Title: "Engine: KV-cache usage", Kind: Lines,
		X: Axis{Label: xlabel}, Y: Axis{Label: "KV-cache usage (% of the engine's blocks)"}}
	hit := Panel{ID: "engine-prefix-hit-rate", Title: "Engine: prefix-cache hit rate per interval", Kind: Lines,
		X: Axis{Label: xlabel}, Y: Axis{Label: "prefix-cache hits / queries (tokens, 0–1)"}}
	ps := []*Panel{&queue, &kv, &hit}
	samples, why := engineSamples(v.r)
	if why != "" {
		for _, p := range ps {
			p.Empty = why
		}
		return []Panel{queue, kv, hit}
	}
	samples, k := thinSamples(samples, maxEngineSamples)
	note := ""
	if k > 1 {
		note = fmt.Sprintf(" Every %s scrape shown, and the phase boundaries'.", ordinal(k))
	}
	marks := v.engineMarks(samples)
	for _, p := range ps {
		p.Marks = marks
	}
	gauge := func(key string, scale float64) []Point {
		var pts []Point
		for _, s := range samples {
			if x, ok := s.Snap.Values[key]; ok {
				pts = append(pts, Point{v.sec(s.Time), x * scale})
			}
		}
		return pts
	}
	for _, g := range []struct{ name, vllm, sglang string }{
		{"running", enginemetrics.VLLMRunning, enginemetrics.SGLangRunning},
		{"waiting", enginemetrics.VLLMWaiting, enginemetrics.SGLangQueue},
	} {
		if k := firstKey(samples, g.vllm, g.sglang); k != "" {
			queue.Series = append(queue.Series, Series{Name: g.name + " (" + k + ")", XY: gauge(k, 1)})
		}
	}
	queue.Caption = "The engine's own count of requests running and waiting at each scrape of its /metrics (bench_metrics.jsonl), as a step line." + note
	if len(queue.Series) == 0 {
		queue.Empty = "the engine's /metrics has no running or waiting gauge"
	}
	if key := firstKey(samples, enginemetrics.VLLMKVUsage, enginemetrics.SGLangTokenUsage); key != "" {
		kv.Series = []Series{{Name: key, XY: gauge(key, 100)}}
		kv.Caption = fmt.Sprintf("%s at each scrape (the fullest engine of a data-parallel deployment), in percent.", key) + note
	} else {
		kv.Empty = "the engine's /metrics has no KV-cache usage gauge"
	}
	for _, c := range []struct{ name, queries, hits string }{
		{"prefix cache", enginemetrics.VLLMPrefixQueries, enginemetrics.VLLMPrefixHits},
		{"KV connector (external)", enginemetrics.VLLMExternalQueries, enginemetrics.VLLMExternalHits},
		{"prefix cache (SGLang)", enginemetrics.SGLangPromptTokens, enginemetrics.SGLangCachedTokens},
	} {
		if s := hitRates(v, samples, c.queries, c.hits); len(s.XY) > 0 {
			s.Name = c.name
			hit.Series = append(hit.Series, s)
		}
	}
	hit.Caption = "Between consecutive scrapes, the growth of the engine's prefix-cache hit counter over its query counter (tokens), drawn across the interval; an interval without a query is left out." + note
	if len(hit.Series) == 0 {
		hit.Empty = "no interval between two scrapes had a prefix-cache query (or the engine has no such counters)"
	}
	return []Panel{queue, kv, hit}
}

// hitRates is hits/queries over each interval between consecutive samples
// holding both counters, as a step line: an interval without a query, or
// over which a counter went down (the engine restarted), ends the line
// with a NaN point, which the renderer leaves out.
func hitRates(v *view, samples []enginemetrics.Sample, queries, hits string) Series {
	var s Series
	var prev *enginemetrics.Sample
	open := false
	for i := range samples {
		cur := &samples[i]
		q, okq := cur.Snap.Values[queries]
		h, okh := cur.Snap.Values[hits]
		if !okq || !okh {
			continue
		}
		if prev != nil {
			dq, dh := q-prev.Snap.Values[queries], h-prev.Snap.Values[hits]
			if dq > 0 && dh >= 0 {
				s.XY = append(s.XY, Point{v.sec(prev.Time), dh / dq}, Point{v.sec(cur.Time), dh / dq})
				open = true
			} else if open {
				s.XY = append(s.XY, Point{v.sec(prev.Time), math.NaN()})
				open = false
			}
		}
		prev = cur
	}
	return s
}
