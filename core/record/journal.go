package record

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/lmbench/lmbench/core/internal/jsonenc"
	"github.com/lmbench/lmbench/sdk/protocol"
)

// JournalName is the journal's file name inside the output directory,
// SummaryName bench_summary.json's (--json).
const (
	JournalName = "bench_journal.jsonl"
	SummaryName = "bench_summary.json"
)

// JournalVersion is the version this lmbench writes (in the first line).
// Version 1 journals (lmbench 0.1, protobuf JSON) are still read.
const JournalVersion = 2

// Journal appends one JSON line per event: a "run" header, a "request"
// line per finished request (both phases), and a "summary" line at the
// end. Append buffers; Flush hands the lines to the OS, so a killed host
// loses only requests still in flight.
type Journal struct {
	mu   sync.Mutex
	f    *os.File
	w    *bufio.Writer
	path string
	buf  []byte
}

// CreateJournal creates (truncates) the journal at path and writes the header.
func CreateJournal(path string, run Run) (*Journal, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	j := &Journal{f: f, w: bufio.NewWriterSize(f, 64<<10), path: path}
	b, err := json.Marshal(journalLine{Kind: "run", Version: JournalVersion, Run: toJSONRun(run)})
	if err == nil {
		j.w.Write(b)
		err = j.w.WriteByte('\n')
	}
	if err == nil {
		err = j.flush()
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("journal %s: %w", path, err)
	}
	return j, nil
}

// Path returns the journal's path.
func (j *Journal) Path() string { return j.path }

// Append writes records (buffered); call Flush after a batch.
func (j *Journal) Append(recs ...*Record) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	for _, r := range recs {
		j.buf = append(j.buf[:0], `{"kind":"request","record":`...)
		j.buf = AppendJSON(j.buf, r)
		j.buf = append(j.buf, "}\n"...)
		if _, err := j.w.Write(j.buf); err != nil {
			return fmt.Errorf("journal %s: %w", j.path, err)
		}
	}
	return nil
}

// AppendScores writes the workload's scores of finished requests
// (buffered; call Flush after a batch), one "score" line each: a request
// is journaled as it finishes, before the workload has judged its
// answer, and the reader puts each request's scores on its record.
func (j *Journal) AppendScores(scores ...protocol.Score) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	for _, s := range scores {
		j.buf = append(j.buf[:0], `{"kind":"score","phase":`...)
		j.buf = jsonenc.AppendString(j.buf, s.Phase.String())
		j.buf = append(j.buf, `,"request_id":`...)
		j.buf = jsonenc.AppendString(j.buf, s.RequestID)
		j.buf = append(j.buf, `,"scores":`...)
		j.buf = appendScores(j.buf, s.Values)
		j.buf = append(j.buf, "}\n"...)
		if _, err := j.w.Write(j.buf); err != nil {
			return fmt.Errorf("journal %s: %w", j.path, err)
		}
	}
	return nil
}

// scoreLine is a "score" line's prefix: lines are written with their
// keys in a fixed order, so one is known without decoding it.
var scoreLine = []byte(`{"kind":"score",`)

// readScores reads the scores of a journal's "score" lines, by scoreKey.
// A torn last line is skipped, as ScanJournal does.
func readScores(path string) (map[string]map[string]float64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]map[string]float64{}
	br := bufio.NewReaderSize(f, 1<<20)
	for {
		line, rerr := br.ReadBytes('\n')
		if bytes.HasPrefix(line, scoreLine) && line[len(line)-1] == '\n' {
			var s struct {
				Phase     string             `json:"phase"`
				RequestID string             `json:"request_id"`
				Scores    map[string]float64 `json:"scores"`
			}
			if err := json.Unmarshal(line, &s); err != nil {
				return nil, fmt.Errorf("%s: score line: %v", path, err)
			}
			out[s.Phase+"\x00"+s.RequestID] = s.Scores
		}
		if rerr == io.EOF {
			return out, nil
		}
		if rerr != nil {
			return nil, fmt.Errorf("%s: %w", path, rerr)
		}
	}
}

// Flush hands buffered lines to the OS.
func (j *Journal) Flush() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.flush()
}

func (j *Journal) flush() error {
	if err := j.w.Flush(); err != nil {
		return fmt.Errorf("journal %s: %w", j.path, err)
	}
	return nil
}

