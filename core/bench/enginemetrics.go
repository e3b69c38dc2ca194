package bench

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/lmbench/lmbench/core/config"
	"github.com/lmbench/lmbench/core/enginemetrics"
	"github.com/lmbench/lmbench/core/report"
	"github.com/lmbench/lmbench/sdk/protocol"
)

// MetricsPlan is how a run reads the engine's own /metrics (Plan.Metrics;
// nil: not at all).
type MetricsPlan struct {
	// URL of the exposition (enginemetrics.URLFor of the engine's URL by
	// default; the CLI resolves it).
	URL string
	// Interval between scrapes inside a phase (0: only at the phase
	// boundaries).
	Interval time.Duration
	// Timeout of one scrape (0: enginemetrics.DefaultTimeout).
	Timeout time.Duration
}

// metricsRun scrapes the engine through one run: at the start, at every
// phase boundary (in the loop's goroutine, between phases, when nothing
// of the run is in flight, so the deltas are the phase's own), every
// Interval in between, and after the loop stopped. A nil *metricsRun
// does nothing.
type metricsRun struct {
	ctx  context.Context
	s    *enginemetrics.Scraper
	log  zerolog.Logger
	plan MetricsPlan
}

// startMetrics creates the scraper and its file in the output directory;
// begin takes the run's first sample.
func startMetrics(ctx context.Context, p Plan) (*metricsRun, error) {
	if p.Metrics == nil {
		return nil, nil
	}
	s, err := enginemetrics.New(enginemetrics.Config{
		URL: p.Metrics.URL, Shown: config.RedactURL(p.Metrics.URL), Interval: p.Metrics.Interval, Timeout: p.Metrics.Timeout,
		Path: filepath.Join(p.Report.OutputDir, enginemetrics.FileName), Log: p.Log,
	})
	if err != nil {
		return nil, err
	}
	return &metricsRun{ctx: ctx, s: s, log: p.Log, plan: *p.Metrics}, nil
}

// begin takes the run's first sample and starts the interval scrapes.
func (m *metricsRun) begin() {
	if m == nil {
		return
	}
	m.s.Scrape(m.ctx, enginemetrics.PointRunStart)
	m.s.Start(m.ctx)
}

// scrape takes a sample now; nil when metrics are off.
func (m *metricsRun) scrape(ctx context.Context, point string) *enginemetrics.Sample {
	if m == nil {
		return nil
	}
	s := m.s.Scrape(ctx, point)
	return &s
}

func (m *metricsRun) phaseStarted(ph protocol.Phase) {
	if m == nil {
		return
	}
	m.s.SetPhase(ph.String())
}

// phaseEnded samples the end of a phase, and after the warmup phase
// calls between (a cache reset) before sampling the measured phase's
// start.
func (m *metricsRun) phaseEnded(ph protocol.Phase, between func()) {
	sample := func(point string) {
		if m != nil {
			m.s.Scrape(m.ctx, point)
		}
	}
	if m != nil {
		m.s.SetPhase("")
	}
	switch ph {
	case protocol.Warmup:
		sample(enginemetrics.PointWarmupEnd)
		if between != nil {
			between()
		}
		sample(enginemetrics.PointMeasureStart)
	case protocol.Measure:
		sample(enginemetrics.PointMeasureEnd)
	}
}

// finish takes the last sample, closes the file and computes the
// summary's block. lmbench's journal figures come with it for the
// ledger.
func (m *metricsRun) finish() (*report.EngineMetrics, error) {
	if m == nil {
		return nil, nil
	}
	// A fresh context: an interrupted run's ctx is done, and its last
	// sample is still wanted.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(m.ctx), 2*enginemetrics.DefaultTimeout)
	defer cancel()
	m.s.SetPhase("")
	m.s.Scrape(ctx, enginemetrics.PointRunEnd)
	err := m.s.Close()
	return engineMetricsOf(config.RedactURL(m.plan.URL), m.s.Samples(), filepath.Base(m.s.Path())), err
}

