package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/lmbench/lmbench/core/config"
	"github.com/lmbench/lmbench/core/export"
	"github.com/lmbench/lmbench/core/record"
	"github.com/lmbench/lmbench/core/report"
	"github.com/lmbench/lmbench/core/stats"
)

// ShardTag is the tag a merged run's records carry: the index of the
// shard that sent each.
const ShardTag = "shard"

// Merge is the shards of one sharded run to rebuild as one run.
type Merge struct {
	// Journals are the shards' journals (bench_journal.jsonl, or a
	// fallback journal), one per shard.
	Journals  []string
	OutputDir string
	Exporters []Exporter
	// Partial merges the shards found when some are missing; the merged
	// run's status is then aborted and its reason names them.
	Partial bool
	// Version is this lmbench's, recorded in the merged journal.
	Version string
	Log     zerolog.Logger
	// Stdout receives the terminal summary (nil: none).
	Stdout io.Writer
}

// Merged is what a merge made.
type Merged struct {
	Run     record.Run
	Records int
	Parts   []report.ShardPart // by index, missing ones included
	Final   stats.Final
	Status  record.Status
	Reason  string
	Summary record.Summary
	Results []export.Result
	Files   []string // the journal and summary written
	// Err is an exporter's error; the other files were written.
	Err error
}

// shardJournal is one shard's journal, read.
type shardJournal struct {
	path    string
	c       *record.Contents
	summary record.Summary // its own, or computed when it was killed
	killed  bool
}

// ReadShards reads the shards' journals and checks they are the parts of
// one run: each a shard's (run with --shard), with the same run id,
// number of shards, configuration hash and workload, each index once.
// Missing indices are returned, not an error.
func ReadShards(paths []string) (parts []*shardJournal, missing []int, err error) {
	if len(paths) == 0 {
		return nil, nil, errors.New("no shard journals to merge")
	}
	byIndex := map[int]*shardJournal{}
	var first *shardJournal
	for _, p := range paths {
		c, summary, killed, err := ReadJournal(p)
		if err != nil {
			return nil, nil, err
		}
		sh := c.Run.Shard
		if sh == nil {
			return nil, nil, fmt.Errorf("%s: not a shard's journal (run %s was not run with --shard)", p, c.Run.ID)
		}
		j := &shardJournal{path: p, c: c, summary: summary, killed: killed}
		if first == nil {
			first = j
		}
		f := first.c.Run
		switch {
		case sh.RunID != f.Shard.RunID:
			return nil, nil, fmt.Errorf("%s: shard %d/%d of run %s, but %s is of run %s: merge the shards of one run", p, sh.Index, sh.Count, sh.RunID, first.path, f.Shard.RunID)
		case sh.Count != f.Shard.Count:
			return nil, nil, fmt.Errorf("%s: shard %d of %d shards, but %s says the run has %d", p, sh.Index, sh.Count, first.path, f.Shard.Count)
		case sh.ConfigHash != f.Shard.ConfigHash:
			return nil, nil, fmt.Errorf("%s: shard %d/%d ran configuration %s, %s ran %s: the shards of one run share one configuration",
				p, sh.Index, sh.Count, sh.ConfigHash, first.path, f.Shard.ConfigHash)
		case c.Run.Workload != f.Workload:
			return nil, nil, fmt.Errorf("%s: workload %s, %s ran %s", p, c.Run.Workload, first.path, f.Workload)
		case sh.Index < 0 || sh.Index >= sh.Count:
			return nil, nil, fmt.Errorf("%s: shard index %d out of 0..%d", p, sh.Index, sh.Count-1)
		}
		if prev, ok := byIndex[sh.Index]; ok {
			return nil, nil, fmt.Errorf("shard %d/%d is given twice: %s and %s", sh.Index, sh.Count, prev.path, p)
		}
		byIndex[sh.Index] = j
	}
	n := first.c.Run.Shard.Count
	for i := range n {
		if j, ok := byIndex[i]; ok {
			parts = append(parts, j)
		} else {
			missing = append(missing, i)
		}
	}
	return parts, missing, nil
}

