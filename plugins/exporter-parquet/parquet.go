package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
	"github.com/rs/zerolog"

	"github.com/lmbench/lmbench/sdk/exporter"
	"github.com/lmbench/lmbench/sdk/option"
)

// SchemaVersion is the version of the results schema this exporter writes
// (docs/results-schema.md). It changes whenever a column is renamed,
// retyped or removed, or changes meaning. Version 2 added the chunk, usage,
// finish and from-scheduled columns; version 3 the stated prompt length
// and the explicit-schedule flag; version 4 the answer's text, the
// workload's scores and the declared reuse tier.
const SchemaVersion = 4

// maxGroupOffsets ends a row group early once it holds this many chunk
// offsets (16 MiB of them raw): the row group size counts rows, and a run
// of long answers (up to 16,384 offsets each) would otherwise buffer
// hundreds of MiB. Typical answers (10,000 rows of 128 chunks) stay under.
const maxGroupOffsets = 1 << 21

// pageBufferSize bounds a page before compression (parquet-go's default is
// 256 KiB). A page well below zstd's block size (128 KiB) is compressed
// without the encoder's window history, 16 MiB kept for the whole run,
// which the pages of distinct strings (response_id) and of chunk offsets
// reached: peak live heap 26-46 MiB against 6-10 MiB (BenchmarkExport100k),
// for files about 19% larger (the benchmark's rows).
const pageBufferSize = 64 << 10

// Metadata keys in the file footer.
const (
	metaSchemaVersion = "lmbench.schema_version"
	metaRunID         = "lmbench.run_id"
	metaVersion       = "lmbench.version"
	metaWorkload      = "lmbench.workload"
	metaModel         = "lmbench.model"
	metaStarted       = "lmbench.started"
	metaTagKeys       = "lmbench.tag_keys"
	metaConfig        = "lmbench.config"
	metaSummary       = "lmbench.summary"
	metaInterrupted   = "lmbench.interrupted"
)

// Row is the fixed part of one result row. The exporter's row type embeds
// it and adds one optional string column per tag key the workload declares
// (see rowType), so the schema follows the run.
//
// It is not the record itself: parquet-go takes a file's schema from a
// struct's tags, and the columns are the record in the file's own terms
// (milliseconds, UTC timestamps, null for what is unknown, dictionary
// encodings, the derived timings), which toRow computes from the record.
type Row struct {
	RunID          string     `parquet:"run_id,dict"`
	Workload       string     `parquet:"workload,dict"`
	Phase          string     `parquet:"phase,dict"`
	Seq            int64      `parquet:"seq"`
	RequestID      string     `parquet:"request_id"`
	Success        bool       `parquet:"success"`
	Error          *string    `parquet:"error,optional"`
	TTFTMs         *float64   `parquet:"ttft_ms,optional"`
	LatencyMs      float64    `parquet:"latency_ms"`
	ITLMs          float64    `parquet:"itl_ms"`
	DecodeSpeed    float64    `parquet:"decode_speed"`
	InputTokens    int64      `parquet:"input_tokens"`
	OutputTokens   int64      `parquet:"output_tokens"`
	CachedTokens   int64      `parquet:"cached_tokens"`
	ScheduledTime  *time.Time `parquet:"scheduled_time,optional,timestamp(nanosecond:utc)"`
	SubmitTime     *time.Time `parquet:"submit_time,optional,timestamp(nanosecond:utc)"`
	FirstTokenTime *time.Time `parquet:"first_token_time,optional,timestamp(nanosecond:utc)"`
	FinishTime     *time.Time `parquet:"finish_time,optional,timestamp(nanosecond:utc)"`
	// Schema version 2.
	Chunks                int64    `parquet:"chunks"`
	UsageOutputTokens     *int64   `parquet:"usage_output_tokens,optional"`
	ChunkOffsetsUs        []int64  `parquet:"chunk_offsets_us,list,optional" parquet-element:",delta"`
	ChunkOffsetsTruncated bool     `parquet:"chunk_offsets_truncated"`
	FinishReason          *string  `parquet:"finish_reason,optional,dict"`
	ResponseID            *string  `parquet:"response_id,optional"`
	ResponseModel         *string  `parquet:"response_model,optional,dict"`
	TPOTMs                *float64 `parquet:"tpot_ms,optional"`
	TTFTFromScheduledMs   *float64 `parquet:"ttft_from_scheduled_ms,optional"`
	E2EFromScheduledMs    *float64 `parquet:"e2e_from_scheduled_ms,optional"`
	// Schema version 3.
	StatedPromptTokens *int64 `parquet:"stated_prompt_tokens,optional"`
	ExplicitSchedule   bool   `parquet:"explicit_schedule"`

	Tags map[string]string `parquet:"tags" parquet-key:",dict" parquet-value:",dict"`
	// Schema version 4: the answer (null unless the run recorded
	// outputs) and the workload's scores of it by name (empty when it
	// gave none).
	OutputText *string            `parquet:"output_text,optional"`
	Scores     map[string]float64 `parquet:"scores" parquet-key:",dict"`
	TargetTier *string            `parquet:"target_tier,optional,dict"` // the reuse the workload declared; null: none named
	// The answer's first tokens' log-probabilities as JSON (null unless
	// the run asked for them, --record-logprobs); added within version 4.
	OutputLogprobs *string `parquet:"output_logprobs,optional"`
}

