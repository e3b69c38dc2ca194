package merge

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

	"github.com/lmbench/lmbench/core/analysis"
	"github.com/lmbench/lmbench/core/config"
	"github.com/lmbench/lmbench/core/export"
	"github.com/lmbench/lmbench/core/htmlreport"
	"github.com/lmbench/lmbench/core/record"
	"github.com/lmbench/lmbench/core/report"
	"github.com/lmbench/lmbench/core/stats"
)

// ShardTag is the tag a merged run's records carry: the index of the
// shard that sent each.
const ShardTag = "shard"

// Merge is the shards of one sharded run to rebuild as one run.
type Merge struct {
	// Sources name the shards' journals: a journal file, a shard's output
	// directory, a directory whose subdirectories are shards' output
	// directories, or an s3:// URL under which shards uploaded theirs.
	Sources []string
	// Wait is how long to wait for every shard's journal to be complete
	// (to have its summary), polling; 0 merges what is there now. OnWait
	// is told what the merge is waiting for, each time that changes, and
	// when it stopped waiting with shards still running (nil: nobody).
	Wait   time.Duration
	OnWait func(msg string)

	OutputDir string
	Exporters Exporters
	// Partial merges the shards found when some are missing; the merged
	// run's status is then aborted and its reason names them.
	Partial bool
	// Version is this lmbench's, recorded in the merged journal.
	Version string
	Log     zerolog.Logger
	// Stdout receives the terminal summary (nil: none).
	Stdout io.Writer
	// Report writes the merged run's report.html (htmlreport.WriteRun)
	// once its files are written; Upload, when set, then puts the output
	// directory's files in object storage.
	Report bool
	Upload *Upload
}

// Check says what is wrong with m's settings, naming the flag, before
// anything is read.
func (m Merge) Check() error {
	switch {
	case len(m.Sources) == 0:
		return errors.New("no shard directories: give the shards' output directories (or their parent)")
	case m.Wait < 0:
		return fmt.Errorf("--wait %s: expected a duration of 0 or more", m.Wait)
	}
	return nil
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
	// Report is the report's path ("": none); Uploaded says how many
	// files went to the upload's location.
	Report   string
	Uploaded int
}

// Outcome is why the merge did not make a whole run (nil when it did):
// an exporter failed, or the run is not complete (shards missing, or one
// aborted).
func (m *Merged) Outcome() error {
	if m.Err != nil {
		return m.Err
	}
	if m.Status != record.Completed {
		return fmt.Errorf("the merged run is %s: %s", m.Status, m.Reason)
	}
	return nil
}

// Found is the number of shards merged (the parts not missing).
func (m *Merged) Found() int {
	n := 0
	for _, p := range m.Parts {
		if !p.Missing {
			n++
		}
	}
	return n
}

// Run merges: every record of every shard, its timestamps moved onto the
// reference clock (the barrier's) by the shard's offset and tagged with
// its shard, into one journal, through the exporters, and one summary
// computed from all of them as a run's is (never from the shards'
// summaries).
func (m Merge) Run(ctx context.Context) (*Merged, error) {
	f := &fetcher{log: m.Log, got: map[string]bool{}}
	defer f.close() // the fetched journals are read by then
	journals, err := m.journals(ctx, f)
	if err != nil {
		return nil, err
	}
	parts, missing, err := readShards(journals)
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
	g := newMerging(parts[0].c.Run, m.OutputDir, m.Version)
	for _, j := range parts {
		g.add(j)
	}
	g.finish(missing, count)
	out := &Merged{Run: g.run, Records: len(g.recs), Parts: g.parts}
	out.Status, out.Reason = mergedStatus(out.Parts)
	cfg, rep := m.summarize(g, parts[0].summary.JSON, out, len(missing) > 0)
	if err := m.write(ctx, g, out); err != nil {
		return nil, err
	}
	if m.Stdout != nil {
		report.Terminal(m.Stdout, cfg, rep, out.Final)
	}
	warnSpread(out.Parts, m.Log)
	return out, m.publish(ctx, out)
}