// Run merges: every record of every shard, its timestamps moved onto the
// reference clock (the barrier's) by the shard's offset and tagged with
// its shard, into one journal, through the exporters, and one summary
// computed from all of them as a run's is (never from the shards'
// summaries).
func (m Merge) Run(ctx context.Context) (*Merged, error) {
	parts, missing, err := ReadShards(m.Journals)
	if err != nil {
		return nil, err
	}
	count := parts[0].c.Run.Shard.Count
	if len(missing) > 0 && !m.Partial {
		return nil, fmt.Errorf("%s missing (%d of %d found): every shard's journal is needed; wait for them, or merge what there is with --partial",
			shardList(missing, count), len(parts), count)
	}
	if err := os.MkdirAll(m.OutputDir, 0o755); err != nil {
		return nil, fmt.Errorf("--output-dir %s: %w", m.OutputDir, err)
	}

	base := parts[0].c.Run
	run := record.Run{ID: base.Shard.RunID, Workload: base.Workload, Model: base.Model, OutputDir: m.OutputDir,
		Version: m.Version, TagKeys: base.TagKeys, Config: base.Config, RequestedRate: base.Shard.RequestedRate}
	if !slices.Contains(run.TagKeys, ShardTag) {
		run.TagKeys = append(slices.Clone(run.TagKeys), ShardTag)
	}
	out := &Merged{}
	var recs []record.Record
	var measureStart time.Time
	planned, sent := 0, 0
	plannedKnown := true
	measureStarts := map[int]time.Time{}
	for _, j := range parts {
		sh := *j.c.Run.Shard
		off := sh.Clock.Offset
		started := j.c.Run.Started.Add(off)
		if run.Started.IsZero() || started.Before(run.Started) {
			run.Started = started
		}
		ms := j.summary.MeasureStart
		if ms.IsZero() {
			ms = earliestMeasured(j.c.Records)
		}
		if !ms.IsZero() {
			if ms = ms.Add(off); measureStart.IsZero() || ms.Before(measureStart) {
				measureStart = ms
			}
		}
		idx := strconv.Itoa(sh.Index)
		for _, r := range j.c.Records {
			r.RunID = run.ID
			r.Scheduled, r.Submit = shift(r.Scheduled, off), shift(r.Submit, off)
			r.FirstToken, r.Finish = shift(r.FirstToken, off), shift(r.Finish, off)
			tags := make(map[string]string, len(r.Tags)+1)
			for k, v := range r.Tags {
				tags[k] = v
			}
			tags[ShardTag] = idx
			r.Tags = tags
			recs = append(recs, r)
		}
		status, reason := j.summary.Status, j.summary.Reason
		if status == "" {
			status = record.Completed
			if j.summary.Interrupted {
				status = record.Interrupted
			}
		}
		if j.killed {
			status, reason = record.Interrupted, "its journal has no summary: the shard was killed"
		}
		p, s := runCounts(j.summary.JSON)
		if p == 0 {
			plannedKnown = false
		}
		planned, sent = planned+p, sent+s
		part := report.ShardPart{Shard: sh, Dir: filepath.Dir(j.path), Status: status, Reason: reason,
			Planned: p, Sent: s, Records: len(j.c.Records), MeasureLag: -1}
		if !ms.IsZero() {
			measureStarts[sh.Index] = ms
		}
		out.Parts = append(out.Parts, part)
		run.Merged = append(run.Merged, sh)
	}
	for _, i := range missing {
		out.Parts = append(out.Parts, report.ShardPart{Shard: record.Shard{Index: i, Count: count, RunID: run.ID}, Missing: true})
	}
	sort.Slice(out.Parts, func(a, b int) bool { return out.Parts[a].Index < out.Parts[b].Index })
	for i := range out.Parts {
		if t, ok := measureStarts[out.Parts[i].Index]; ok {
			out.Parts[i].MeasureLag = t.Sub(measureStart)
		}
	}

	// Completion order on the one clock; ties keep shard order.
	sort.SliceStable(recs, func(a, b int) bool { return doneAt(&recs[a]).Before(doneAt(&recs[b])) })
	for i := range recs {
		recs[i].Seq = int64(i + 1)
	}
	out.Run, out.Records = run, len(recs)
	out.Status, out.Reason = mergedStatus(out.Parts)

	measured := 0
	f := newFinals(measureStart, len(recs))
	for i := range recs {
		if recs[i].Phase == record.Measure {
			measured++
		}
		f.add(&recs[i])
	}
	final, hasSchedule := f.final(run)
	out.Final = final
	if !plannedKnown {
		planned = 0
	}
	cfg := mergedReportConfig(parts[0].summary.JSON, run, m.OutputDir, final.Percentiles)
	rep := report.Run{ID: run.ID, Version: m.Version, Interrupted: out.Status != record.Completed, Status: out.Status,
		Reason: out.Reason, Planned: planned, Sent: sent, Finished: measured, HasSchedule: hasSchedule, Shards: out.Parts}
	if out.Status == record.Aborted {
		rep.Title = "a shard aborted"
		if len(missing) > 0 {
			rep.Title = "shards missing"
		}
	}
	summary := summaryOf(run.ID, cfg, rep, final)
	summary.MeasureStart = measureStart
	out.Summary = summary

	j, err := record.CreateJournal(filepath.Join(m.OutputDir, record.JournalName), run)
	if err != nil {
		return nil, err
	}
	for i := range recs {
		if err := j.Append(&recs[i]); err != nil {
			j.Close(nil)
			return nil, err
		}
	}
	if err := j.Close(&summary); err != nil {
		return nil, err
	}
	out.Files = append(out.Files, j.Path())
	targets, err := configureExporters(ctx, m.Exporters, run)
	if err != nil {
		return nil, err
	}
	fan := export.NewFanout(targets, export.Options{}, m.Log)
	for i := range recs {
		fan.Add(&recs[i])
	}
	out.Results = fan.Finish(summary, 5*time.Minute)
	for _, r := range out.Results {
		if r.Err != nil {
			out.Err = errors.Join(out.Err, r.Err)
		}
	}
	path := filepath.Join(m.OutputDir, "bench_summary.json")
	if err := writeFileAtomic(path, summary.JSON); err != nil {
		return nil, fmt.Errorf("JSON summary: %w", err)
	}
	out.Files = append(out.Files, path)
	if m.Stdout != nil {
		report.Terminal(m.Stdout, cfg, rep, final)
	}
	return out, nil
}