// tagColumn is a per-tag-key column.
type tagColumn struct {
	key    string // the tag key
	column string // its column name
}

// tagColumns names one column per distinct tag key: "tag_" + the key with
// every character outside [A-Za-z0-9_] replaced by "_" (and a numeric
// suffix if two keys collide), so any key makes a valid column name.
func tagColumns(keys []string) []tagColumn {
	var out []tagColumn
	seenKey := map[string]bool{}
	seenCol := map[string]bool{}
	for _, k := range keys {
		if seenKey[k] {
			continue
		}
		seenKey[k] = true
		col := "tag_" + strings.Map(func(r rune) rune {
			if r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
				return r
			}
			return '_'
		}, k)
		for i, base := 2, col; seenCol[col]; i++ {
			col = base + "_" + strconv.Itoa(i)
		}
		seenCol[col] = true
		out = append(out, tagColumn{key: k, column: col})
	}
	return out
}

// rowType is Row plus one *string field per tag column, in the declared
// order of the tag keys.
func rowType(tags []tagColumn) reflect.Type {
	fields := []reflect.StructField{{Name: "Row", Type: reflect.TypeFor[Row](), Anonymous: true}}
	for i, t := range tags {
		fields = append(fields, reflect.StructField{
			Name: "Tag" + strconv.Itoa(i),
			Type: reflect.TypeFor[*string](),
			Tag:  reflect.StructTag(`parquet:"` + t.column + `,optional,dict"`),
		})
	}
	return reflect.StructOf(fields)
}

// Schema returns the Parquet schema for a run with these tag keys.
func Schema(tagKeys []string) *parquet.Schema {
	return parquet.SchemaOf(reflect.New(rowType(tagColumns(tagKeys))).Interface())
}

func codec(name string) (compress.Codec, error) {
	switch name {
	case "zstd":
		return &parquet.Zstd, nil
	case "snappy":
		return &parquet.Snappy, nil
	case "gzip":
		return &parquet.Gzip, nil
	case "lz4":
		return &parquet.Lz4Raw, nil
	case "none":
		return &parquet.Uncompressed, nil
	}
	return nil, fmt.Errorf("unknown compression %q", name)
}

// Validate checks the options.
func (o Options) Validate() error {
	var errs []error
	if strings.TrimSpace(o.File) == "" {
		errs = append(errs, option.Errorf("file", "must not be empty"))
	}
	if _, err := codec(o.Compression); err != nil {
		errs = append(errs, option.Errorf("compression", "expected zstd, snappy, gzip, lz4 or none, got %q", o.Compression))
	}
	return errors.Join(errs...)
}