// publish writes the report and uploads the files, when m asks to. An
// error comes back with the merged run: its files are written.
func (m Merge) publish(ctx context.Context, out *Merged) error {
	if m.Report {
		path, err := htmlreport.WriteRun(m.OutputDir, m.Version)
		if err != nil {
			return fmt.Errorf("--report: %w", err)
		}
		out.Report = path
	}
	if m.Upload != nil {
		n, err := m.Upload.Put(ctx, m.OutputDir)
		if err != nil {
			return err
		}
		out.Uploaded = n
	}
	return nil
}

// summarize computes the merged run's numbers from all the records and
// its summary; it returns what the terminal summary is made of.
func (m Merge) summarize(g *merging, firstSummary json.RawMessage, out *Merged, missing bool) (report.Config, report.Run) {
	b := stats.NewBuilder(g.measureStart, len(g.recs), stats.Options{})
	measured := 0
	for i := range g.recs {
		if g.recs[i].Phase == record.Measure {
			measured++
		}
		b.Add(&g.recs[i])
	}
	final, hasSchedule := analysis.Final(b, g.run)
	out.Final = final
	planned := g.planned
	if !g.plannedKnown {
		planned = 0
	}
	cfg := mergedReportConfig(firstSummary, g.run, m.OutputDir, final.Percentiles)
	rep := report.Run{ID: g.run.ID, Version: m.Version, Interrupted: out.Status != record.Completed, Status: out.Status,
		Reason: out.Reason, Planned: planned, Sent: g.sent, Finished: measured, HasSchedule: hasSchedule, Shards: out.Parts,
		EngineProfile: report.ParseEngineProfile(g.run.Engine)}
	if out.Status == record.Aborted {
		rep.Title = "a shard aborted"
		if missing {
			rep.Title = "shards missing"
		}
	}
	out.Summary = report.Summary(cfg, rep, final)
	out.Summary.MeasureStart = g.measureStart
	return cfg, rep
}

// write writes the merged journal, the exporters' files and
// bench_summary.json.
func (m Merge) write(ctx context.Context, g *merging, out *Merged) error {
	j, err := record.CreateJournal(filepath.Join(m.OutputDir, record.JournalName), g.run)
	if err != nil {
		return err
	}
	for i := range g.recs {
		if err := j.Append(&g.recs[i]); err != nil {
			j.Close(nil)
			return err
		}
	}
	if err := j.Close(&out.Summary); err != nil {
		return err
	}
	out.Files = append(out.Files, j.Path())
	if out.Results, err = exportAll(ctx, m.Exporters, g.run, g.recs, out.Summary, m.Log); err != nil {
		return err
	}
	for _, r := range out.Results {
		if r.Err != nil {
			out.Err = errors.Join(out.Err, r.Err)
		}
	}
	path := filepath.Join(m.OutputDir, "bench_summary.json")
	if err := record.WriteFileAtomic(path, out.Summary.JSON); err != nil {
		return fmt.Errorf("JSON summary: %w", err)
	}
	out.Files = append(out.Files, path)
	return nil
}

// warnSpread warns of shards that started away from the common start, and
// of measured phases that started apart (--start-at has no gate).
func warnSpread(parts []report.ShardPart, log zerolog.Logger) {
	var spread time.Duration
	for _, p := range parts {
		if p.Missing {
			continue
		}
		spread = max(spread, p.MeasureLag)
		if late := p.Lateness; late > time.Second || late < -time.Second {
			log.Warn().Msgf("shard %d/%d started %s away from the common start: its part of the schedule ran shifted", p.Index, p.Count, late.Round(time.Millisecond))
		}
	}
	if spread > 50*time.Millisecond {
		log.Warn().Msgf("the shards' measured phases started up to %s apart: their parts of an open-loop schedule ran shifted by as much (a barrier, --barrier, starts them together)", spread.Round(time.Millisecond))
	}
}