func shift(t time.Time, d time.Duration) time.Time {
	if t.IsZero() {
		return t
	}
	return t.Add(d)
}

// doneAt orders records by completion: the finish, else the submit.
func doneAt(r *record.Record) time.Time {
	if !r.Finish.IsZero() {
		return r.Finish
	}
	return r.Submit
}

// earliestMeasured is the earliest schedule or submit time of the
// measured records, for a journal that does not say when its measured
// phase began (a killed run's, and journals before lmbench 0.3).
func earliestMeasured(recs []record.Record) time.Time {
	var start time.Time
	for i := range recs {
		r := &recs[i]
		if r.Phase != record.Measure {
			continue
		}
		for _, t := range []time.Time{r.Scheduled, r.Submit} {
			if !t.IsZero() && (start.IsZero() || t.Before(start)) {
				start = t
			}
		}
	}
	return start
}

// mergedStatus is the merged run's ending: completed only when every
// shard completed; aborted when one aborted or is missing; interrupted
// otherwise. The reason names each shard that did not complete.
func mergedStatus(parts []report.ShardPart) (record.Status, string) {
	status := record.Completed
	var reasons []string
	for _, p := range parts {
		id := fmt.Sprintf("shard %d/%d", p.Index, p.Count)
		switch {
		case p.Missing:
			status = record.Aborted
			reasons = append(reasons, id+" missing from the merge")
		case p.Status == record.Aborted:
			status = record.Aborted
			reasons = append(reasons, id+" aborted: "+p.Reason)
		case p.Status == record.Interrupted:
			if status == record.Completed {
				status = record.Interrupted
			}
			reasons = append(reasons, id+" interrupted: "+p.Reason)
		}
	}
	return status, strings.Join(reasons, "; ")
}

// runCounts reads the planned and sent requests from a summary's run
// block (0 when it has none).
func runCounts(summaryJSON json.RawMessage) (planned, sent int) {
	var doc struct {
		Run struct {
			Planned *int `json:"planned_requests"`
			Sent    int  `json:"sent_requests"`
		} `json:"run"`
	}
	if json.Unmarshal(summaryJSON, &doc) != nil {
		return 0, 0
	}
	if doc.Run.Planned != nil {
		planned = *doc.Run.Planned
	}
	return planned, doc.Run.Sent
}

// mergedReportConfig is the summary's configuration block: the first
// shard's (the shards share their configuration), in the merged output
// directory.
func mergedReportConfig(summaryJSON json.RawMessage, run record.Run, outDir string, pcts []float64) report.Config {
	var doc struct {
		Config struct {
			EngineURL   string  `json:"engine_url"`
			KVGB        float64 `json:"kv_cache_volume_gb"`
			TokensPerGB int64   `json:"tokens_per_gb_kvcache"`
			Seed        int64   `json:"seed"`
			ExportCSV   bool    `json:"export_csv"`
		} `json:"config"`
	}
	_ = json.Unmarshal(summaryJSON, &doc)
	c := doc.Config
	return report.Config{EngineURL: c.EngineURL, Model: run.Model, Workload: run.Workload, KVCacheVolumeGB: c.KVGB,
		TokensPerGB: c.TokensPerGB, Seed: c.Seed, OutputDir: outDir, ExportCSV: c.ExportCSV, ExportJSON: true,
		Quiet: true, Percentiles: pcts, Tokenizer: config.ReadRecorded(run.Config).Tokenizer}
}

// shardList is "shard 2/3" or "shards 0/3, 2/3".
func shardList(idx []int, count int) string {
	parts := make([]string, len(idx))
	for i, x := range idx {
		parts[i] = fmt.Sprintf("%d/%d", x, count)
	}
	if len(parts) == 1 {
		return "shard " + parts[0]
	}
	return "shards " + strings.Join(parts, ", ")
}