// engineMetricsOf computes the summary's engine block from the samples.
func engineMetricsOf(url string, samples []enginemetrics.Sample, file string) *report.EngineMetrics {
	e := &report.EngineMetrics{URL: url, Scrapes: len(samples), SamplesFile: file,
		Warmup: report.NaNPhase(), Measure: report.NaNPhase()}
	for _, s := range samples {
		if !s.OK() {
			e.Failed++
			if e.FirstError == "" {
				e.FirstError = s.Err
			}
			continue
		}
		if e.Engine == "" {
			e.Engine = engineOf(s.Snap)
		}
	}
	if e.Engine == "" {
		return e
	}
	phases := enginemetrics.Phases(samples)
	e.Warmup = enginePhase(phases[0], e.Engine)
	e.Measure = enginePhase(phases[1], e.Engine)
	for _, p := range phases {
		if len(p.Reset) > 0 {
			e.Notes = append(e.Notes, fmt.Sprintf("the engine's %s went down during the %s phase (did it restart?): "+
				"their deltas are left out", strings.Join(p.Reset, ", "), p.Name))
		}
	}
	return e
}

// engineOf names the engine whose metrics a snapshot holds.
func engineOf(s enginemetrics.Snapshot) string {
	var lmcache bool
	for _, pre := range []string{"vllm:", "sglang:"} {
		for k := range s.Values {
			if strings.HasPrefix(k, pre) {
				return strings.TrimSuffix(pre, ":")
			}
			lmcache = lmcache || strings.HasPrefix(k, "lmcache:")
		}
		for k := range s.Hists {
			if strings.HasPrefix(k, pre) {
				return strings.TrimSuffix(pre, ":")
			}
		}
	}
	if lmcache {
		return "lmcache"
	}
	return ""
}

// enginePhase is a phase's figures in the summary's terms, from the
// engine's own names: vLLM's prefix-cache counters, or SGLang's cached
// and prompt tokens (its cache_hit_rate gauge is a rolling figure, not the
// phase's).
func enginePhase(p enginemetrics.PhaseStats, engine string) report.EnginePhase {
	type names struct{ queries, hits, running, waiting, usage, ttft, itl, e2e string }
	n := names{enginemetrics.VLLMPrefixQueries, enginemetrics.VLLMPrefixHits, enginemetrics.VLLMRunning,
		enginemetrics.VLLMWaiting, enginemetrics.VLLMKVUsage, enginemetrics.VLLMTTFT, enginemetrics.VLLMITL,
		enginemetrics.VLLME2E}
	if engine == "sglang" {
		n = names{enginemetrics.SGLangPromptTokens, enginemetrics.SGLangCachedTokens, enginemetrics.SGLangRunning,
			enginemetrics.SGLangQueue, enginemetrics.SGLangTokenUsage, enginemetrics.SGLangTTFT,
			enginemetrics.SGLangITL, enginemetrics.SGLangE2E}
	}
	// A peak needs a sample inside the phase: a phase shorter than
	// --metrics-interval has only its boundaries', which miss it (n/a).
	gaugeMax := func(key string) float64 {
		if g, ok := p.Gauges[key]; ok && g.Inside > 0 {
			return g.Max
		}
		return math.NaN()
	}
	dist := func(key string) report.EngineDist {
		h, ok := p.Hists[key]
		if !ok {
			return report.NaNDist
		}
		ms := func(s float64) float64 { return s * 1000 }
		return report.EngineDist{Count: h.Count, Mean: ms(h.Mean()), P50: ms(h.Quantile(0.5)),
			P90: ms(h.Quantile(0.9)), P99: ms(h.Quantile(0.99))}
	}
	out := report.EnginePhase{
		PrefixQueries: p.Counter(n.queries), PrefixHits: p.Counter(n.hits),
		ExternalHits:     p.Counter(enginemetrics.VLLMExternalHits),
		LMCacheRequested: p.Counter(enginemetrics.LMCacheRequested), LMCacheHits: p.Counter(enginemetrics.LMCacheHits),
		Preemptions: p.Counter(enginemetrics.VLLMPreemptions), BlendHits: p.Counter(enginemetrics.SimBlendHits),
		RunningMax: gaugeMax(n.running), WaitingMax: gaugeMax(n.waiting), KVUsageMax: gaugeMax(n.usage),
		TTFT: dist(n.ttft), ITL: dist(n.itl), E2E: dist(n.e2e),
	}
	out.PrefixHitRate = math.NaN()
	if out.PrefixQueries > 0 {
		out.PrefixHitRate = out.PrefixHits / out.PrefixQueries
	}
	return out
}