// merging is a merge's run as the shards are added to it.
type merging struct {
	run           record.Run
	recs          []record.Record
	parts         []report.ShardPart
	measureStart  time.Time         // the earliest shard's, on the reference clock
	measureStarts map[int]time.Time // each shard's, by index
	planned, sent int
	plannedKnown  bool
}

// newMerging starts the merged run from the first shard's header.
func newMerging(base record.Run, outDir, version string) *merging {
	run := record.Run{ID: base.Shard.RunID, Workload: base.Workload, Model: base.Model, OutputDir: outDir,
		Version: version, TagKeys: base.TagKeys, Config: base.Config, RequestedRate: base.Shard.RequestedRate}
	if !slices.Contains(run.TagKeys, ShardTag) {
		run.TagKeys = append(slices.Clone(run.TagKeys), ShardTag)
	}
	return &merging{run: run, measureStarts: map[int]time.Time{}, plannedKnown: true}
}

// add adds one shard: its records on the reference clock, tagged, and its
// part.
func (g *merging) add(j *shardJournal) {
	sh := *j.c.Run.Shard
	off := sh.Clock.Offset
	if started := j.c.Run.Started.Add(off); g.run.Started.IsZero() || started.Before(g.run.Started) {
		g.run.Started = started
	}
	ms := j.summary.MeasureStart
	if ms.IsZero() {
		ms = analysis.MeasuredStart(j.c.Records)
	}
	if !ms.IsZero() {
		ms = ms.Add(off)
		if g.measureStart.IsZero() || ms.Before(g.measureStart) {
			g.measureStart = ms
		}
		g.measureStarts[sh.Index] = ms
	}
	idx := strconv.Itoa(sh.Index)
	for _, r := range j.c.Records {
		r.RunID = g.run.ID
		r.Scheduled, r.Submit = shift(r.Scheduled, off), shift(r.Submit, off)
		r.FirstToken, r.Finish = shift(r.FirstToken, off), shift(r.Finish, off)
		tags := make(map[string]string, len(r.Tags)+1)
		for k, v := range r.Tags {
			tags[k] = v
		}
		tags[ShardTag] = idx
		r.Tags = tags
		g.recs = append(g.recs, r)
	}
	p, s := runCounts(j.summary.JSON)
	if p == 0 {
		g.plannedKnown = false
	}
	g.planned, g.sent = g.planned+p, g.sent+s
	status, reason := j.status()
	g.parts = append(g.parts, report.ShardPart{Shard: sh, Dir: filepath.Dir(j.path), Status: status, Reason: reason,
		Planned: p, Sent: s, Records: len(j.c.Records), MeasureLag: -1})
	g.run.Merged = append(g.run.Merged, sh)
}

// finish adds the missing shards' parts, orders the parts by index with
// each one's lag behind the first measured phase, and the records by
// completion on the one clock (ties keep shard order), numbered anew.
func (g *merging) finish(missing []int, count int) {
	for _, i := range missing {
		g.parts = append(g.parts, report.ShardPart{Shard: record.Shard{Index: i, Count: count, RunID: g.run.ID}, Missing: true})
	}
	sort.Slice(g.parts, func(a, b int) bool { return g.parts[a].Index < g.parts[b].Index })
	for i := range g.parts {
		if t, ok := g.measureStarts[g.parts[i].Index]; ok {
			g.parts[i].MeasureLag = t.Sub(g.measureStart)
		}
	}
	sort.SliceStable(g.recs, func(a, b int) bool { return doneAt(&g.recs[a]).Before(doneAt(&g.recs[b])) })
	for i := range g.recs {
		g.recs[i].Seq = int64(i + 1)
	}
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
		Quiet: true, Percentiles: pcts, Tokenizer: config.ReadRecorded(run.Config).Tokenizer, Sim: report.SimSettings(run.Config),
		Options: report.WorkloadSettings(run.Config, config.IsRunKey)}
}
