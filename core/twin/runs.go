package twin

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/lmbench/lmbench/core/enginemetrics"
	"github.com/lmbench/lmbench/core/record"
	"github.com/lmbench/lmbench/core/sweep"
)

// Run is one finished run's requests as the fit reads them: each a Job
// (times in seconds from the run's first submission) beside what was
// measured.
type Run struct {
	Dir      string
	Requests []Request
	// TierNote says how cached tokens were put on tiers.
	TierNote string
}

// Request is one successful request: the job, and its measured times (in
// the job's clock).
type Request struct {
	Job
	FirstToken, Finish float64
	// Tokens are the output chunks' arrival times.
	Tokens          []float64
	TTFT, E2E, TPOT float64
	HasTPOT         bool
}

// LoadRuns reads the runs in dirs: a run's output directory, its journal,
// or a sweep's directory (each of its points). An error names the path.
func LoadRuns(dirs ...string) ([]Run, error) {
	var out []Run
	for _, d := range dirs {
		if sweep.IsSweep(d) {
			res, err := sweep.Read(d)
			if err != nil {
				return nil, err
			}
			for _, p := range res.Points {
				r, err := LoadRun(filepath.Join(d, p.Dir))
				if err != nil {
					return nil, err
				}
				out = append(out, r)
			}
			continue
		}
		r, err := LoadRun(d)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// LoadRun reads one run's journal and, when the run scraped them, the
// engine's metrics (which tier the cached tokens came from).
func LoadRun(dir string) (Run, error) {
	journal := dir
	if st, err := os.Stat(dir); err == nil && st.IsDir() {
		journal = filepath.Join(dir, record.JournalName)
	} else {
		dir = filepath.Dir(dir)
	}
	c, err := record.ReadJournal(journal)
	if errors.Is(err, fs.ErrNotExist) {
		return Run{}, fmt.Errorf("%s: no %s: not a run's output directory", dir, record.JournalName)
	}
	if err != nil {
		return Run{}, err
	}
	gpuShare, note := tierShare(filepath.Join(dir, enginemetrics.FileName))
	run := Run{Dir: dir, TierNote: note, Requests: requests(c.Records, gpuShare)}
	if len(run.Requests) == 0 {
		return Run{}, fmt.Errorf("%s: no successful request with a first token to fit on", dir)
	}
	return run, nil
}

// requests turns a run's successful records into Requests on one clock,
// putting each one's cached tokens on the tier its TargetTier names or,
// without one, gpuShare of them on the GPU and the rest on the CPU tier.
func requests(recs []record.Record, gpuShare float64) []Request {
	var ok []*record.Record
	for i := range recs {
		r := &recs[i]
		if r.Success && !r.FirstToken.IsZero() && !r.Submit.IsZero() && r.OutputTokens >= 1 {
			ok = append(ok, r)
		}
	}
	if len(ok) == 0 {
		return nil
	}
	sort.SliceStable(ok, func(a, b int) bool { return ok[a].Submit.Before(ok[b].Submit) })
	origin := ok[0].Submit
	out := make([]Request, 0, len(ok))
	for _, r := range ok {
		q := Request{Job: Job{Arrive: r.Submit.Sub(origin).Seconds(), Prompt: int(r.InputTokens), OutputTokens: int(r.OutputTokens)}}
		cached := int(r.CachedTokens)
		switch r.TargetTier {
		case "gpu":
			q.CachedGPU = cached
		case "cpu":
			q.CachedCPU = cached
		case "disk":
			q.CachedDisk = cached
		default:
			q.CachedGPU = int(float64(cached)*gpuShare + 0.5)
			q.CachedCPU = cached - q.CachedGPU
		}
		q.FirstToken = r.FirstToken.Sub(origin).Seconds()
		q.Finish = r.Finish.Sub(origin).Seconds()
		for _, off := range r.ChunkOffsetsUs {
			q.Tokens = append(q.Tokens, q.Arrive+float64(off)/1e6)
		}
		q.TTFT, q.E2E = r.TTFT, r.Latency
		q.TPOT, q.HasTPOT = r.TPOT()
		out = append(out, q)
	}
	return out
}

// tierShare is the share of the run's cached tokens the GPU tier held,
// from the engine's prefix-cache counters over the run (the GPU's own
// hits beside those a KV connector found in the tiers below), and a note
// saying so; 1 (all GPU) when the run scraped no metrics.
func tierShare(path string) (float64, string) {
	f, err := enginemetrics.ReadFile(path)
	if err != nil || len(f.Samples) < 2 {
		return 1, "no engine metrics: cached tokens taken as GPU-tier hits"
	}
	first, last := f.Samples[0].Snap.Values, f.Samples[len(f.Samples)-1].Snap.Values
	gpu := last[enginemetrics.VLLMPrefixHits] - first[enginemetrics.VLLMPrefixHits]
	ext := last[enginemetrics.VLLMExternalHits] - first[enginemetrics.VLLMExternalHits]
	if gpu+ext <= 0 {
		return 1, "the engine's metrics count no prefix-cache hit"
	}
	return gpu / (gpu + ext), fmt.Sprintf("engine metrics: %.0f%% of hits from the GPU tier, the rest from the CPU tier", 100*gpu/(gpu+ext))
}