// Close writes the summary line (if any), flushes, syncs and closes.
func (j *Journal) Close(summary *Summary) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	var err error
	if summary != nil && len(summary.JSON) > 0 && !json.Valid(summary.JSON) {
		err = errors.New("the summary is not JSON")
	} else if summary != nil {
		var b []byte
		if b, err = json.Marshal(journalLine{Kind: "summary", Summary: toJSONSummary(*summary)}); err == nil {
			j.w.Write(b)
			j.w.WriteByte('\n')
		}
	}
	if ferr := j.w.Flush(); err == nil {
		err = ferr
	}
	if serr := j.f.Sync(); err == nil {
		err = serr
	}
	if cerr := j.f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("journal %s: %w", j.path, err)
	}
	return nil
}

// Contents is a journal read back.
type Contents struct {
	Version int
	Run     Run
	Records []Record // every request, both phases, in completion order
	// Summary is the run's own summary; nil when the run never wrote one
	// (it was killed).
	Summary *Summary
	// Torn is set when the last line was cut short (the host was killed
	// mid-write); it is ignored.
	Torn bool
}

// ReadJournal reads a journal of any version this lmbench knows.
func ReadJournal(path string) (*Contents, error) {
	var recs []Record
	c, err := ScanJournal(path, func(r *Record) error {
		recs = append(recs, *r)
		return nil
	})
	if err != nil {
		return nil, err
	}
	c.Records = recs
	return c, nil
}

// ScanJournal reads a journal line by line, handing each request record
// to fn (the same *Record is reused: copy what you keep), and returns the
// rest (Records left nil). An error from fn stops it and is returned.
func ScanJournal(path string, fn func(*Record) error) (*Contents, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 1<<20)
	var (
		c      *Contents
		n      int
		rec    Record
		scores map[string]map[string]float64 // by phase and request id; nil when the run has none
	)
	for {
		line, rerr := br.ReadBytes('\n')
		if rerr != nil && rerr != io.EOF {
			return nil, fmt.Errorf("%s: %w", path, rerr)
		}
		if len(line) == 0 {
			break
		}
		n++
		// A line is written whole, with its newline; one without is the
		// last write of a host killed mid-line.
		complete := line[len(line)-1] == '\n'
		var head struct {
			Kind    string          `json:"kind"`
			Version int             `json:"version"`
			Run     json.RawMessage `json:"run"`
			Record  json.RawMessage `json:"record"`
			Summary json.RawMessage `json:"summary"`
		}
		if err := json.Unmarshal(line, &head); err != nil {
			if !complete && c != nil {
				c.Torn = true
				break
			}
			return nil, fmt.Errorf("%s:%d: not a journal line: %v", path, n, err)
		}
		var err error
		if c == nil {
			if c, err = header(path, head.Kind, head.Version); err != nil {
				return nil, err
			}
		}
		switch head.Kind {
		case "run":
			if c.Run, err = decodeRun(c.Version, head.Run); err == nil && len(c.Run.ScoreKeys) > 0 {
				scores, err = readScores(path)
			}
		case "request":
			if rec, err = decodeRecord(c.Version, head.Record); err == nil {
				if s, ok := scores[rec.Phase.String()+"\x00"+rec.RequestID]; ok {
					rec.Scores = s
				}
				if err = fn(&rec); err != nil {
					return nil, err
				}
			}
		case "summary":
			var s Summary
			if s, err = decodeSummary(c.Version, head.Summary); err == nil {
				c.Summary = &s
			}
		}
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %v", path, n, err)
		}
		if rerr == io.EOF {
			break
		}
	}
	if c == nil {
		return nil, fmt.Errorf("%s: empty: not an lmbench journal", path)
	}
	return c, nil
}

// header checks a journal's first line: a run header of a version this
// lmbench reads.
func header(path, kind string, version int) (*Contents, error) {
	if kind != "run" {
		return nil, fmt.Errorf("%s: no run header: not an lmbench journal", path)
	}
	if version != 1 && version != JournalVersion {
		return nil, fmt.Errorf("%s: journal version %d, this lmbench reads versions 1 and %d", path, version, JournalVersion)
	}
	return &Contents{Version: version}, nil
}

// --- the JSON forms ---

