package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/lmbench/lmbench/sdk/exporter"
	"github.com/lmbench/lmbench/sdk/option"
	"github.com/lmbench/lmbench/sdk/pyrepr"
)

// baseColumns are the original's 11 columns, in its order, then lmbench's
// additions (five since schema version 2, two since version 3). Per-tag
// columns and extra_tags follow.
var baseColumns = []string{
	"request_id", "successful", "ttft", "request_latency", "num_input_tokens",
	"num_output_tokens", "decode_speed", "submit_time", "first_token_time",
	"finish_time", "error",
	"phase", "inter_token_latency", "scheduled_time", "cached_tokens",
	"tpot", "ttft_from_scheduled", "e2e_from_scheduled", "finish_reason", "num_chunks",
	"stated_prompt_tokens", "explicit_schedule",
}

// Validate rejects an empty file name.
func (o Options) Validate() error {
	if strings.TrimSpace(o.File) == "" {
		return option.Errorf("file", "must not be empty")
	}
	return nil
}

type csvExporter struct {
	o       Options
	log     zerolog.Logger
	path    string
	tagKeys []string
	f       *os.File
	w       *bufio.Writer
	row     []string // reused per record
	rows    int64
	closed  bool
}

func newCSVExporter(o Options, env exporter.Env) (exporter.Exporter, error) {
	path := o.File
	if !filepath.IsAbs(path) {
		path = filepath.Join(env.Run.OutputDir, path)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, option.Errorf("file", "cannot create the directory for %s: %v", path, err)
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, option.Errorf("file", "cannot create %s: %v", path, err)
	}
	e := &csvExporter{o: o, log: env.Logger, path: path, f: f, w: bufio.NewWriterSize(f, 64<<10)}
	for _, k := range env.Run.TagKeys {
		if !slices.Contains(e.tagKeys, k) {
			e.tagKeys = append(e.tagKeys, k)
		}
	}
	header := slices.Clone(baseColumns)
	for _, k := range e.tagKeys {
		header = append(header, "tag_"+k)
	}
	header = append(header, "extra_tags")
	e.row = make([]string, len(header))
	// The header goes out at once: a run killed before any Write still
	// leaves a valid file.
	writeRow(e.w, header)
	if err := e.w.Flush(); err != nil {
		f.Close()
		return nil, fmt.Errorf("csv: writing %s: %w", path, err)
	}
	return e, nil
}

// Write appends one row per record (warmup records only when asked) and
// hands them to the OS before returning, so a killed run keeps them.
func (e *csvExporter) Write(_ context.Context, records []exporter.Record) error {
	if e.closed {
		return errors.New("csv: write after finish")
	}
	for i := range records {
		r := &records[i]
		if r.Phase == exporter.Warmup && !e.o.IncludeWarmup {
			continue
		}
		e.fill(r)
		writeRow(e.w, e.row)
		e.rows++
	}
	if err := e.w.Flush(); err != nil {
		return fmt.Errorf("csv: writing %s: %w", e.path, err)
	}
	return nil
}

func (e *csvExporter) fill(r *exporter.Record) {
	e.row = append(e.row[:0],
		r.RequestID,
		pyrepr.Bool(r.Success),
		pyrepr.Float(r.TTFT),
		pyrepr.Float(r.Latency),
		strconv.FormatInt(r.InputTokens, 10),
		strconv.FormatInt(r.OutputTokens, 10),
		pyrepr.Float(r.DecodeSpeed),
		epochSeconds(r.Submit),
		epochSeconds(r.FirstToken),
		epochSeconds(r.Finish),
		r.Error,
		r.Phase.String(),
		pyrepr.Float(r.ITL),
		epochSeconds(r.Scheduled),
		strconv.FormatInt(r.CachedTokens, 10),
		seconds(r.TPOT()),
		seconds(r.TTFTFromScheduled()),
		seconds(r.E2EFromScheduled()),
		r.FinishReason,
		strconv.FormatInt(r.Chunks, 10),
		positive(r.StatedPromptTokens),
		pyrepr.Bool(r.ExplicitSchedule),
	)
	for _, k := range e.tagKeys {
		e.row = append(e.row, r.Tags[k])
	}
	e.row = append(e.row, e.extraTags(r.Tags))
}

// extraTags encodes the tags without a column of their own as a query
// string (sorted keys, k=v joined by &), readable with url.ParseQuery or
// Python's urllib.parse.parse_qsl.
func (e *csvExporter) extraTags(tags map[string]string) string {
	var keys []string
	for k := range tags {
		if !slices.Contains(e.tagKeys, k) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteByte('&')
		}
		b.WriteString(url.QueryEscape(k))
		b.WriteByte('=')
		b.WriteString(url.QueryEscape(tags[k]))
	}
	return b.String()
}

// Finish flushes and closes the file and reports it.
func (e *csvExporter) Finish(context.Context, exporter.Summary) ([]exporter.File, error) {
	if e.closed {
		return nil, errors.New("csv: finish called twice")
	}
	e.closed = true
	err := e.w.Flush()
	if cerr := e.f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("csv: writing %s: %w", e.path, err)
	}
	e.log.Debug().Msgf("CSV results written to %s", e.path)
	return []exporter.File{{Path: e.path, Rows: e.rows, Description: "per-request results"}}, nil
}

// seconds formats a derived duration as the other durations are, or as
// the empty string where it is undefined.
func seconds(v float64, ok bool) string {
	if !ok {
		return ""
	}
	return pyrepr.Float(v)
}

// positive formats a count, or the empty string for none (0).
func positive(n int64) string {
	if n <= 0 {
		return ""
	}
	return strconv.FormatInt(n, 10)
}

// epochSeconds is t as Python's time.time() float; the zero time is 0.0.
func epochSeconds(t time.Time) string {
	if t.IsZero() {
		return pyrepr.Float(0)
	}
	// Whole and fractional seconds separately: one rounding, not two.
	return pyrepr.Float(float64(t.Unix()) + float64(t.Nanosecond())/1e9)
}

// writeRow writes fields as Python's csv module does with its defaults
// (QUOTE_MINIMAL, "\r\n"): a field is quoted only when it holds a comma, a
// quote, "\r" or "\n", with quotes doubled. encoding/csv differs (it quotes
// leading spaces and rewrites "\n" inside fields as "\r\n").
func writeRow(w *bufio.Writer, fields []string) {
	for i, f := range fields {
		if i > 0 {
			w.WriteByte(',')
		}
		if !strings.ContainsAny(f, ",\"\r\n") {
			w.WriteString(f)
			continue
		}
		w.WriteByte('"')
		w.WriteString(strings.ReplaceAll(f, `"`, `""`))
		w.WriteByte('"')
	}
	w.WriteString("\r\n")
}