// parquetExporter writes rows into a temporary file next to the target and
// renames it into place on Finish, so the target name only ever holds a
// complete file (Parquet's footer, written last, is what makes it readable).
type parquetExporter struct {
	log                zerolog.Logger
	path               string // final name
	tmp                string // name while writing
	f                  *os.File
	w                  *parquet.Writer
	schema             *parquet.Schema
	row                parquet.Row // reused by Write
	tagKey             int         // leaf column index of tags.key_value.key
	tagVal             int         // leaf column index of tags.key_value.value
	scoreKey, scoreVal int         // leaf column indexes of scores.key_value.key and .value
	tags               []tagColumn
	typ                reflect.Type
	rows               int64
	// The current row group: rows and chunk offsets written into it.
	groupRows, groupOffsets int64
	groupSize               int64 // the row-group-size option
	closed                  bool
	failed                  error
	started                 time.Time
}

func newParquetExporter(o Options, env exporter.Env) (exporter.Exporter, error) {
	path := o.File
	if !filepath.IsAbs(path) {
		path = filepath.Join(env.Run.OutputDir, path)
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, option.Errorf("file", "cannot create the directory for %s: %v", path, err)
	}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return nil, option.Errorf("file", "%s is a directory, expected a file name", path)
	}
	// The temporary file is in the same directory so the final rename is
	// atomic (same file system).
	f, err := os.CreateTemp(dir, filepath.Base(path)+".*.partial")
	if err != nil {
		return nil, option.Errorf("file", "cannot create a file in %s: %v", dir, err)
	}
	if err := f.Chmod(0o644); err != nil { // CreateTemp makes it private; results are not
		f.Close()
		os.Remove(f.Name())
		return nil, fmt.Errorf("parquet: %w", err)
	}
	cdc, _ := codec(o.Compression) // checked by Validate
	e := &parquetExporter{log: env.Logger, path: path, tmp: f.Name(), f: f, tags: tagColumns(env.Run.TagKeys),
		groupSize: int64(o.RowGroupSize)}
	e.typ = rowType(e.tags)
	e.schema = parquet.SchemaOf(reflect.New(e.typ).Interface())
	var okTags, okScores bool
	e.tagKey, e.tagVal, okTags = mapColumns(e.schema, "tags")
	e.scoreKey, e.scoreVal, okScores = mapColumns(e.schema, "scores")
	if !okTags || !okScores {
		f.Close()
		os.Remove(f.Name())
		return nil, errors.New("parquet: the row schema lacks its tags or scores map")
	}
	tagKeys, _ := json.Marshal(nonNil(env.Run.TagKeys))
	opts := []parquet.WriterOption{
		e.schema,
		parquet.Compression(cdc),
		parquet.MaxRowsPerRowGroup(int64(o.RowGroupSize)),
		parquet.PageBufferSize(pageBufferSize),
		parquet.CreatedBy("lmbench", env.Run.LMBenchVersion, ""),
		parquet.KeyValueMetadata(metaSchemaVersion, strconv.Itoa(SchemaVersion)),
		parquet.KeyValueMetadata(metaRunID, env.Run.RunID),
		parquet.KeyValueMetadata(metaVersion, env.Run.LMBenchVersion),
		parquet.KeyValueMetadata(metaWorkload, env.Run.Workload),
		parquet.KeyValueMetadata(metaModel, env.Run.Model),
		parquet.KeyValueMetadata(metaTagKeys, string(tagKeys)),
		parquet.KeyValueMetadata(metaConfig, env.Run.ConfigJSON),
	}
	if !env.Run.Started.IsZero() {
		opts = append(opts, parquet.KeyValueMetadata(metaStarted, env.Run.Started.UTC().Format(time.RFC3339Nano)))
	}
	e.w = parquet.NewWriter(f, opts...)
	return e, nil
}