type journalLine struct {
	Kind    string       `json:"kind"`
	Version int          `json:"version,omitempty"`
	Run     *jsonRun     `json:"run,omitempty"`
	Summary *jsonSummary `json:"summary,omitempty"`
}

type jsonRun struct {
	RunID         string          `json:"run_id"`
	Workload      string          `json:"workload"`
	Model         string          `json:"model"`
	OutputDir     string          `json:"output_dir"`
	Version       string          `json:"lmbench_version"`
	TagKeys       []string        `json:"tag_keys"`
	ScoreKeys     []string        `json:"score_keys,omitempty"`
	Config        json.RawMessage `json:"config"`
	StartedUnixNs int64           `json:"started_unix_ns"`
	RequestedRate float64         `json:"requested_rate,omitempty"`
	Shard         *jsonShard      `json:"shard,omitempty"`
	Merged        []jsonShard     `json:"merged_shards,omitempty"`
	Engine        json.RawMessage `json:"engine,omitempty"`
}

type jsonShard struct {
	Index         int     `json:"index"`
	Count         int     `json:"count"`
	RunID         string  `json:"run_id"`
	ConfigHash    string  `json:"config_hash"`
	Seed          int64   `json:"seed"`
	RequestedRate float64 `json:"requested_rate,omitempty"`
	Host          string  `json:"host,omitempty"`
	StartAtUnixNs int64   `json:"start_at_unix_ns,omitempty"`
	LatenessNs    int64   `json:"lateness_ns"`
	ClockRef      string  `json:"clock_reference"`
	ClockOffsetNs int64   `json:"clock_offset_ns"`
	ClockRTTNs    int64   `json:"clock_rtt_ns"`
	ClockSamples  int     `json:"clock_samples"`
}

func toJSONShard(s Shard) jsonShard {
	return jsonShard{Index: s.Index, Count: s.Count, RunID: s.RunID, ConfigHash: s.ConfigHash, Seed: s.Seed,
		RequestedRate: s.RequestedRate, Host: s.Host, StartAtUnixNs: unixNs(s.StartAt), LatenessNs: int64(s.Lateness),
		ClockRef: s.Clock.Reference, ClockOffsetNs: int64(s.Clock.Offset), ClockRTTNs: int64(s.Clock.RTT), ClockSamples: s.Clock.Samples}
}

func fromJSONShard(j jsonShard) Shard {
	return Shard{Index: j.Index, Count: j.Count, RunID: j.RunID, ConfigHash: j.ConfigHash, Seed: j.Seed,
		RequestedRate: j.RequestedRate, Host: j.Host, StartAt: fromUnixNs(j.StartAtUnixNs), Lateness: time.Duration(j.LatenessNs),
		Clock: Clock{Reference: j.ClockRef, Offset: time.Duration(j.ClockOffsetNs), RTT: time.Duration(j.ClockRTTNs), Samples: j.ClockSamples}}
}

func toJSONRun(r Run) *jsonRun {
	cfg := r.Config
	if len(cfg) == 0 {
		cfg = json.RawMessage("{}")
	}
	j := &jsonRun{RunID: r.ID, Workload: r.Workload, Model: r.Model, OutputDir: r.OutputDir, Version: r.Version,
		TagKeys: r.TagKeys, ScoreKeys: r.ScoreKeys, Config: cfg, StartedUnixNs: unixNs(r.Started), RequestedRate: r.RequestedRate,
		Engine: r.Engine}
	if r.Shard != nil {
		s := toJSONShard(*r.Shard)
		j.Shard = &s
	}
	for _, m := range r.Merged {
		j.Merged = append(j.Merged, toJSONShard(m))
	}
	return j
}

// The summary travels as a string, so bench_summary.json's exact bytes
// (indentation included) come back out.
type jsonSummary struct {
	RunID       string   `json:"run_id"`
	Summary     *string  `json:"summary_json"`
	Total       int64    `json:"total_requests"`
	Successful  int64    `json:"successful_requests"`
	Failed      int64    `json:"failed_requests"`
	Elapsed     float64  `json:"elapsed_s"`
	Interrupted bool     `json:"interrupted"`
	Status      string   `json:"status,omitempty"`
	Reason      string   `json:"reason,omitempty"`
	MeasureNs   int64    `json:"measure_start_unix_ns,omitempty"`
	Files       []string `json:"files,omitempty"`
}

func toJSONSummary(s Summary) *jsonSummary {
	var js *string
	if len(s.JSON) > 0 {
		t := string(s.JSON)
		js = &t
	}
	return &jsonSummary{RunID: s.RunID, Summary: js, Total: s.Total, Successful: s.Successful, Failed: s.Failed,
		Elapsed: s.Elapsed, Interrupted: s.Interrupted, Status: string(s.Status), Reason: s.Reason, MeasureNs: unixNs(s.MeasureStart),
		Files: s.Files}
}

func decodeRun(version int, raw json.RawMessage) (Run, error) {
	if version == 1 {
		return decodeRunV1(raw)
	}
	var j jsonRun
	if err := json.Unmarshal(raw, &j); err != nil {
		return Run{}, fmt.Errorf("run header: %v", err)
	}
	run := Run{ID: j.RunID, Workload: j.Workload, Model: j.Model, OutputDir: j.OutputDir, Version: j.Version,
		TagKeys: j.TagKeys, ScoreKeys: j.ScoreKeys, Config: j.Config, Started: fromUnixNs(j.StartedUnixNs), RequestedRate: j.RequestedRate,
		Engine: j.Engine}
	if j.Shard != nil {
		s := fromJSONShard(*j.Shard)
		run.Shard = &s
	}
	for _, m := range j.Merged {
		run.Merged = append(run.Merged, fromJSONShard(m))
	}
	return run, nil
}

func decodeSummary(version int, raw json.RawMessage) (Summary, error) {
	if version == 1 {
		return decodeSummaryV1(raw)
	}
	var j jsonSummary
	if err := json.Unmarshal(raw, &j); err != nil {
		return Summary{}, fmt.Errorf("summary: %v", err)
	}
	s := Summary{RunID: j.RunID, Total: j.Total, Successful: j.Successful, Failed: j.Failed,
		Elapsed: j.Elapsed, Interrupted: j.Interrupted, Status: Status(j.Status), Reason: j.Reason,
		MeasureStart: fromUnixNs(j.MeasureNs), Files: j.Files}
	if j.Summary != nil {
		if !json.Valid([]byte(*j.Summary)) {
			return Summary{}, errors.New("summary: summary_json is not JSON")
		}
		s.JSON = json.RawMessage(*j.Summary)
	}
	return s, nil
}

// --- version 1: protobuf's JSON (int64 as strings, enum names, camelCase run header) ---

// flexInt reads a protobuf JSON int64: a number or a string holding one.
type flexInt int64