// mapColumns are the leaf column indexes of map column name's keys and
// values.
func mapColumns(schema *parquet.Schema, name string) (key, val int, ok bool) {
	k, okKey := schema.Lookup(name, "key_value", "key")
	v, okVal := schema.Lookup(name, "key_value", "value")
	return k.ColumnIndex, v.ColumnIndex, okKey && okVal
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// Write appends one row per record, both phases. Rows reach the file a row
// group at a time (see --parquet-row-group-size); until Finish the file has
// no footer and is not readable, which is why it carries a temporary name.
// The host's journal is what survives a killed run.
func (e *parquetExporter) Write(_ context.Context, records []exporter.Record) error {
	switch {
	case e.closed:
		return errors.New("parquet: write after finish")
	case e.failed != nil:
		return e.failed
	}
	v := reflect.New(e.typ)
	for i := range records {
		r := &records[i]
		v.Elem().SetZero()
		v.Elem().Field(0).Set(reflect.ValueOf(toRow(r)))
		for j, t := range e.tags {
			if val, ok := r.Tags[t.key]; ok {
				v.Elem().Field(j + 1).Set(reflect.ValueOf(&val))
			}
		}
		e.row = e.schema.Deconstruct(e.row[:0], v.Interface())
		sortMapEntries(e.row, e.tagKey, e.tagVal)
		sortMapEntries(e.row, e.scoreKey, e.scoreVal)
		if _, err := e.w.WriteRows([]parquet.Row{e.row}); err != nil {
			e.failed = fmt.Errorf("parquet: writing %s: %w", e.tmp, err)
			return e.failed
		}
		e.rows++
		if err := e.countRow(int64(len(r.ChunkOffsetsUs))); err != nil {
			e.failed = fmt.Errorf("parquet: writing %s: %w", e.tmp, err)
			return e.failed
		}
	}
	return nil
}

// countRow counts a row written with its offsets, and writes the row
// group out when it holds maxGroupOffsets offsets. A full group of rows is
// written out by the writer itself, before the next row.
func (e *parquetExporter) countRow(offsets int64) error {
	e.groupRows++
	e.groupOffsets += offsets
	switch {
	case e.groupRows >= e.groupSize:
		e.groupRows, e.groupOffsets = 0, 0
	case e.groupOffsets >= maxGroupOffsets:
		e.groupRows, e.groupOffsets = 0, 0
		return e.w.Flush()
	}
	return nil
}

// sortMapEntries puts the entries of one row's map column in key order.
// The writer lays a Go map out in its random iteration order, so without
// this the same tags came out in a different order from row to row and
// from one export to the next: readers that compare maps by their entries
// (DuckDB's GROUP BY tags) then split identical tag sets, and re-exporting
// a journal did not give the same file. Only the values move; each slot
// keeps its repetition and definition levels.
func sortMapEntries(row parquet.Row, keyCol, valCol int) {
	var keys, vals []int // positions in row
	for i, v := range row {
		switch v.Column() {
		case keyCol:
			keys = append(keys, i)
		case valCol:
			vals = append(vals, i)
		}
	}
	if len(keys) < 2 || len(keys) != len(vals) {
		return
	}
	type entry struct{ k, v parquet.Value }
	entries := make([]entry, len(keys))
	for j := range keys {
		entries[j] = entry{row[keys[j]], row[vals[j]]}
	}
	slices.SortStableFunc(entries, func(a, b entry) int { return bytes.Compare(a.k.ByteArray(), b.k.ByteArray()) })
	for j, e := range entries {
		k, v := row[keys[j]], row[vals[j]]
		row[keys[j]] = e.k.Level(k.RepetitionLevel(), k.DefinitionLevel(), keyCol)
		row[vals[j]] = e.v.Level(v.RepetitionLevel(), v.DefinitionLevel(), valCol)
	}
}

// toRow converts a record: seconds become milliseconds, the zero time and
// the TTFT of a request without a first token (-1 when it failed) become
// null, and the error is null for a successful request. So are what the
// engine did not report (usage output tokens, finish reason, id, model),
// a prompt length the workload did not state, an empty chunk offset list
// and the derived timings where undefined.
func toRow(r *exporter.Record) Row {
	row := Row{
		RunID: r.RunID, Workload: r.Workload, Phase: r.Phase.String(), Seq: r.Seq,
		RequestID: r.RequestID, Success: r.Success,
		LatencyMs: r.Latency * 1e3, ITLMs: r.ITL * 1e3, DecodeSpeed: r.DecodeSpeed,
		InputTokens: r.InputTokens, OutputTokens: r.OutputTokens, CachedTokens: r.CachedTokens,
		ScheduledTime: timePtr(r.Scheduled), SubmitTime: timePtr(r.Submit),
		FirstTokenTime: timePtr(r.FirstToken), FinishTime: timePtr(r.Finish),
		Chunks: r.Chunks, ChunkOffsetsTruncated: r.ChunkOffsetsTruncated,
		FinishReason: stringPtr(r.FinishReason), ResponseID: stringPtr(r.ResponseID), ResponseModel: stringPtr(r.ResponseModel),
		TPOTMs: msPtr(r.TPOT()), TTFTFromScheduledMs: msPtr(r.TTFTFromScheduled()), E2EFromScheduledMs: msPtr(r.E2EFromScheduled()),
		ExplicitSchedule: r.ExplicitSchedule, Tags: r.Tags,
		OutputText: stringPtr(r.OutputText), Scores: r.Scores, TargetTier: stringPtr(r.TargetTier),
		OutputLogprobs: stringPtr(r.OutputLogprobs),
	}
	if r.StatedPromptTokens > 0 {
		row.StatedPromptTokens = &r.StatedPromptTokens
	}
	if r.UsageOutputTokens != 0 {
		row.UsageOutputTokens = &r.UsageOutputTokens
	}
	if len(r.ChunkOffsetsUs) > 0 {
		row.ChunkOffsetsUs = r.ChunkOffsetsUs
	}
	if r.Error != "" || !r.Success {
		row.Error = &r.Error
	}
	if r.TTFT >= 0 && !r.FirstToken.IsZero() {
		ms := r.TTFT * 1e3
		row.TTFTMs = &ms
	}
	return row
}

func stringPtr(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// msPtr is seconds in milliseconds, or nil when undefined.
func msPtr(seconds float64, ok bool) *float64 {
	if !ok {
		return nil
	}
	ms := seconds * 1e3
	return &ms
}

func timePtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	u := t.UTC()
	return &u
}

// Finish records the summary in the footer, closes the file, makes it
// durable and renames it into place. On failure the temporary file is
// removed and the target name is left untouched.
func (e *parquetExporter) Finish(_ context.Context, s exporter.Summary) ([]exporter.File, error) {
	if e.closed {
		return nil, errors.New("parquet: finish called twice")
	}
	e.closed = true
	err := e.failed
	if err == nil {
		e.w.SetKeyValueMetadata(metaSummary, s.JSON)
		e.w.SetKeyValueMetadata(metaInterrupted, strconv.FormatBool(s.Interrupted))
		if werr := e.w.Close(); werr != nil {
			err = fmt.Errorf("parquet: writing %s: %w", e.tmp, werr)
		}
	}
	if err == nil {
		if serr := e.f.Sync(); serr != nil {
			err = fmt.Errorf("parquet: syncing %s: %w", e.tmp, serr)
		}
	}
	if cerr := e.f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("parquet: closing %s: %w", e.tmp, cerr)
	}
	if err == nil {
		if rerr := os.Rename(e.tmp, e.path); rerr != nil {
			err = fmt.Errorf("parquet: %w", rerr)
		}
	}
	if err != nil {
		os.Remove(e.tmp)
		return nil, err
	}
	syncDir(filepath.Dir(e.path)) // best effort: makes the rename itself durable
	e.log.Debug().Msgf("Parquet results written to %s", e.path)
	return []exporter.File{{Path: e.path, Rows: e.rows, Description: "per-request results (Parquet)"}}, nil
}

func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}