func (f *flexInt) UnmarshalJSON(b []byte) error {
	s := string(bytes.Trim(b, `"`))
	if s == "" || s == "null" {
		*f = 0
		return nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	*f = flexInt(n)
	return err
}

func decodeRunV1(raw json.RawMessage) (Run, error) {
	var j struct {
		RunID          string   `json:"runId"`
		Workload       string   `json:"workload"`
		Model          string   `json:"model"`
		OutputDir      string   `json:"outputDir"`
		LmbenchVersion string   `json:"lmbenchVersion"`
		TagKeys        []string `json:"tagKeys"`
		ConfigJSON     string   `json:"configJson"`
		Started        flexInt  `json:"startedUnixNs"`
	}
	if err := json.Unmarshal(raw, &j); err != nil {
		return Run{}, fmt.Errorf("run header: %v", err)
	}
	run := Run{ID: j.RunID, Workload: j.Workload, Model: j.Model, OutputDir: j.OutputDir, Version: j.LmbenchVersion,
		TagKeys: j.TagKeys, Started: fromUnixNs(int64(j.Started))}
	if json.Valid([]byte(j.ConfigJSON)) {
		run.Config = json.RawMessage(j.ConfigJSON)
	}
	return run, nil
}

func decodeRecordV1(raw json.RawMessage) (Record, error) {
	var j struct {
		RunID        string            `json:"run_id"`
		Workload     string            `json:"workload"`
		Phase        string            `json:"phase"`
		RequestID    string            `json:"request_id"`
		Tags         map[string]string `json:"tags"`
		Success      bool              `json:"success"`
		Error        string            `json:"error"`
		TTFT         float64           `json:"ttft_s"`
		Latency      float64           `json:"latency_s"`
		DecodeSpeed  float64           `json:"decode_speed"`
		ITL          float64           `json:"itl_s"`
		InputTokens  flexInt           `json:"input_tokens"`
		OutputTokens flexInt           `json:"output_tokens"`
		CachedTokens flexInt           `json:"cached_tokens"`
		Scheduled    flexInt           `json:"scheduled_unix_ns"`
		Submit       flexInt           `json:"submit_unix_ns"`
		FirstToken   flexInt           `json:"first_token_unix_ns"`
		Finish       flexInt           `json:"finish_unix_ns"`
		Seq          flexInt           `json:"seq"`
	}
	if err := json.Unmarshal(raw, &j); err != nil {
		return Record{}, fmt.Errorf("request record: %v", err)
	}
	var ph Phase
	switch j.Phase {
	case "PHASE_WARMUP", "1":
		ph = Warmup
	case "PHASE_MEASURE", "2":
		ph = Measure
	default:
		return Record{}, fmt.Errorf("request record %q: phase %q", j.RequestID, j.Phase)
	}
	return Record{RunID: j.RunID, Workload: j.Workload, Phase: ph, RequestID: j.RequestID, Tags: j.Tags,
		Success: j.Success, Error: j.Error, TTFT: j.TTFT, Latency: j.Latency, DecodeSpeed: j.DecodeSpeed, ITL: j.ITL,
		InputTokens: int64(j.InputTokens), OutputTokens: int64(j.OutputTokens), CachedTokens: int64(j.CachedTokens),
		// Version 1 did not say who set the schedule; like lmbench 0.1's
		// re-export, a request with one counts as scheduled.
		Scheduled: fromUnixNs(int64(j.Scheduled)), ExplicitSchedule: j.Scheduled != 0, Submit: fromUnixNs(int64(j.Submit)),
		FirstToken: fromUnixNs(int64(j.FirstToken)), Finish: fromUnixNs(int64(j.Finish)), Seq: int64(j.Seq)}, nil
}

func decodeSummaryV1(raw json.RawMessage) (Summary, error) {
	var j struct {
		RunID       string  `json:"run_id"`
		SummaryJSON string  `json:"summary_json"`
		Total       flexInt `json:"total_requests"`
		Successful  flexInt `json:"successful_requests"`
		Failed      flexInt `json:"failed_requests"`
		Elapsed     float64 `json:"elapsed_s"`
		Interrupted bool    `json:"interrupted"`
	}
	if err := json.Unmarshal(raw, &j); err != nil {
		return Summary{}, fmt.Errorf("summary: %v", err)
	}
	s := Summary{RunID: j.RunID, Total: int64(j.Total), Successful: int64(j.Successful), Failed: int64(j.Failed),
		Elapsed: j.Elapsed, Interrupted: j.Interrupted}
	if j.SummaryJSON != "" {
		if !json.Valid([]byte(j.SummaryJSON)) {
			return Summary{}, errors.New("summary: summary_json is not JSON")
		}
		s.JSON = json.RawMessage(j.SummaryJSON)
	}
	return s, nil
}

func orNaN(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}

func unixNs(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func fromUnixNs(ns int64) time.Time {
	if ns == 0 {
		return time.Time{}
	}
	return time.Unix(0, ns)
}

func sortedKeys[V any](m map[string]V) []string {
	if len(m) == 0 {
		return nil
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// ReadRun reads only a journal's header (its first line).
func ReadRun(path string) (Run, error) {
	f, err := os.Open(path)
	if err != nil {
		return Run{}, err
	}
	defer f.Close()
	line, err := bufio.NewReaderSize(f, 1<<16).ReadBytes('\n')
	if err != nil && (err != io.EOF || len(line) == 0) {
		return Run{}, fmt.Errorf("%s: no run header: %v", path, err)
	}
	var head struct {
		Kind    string          `json:"kind"`
		Version int             `json:"version"`
		Run     json.RawMessage `json:"run"`
	}
	if err := json.Unmarshal(line, &head); err != nil || head.Kind != "run" {
		return Run{}, fmt.Errorf("%s: no run header: not an lmbench journal", path)
	}
	if head.Version != 1 && head.Version != JournalVersion {
		return Run{}, fmt.Errorf("%s: journal version %d, this lmbench reads versions 1 and %d", path, head.Version, JournalVersion)
	}
	return decodeRun(head.Version, head.Run)
}
