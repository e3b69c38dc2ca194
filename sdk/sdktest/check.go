package sdktest

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/rs/zerolog"

	"github.com/lmbench/lmbench/sdk/exporter"
	"github.com/lmbench/lmbench/sdk/option"
	"github.com/lmbench/lmbench/sdk/protocol"
	"github.com/lmbench/lmbench/sdk/workload"
)

// CheckWorkload checks def against the workload contract and reports every
// violation on t:
//
//   - Name and Prefix are kebab-case, Summary is set, New is set;
//   - the options schema is valid: kebab-case unique names, help on every
//     option, defaults within min/max, enum defaults in the enum, min/max
//     only on numbers and enum only on strings;
//   - Configure accepts the defaults overridden by o.Options (pass small
//     values there if the defaults make a long run);
//   - both phases finish within o.MaxSteps, every request id is unique in
//     the run, every tag key is declared in TagKeys, a non-zero
//     PlannedRequests matches what MEASURE sent, and MEASURE sends something;
//   - a second run with the same seed gives an identical transcript;
//   - a run through gRPC gives the same transcript;
//   - a run against a host older than every capability (protocol minor 0)
//     sends the same requests at the same times, unless the workload
//     refuses that host outright (one that needs tool calls, say).
func CheckWorkload[O any](t *testing.T, def workload.Definition[O], o Options) {
	t.Helper()
	for _, err := range workloadProblems(t, def, o) {
		t.Errorf("CheckWorkload(%s): %v", def.Name, err)
	}
}

func workloadProblems[O any](t testing.TB, def workload.Definition[O], o Options) []error {
	probs := schemaProblems(def.Name, def.Prefix, def.Summary, def.Defaults)
	if def.New == nil {
		probs = append(probs, errors.New("Definition.New is nil"))
	}
	if len(probs) > 0 {
		return probs // running it would only repeat them
	}
	first, err := RunE(def, o)
	if err != nil {
		return append(probs, fmt.Errorf("run with default options (overridden by %v): %w", o.Options, err))
	}
	probs = append(probs, transcriptProblems(def.TagKeys, first)...)

	second, err := RunE(def, o)
	if err != nil {
		probs = append(probs, fmt.Errorf("second run with the same seed: %w", err))
	} else if d := cmp.Diff(first, second); d != "" {
		probs = append(probs, fmt.Errorf("two runs with the same seed differ (-first +second):\n%s", d))
	}

	older := o
	older.HostCapabilities = []string{}
	if old, err := RunE(def, older); err == nil {
		// IgnoreEOS and the expected reuse are what only a host with the
		// capability passes on.
		if d := cmp.Diff(first.Requests, old.Requests, cmpopts.EquateEmpty(),
			cmpopts.IgnoreFields(Sent{}, "IgnoreEOS", "ExpectedCachedTokens", "TargetTier")); d != "" {
			probs = append(probs, fmt.Errorf("with a host of protocol minor 0 (no capabilities) the requests differ (-newest host +older host):\n%s", d))
		}
	}

	viaGRPC, err := drive(context.Background(), def.Name, dialGRPC(t, def, o), o)
	if err != nil {
		probs = append(probs, fmt.Errorf("run through gRPC: %w", err))
	} else if d := cmp.Diff(first, viaGRPC, cmpopts.EquateEmpty()); d != "" {
		probs = append(probs, fmt.Errorf("the run through gRPC differs (-in-process +gRPC):\n%s", d))
	}
	return probs
}

func transcriptProblems(tagKeys []string, tr *Transcript) []error {
	var probs []error
	seen := map[string]string{} // id -> phase
	undeclared := map[string]bool{}
	for _, s := range tr.Requests {
		if ph, ok := seen[s.ID]; ok {
			probs = append(probs, fmt.Errorf("request id %q is sent in %s and again in %s; ids must be unique in a run", s.ID, ph, s.Phase))
		}
		seen[s.ID] = s.Phase
		for _, k := range slices.Sorted(maps.Keys(s.Tags)) {
			if !slices.Contains(tagKeys, k) && !undeclared[k] {
				undeclared[k] = true
				probs = append(probs, fmt.Errorf("tag key %q (on request %s) is not in Definition.TagKeys %q", k, s.ID, tagKeys))
			}
		}
	}
	measured := len(tr.Measured())
	if measured == 0 {
		probs = append(probs, errors.New("the measure phase sent no requests"))
	}
	if tr.Planned > 0 && tr.Planned != measured {
		probs = append(probs, fmt.Errorf("PlannedRequests() = %d, but the measure phase sent %d requests", tr.Planned, measured))
	}
	return probs
}

var kebab = regexp.MustCompile(`^[a-z][a-z0-9]*(-[a-z0-9]+)*$`)

// schemaProblems checks what Describe reports: the plugin's names and its
// option schema.
func schemaProblems(name, prefix, summary string, defaults any) []error {
	var probs []error
	if !kebab.MatchString(name) {
		probs = append(probs, fmt.Errorf("Definition.Name %q must be kebab-case (the binary is lmbench-<kind>-<name>)", name))
	}
	if !kebab.MatchString(prefix) {
		probs = append(probs, fmt.Errorf("Definition.Prefix %q must be kebab-case (flags are --<prefix>-<option>)", prefix))
	}
	if summary == "" {
		probs = append(probs, errors.New("Definition.Summary is empty (it is shown in lmbench's help)"))
	}
	specs, err := option.Specs(defaults)
	if err != nil {
		return append(probs, fmt.Errorf("options: %w", err))
	}
	for _, sp := range specs {
		probs = append(probs, specProblems(&sp)...)
	}
	// Tags Specs ignores on the wrong type are mistakes too.
	st := reflect.TypeOf(defaults)
	for i := range st.NumField() {
		f := st.Field(i)
		if _, ok := f.Tag.Lookup("opt"); !ok || !f.IsExported() {
			continue
		}
		if _, ok := f.Tag.Lookup("enum"); ok && f.Type.Kind() != reflect.String {
			probs = append(probs, fmt.Errorf("field %s: enum tag on a %s field has no effect", f.Name, f.Type))
		}
		if a := f.Tag.Get("advanced"); a != "" && a != "true" && a != "false" {
			probs = append(probs, fmt.Errorf("field %s: advanced tag %q must be true or false", f.Name, a))
		}
	}
	return probs
}

func specProblems(sp *protocol.OptionSpec) []error {
	var probs []error
	name := sp.Name
	if sp.Help == "" {
		probs = append(probs, fmt.Errorf("option %s has no help text (shown in --help and the form)", name))
	}
	var def float64
	switch sp.Type {
	case protocol.OptionInt, protocol.OptionDuration:
		d, _ := sp.Default.(int64)
		def = float64(d)
	case protocol.OptionFloat:
		def, _ = sp.Default.(float64)
	default:
		if sp.Min != nil || sp.Max != nil {
			probs = append(probs, fmt.Errorf("option %s: min/max only apply to numbers and durations", name))
		}
	}
	numeric := sp.Type == protocol.OptionInt || sp.Type == protocol.OptionFloat || sp.Type == protocol.OptionDuration
	if numeric {
		if sp.Min != nil && def < *sp.Min {
			probs = append(probs, fmt.Errorf("option %s: default %v is below min %v", name, def, *sp.Min))
		}
		if sp.Max != nil && def > *sp.Max {
			probs = append(probs, fmt.Errorf("option %s: default %v is above max %v", name, def, *sp.Max))
		}
		if sp.Min != nil && sp.Max != nil && *sp.Min > *sp.Max {
			probs = append(probs, fmt.Errorf("option %s: min %v is above max %v", name, *sp.Min, *sp.Max))
		}
	}
	seen := map[string]bool{}
	for _, v := range sp.Enum {
		switch {
		case v == "":
			probs = append(probs, fmt.Errorf("option %s: empty enum value", name))
		case seen[v]:
			probs = append(probs, fmt.Errorf("option %s: duplicate enum value %q", name, v))
		}
		seen[v] = true
	}
	return probs
}

// CheckExporter checks def against the exporter contract and reports every
// violation on t:
//
//   - Name and Prefix are kebab-case, Summary is set, New is set, and the
//     options schema is valid (as in CheckWorkload);
//   - Configure accepts the defaults overridden by opts;
//   - Finish without any Write succeeds and reports only files that exist,
//     with no rows;
//   - Write after Finish is rejected;
//   - writing a few sample records (both phases, a failure, tags from
//     run.TagKeys plus an undeclared one) then Finish succeeds, in-process
//     and through gRPC, and the reported files exist.
//
// Every run gets its own exporter and, when run.OutputDir is empty, its own
// temporary directory; empty RunID, Workload, Model and Started are filled
// in.
func CheckExporter[O any](t *testing.T, def exporter.Definition[O], opts map[string]any, run exporter.RunMetadata) {
	t.Helper()
	for _, err := range exporterProblems(t, def, opts, run) {
		t.Errorf("CheckExporter(%s): %v", def.Name, err)
	}
}

func exporterProblems[O any](t testing.TB, def exporter.Definition[O], opts map[string]any, run exporter.RunMetadata) []error {
	probs := schemaProblems(def.Name, def.Prefix, def.Summary, def.Defaults)
	if def.New == nil {
		probs = append(probs, errors.New("Definition.New is nil"))
	}
	if len(probs) > 0 {
		return probs
	}
	if run.RunID == "" {
		run.RunID = "sdktest-run"
	}
	if run.Workload == "" {
		run.Workload = "sdktest-workload"
	}
	if run.Model == "" {
		run.Model = "test-model"
	}
	if run.Started.IsZero() {
		run.Started = time.Unix(1700000000, 0)
	}
	fresh := func() exporter.RunMetadata {
		r := run
		if r.OutputDir == "" {
			r.OutputDir = t.TempDir()
		}
		return r
	}
	ctx := context.Background()

	// Finish without Write, then Write after Finish.
	r := fresh()
	srv := exporter.NewServer(def, zerolog.Nop())
	if err := configureExporter(ctx, srv, opts, r); err != nil {
		return append(probs, fmt.Errorf("configure with default options (overridden by %v): %w", opts, err))
	}
	files, err := finishExporter(ctx, srv, exporter.Summary{RunID: r.RunID, JSON: "{}"})
	if err != nil {
		probs = append(probs, fmt.Errorf("Finish without any Write: %w", err))
	} else {
		probs = append(probs, fileProblems("Finish without any Write", r.OutputDir, files, true)...)
	}
	err = srv.Write(ctx, sampleRecords(r)[:1])
	if !errors.Is(err, protocol.ErrOutOfOrder) {
		probs = append(probs, fmt.Errorf("Write after Finish: got %v, want an error wrapping protocol.ErrOutOfOrder", err))
	}

	// Sample records, in-process and through gRPC.
	run1 := func(name string, c protocol.ExporterService) {
		r := fresh()
		recs := sampleRecords(r)
		files, err := driveExporter(ctx, c, opts, r, [][]exporter.Record{recs[:2], recs[2:]}, sampleSummary(r, recs))
		if err != nil {
			probs = append(probs, fmt.Errorf("%s: %w", name, err))
			return
		}
		probs = append(probs, fileProblems(name, r.OutputDir, files, false)...)
	}
	run1("Write and Finish", exporter.NewServer(def, zerolog.Nop()))
	run1("Write and Finish through gRPC", dialExporterGRPC(t, def))
	return probs
}

// fileProblems checks that the files an exporter reported exist; a
// relative path is taken as relative to the output directory.
func fileProblems(step, dir string, files []exporter.File, empty bool) []error {
	var probs []error
	for _, f := range files {
		if f.Path == "" {
			probs = append(probs, fmt.Errorf("%s: a reported file has no path", step))
			continue
		}
		p := f.Path
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		fi, err := os.Stat(p)
		switch {
		case err != nil:
			probs = append(probs, fmt.Errorf("%s: reported file: %w", step, err))
		case !fi.Mode().IsRegular():
			probs = append(probs, fmt.Errorf("%s: reported file %s is not a regular file", step, p))
		}
		if empty && f.Rows != 0 {
			probs = append(probs, fmt.Errorf("%s: file %s reports %d rows, want 0", step, p, f.Rows))
		}
	}
	return probs
}

// sampleRecords covers both phases, a failure with no first token, and
// tags: the run's declared keys plus one it did not declare.
func sampleRecords(run exporter.RunMetadata) []exporter.Record {
	at := func(ms int) time.Time { return run.Started.Add(time.Duration(ms) * time.Millisecond) }
	tags := func(i int) map[string]string {
		m := map[string]string{"undeclared": "x"}
		for _, k := range run.TagKeys {
			m[k] = fmt.Sprint(i)
		}
		return m
	}
	recs := []exporter.Record{
		{Phase: exporter.Warmup, RequestID: "warmup_0", Success: true, TTFT: 0.05, Latency: 0.2,
			InputTokens: 100, OutputTokens: 1, Submit: at(0), FirstToken: at(50), Finish: at(200)},
		{Phase: exporter.Measure, RequestID: "q0", Success: true, TTFT: 0.125, Latency: 1.5, DecodeSpeed: 21.5, ITL: 0.04,
			InputTokens: 1000, OutputTokens: 32, CachedTokens: 900, Scheduled: at(1000), Submit: at(1001), FirstToken: at(1126), Finish: at(2501),
			Chunks: 3, UsageOutputTokens: 32, ChunkOffsetsUs: []int64{125_000, 170_000, 1_400_000}, ChunkOffsetsTruncated: true,
			FinishReason: "length", ResponseID: "chatcmpl-q0", ResponseModel: "org/m", ExplicitSchedule: true, StatedPromptTokens: 998},
		{Phase: exporter.Measure, RequestID: "q1", Error: `HTTP 500: "overloaded", retry`, TTFT: -1, Latency: 0.0625,
			Scheduled: at(1500), Submit: at(1500), Finish: at(1562)},
		{Phase: exporter.Measure, RequestID: "q2", Success: true, TTFT: 0.5, Latency: 0.75,
			InputTokens: 10, OutputTokens: 5, Submit: at(1600), FirstToken: at(2100), Finish: at(2350)},
	}
	for i := range recs {
		recs[i].RunID, recs[i].Workload, recs[i].Tags, recs[i].Seq = run.RunID, run.Workload, tags(i), int64(i+1)
	}
	return recs
}

func sampleSummary(run exporter.RunMetadata, recs []exporter.Record) exporter.Summary {
	s := exporter.Summary{RunID: run.RunID, JSON: `{"total_requests": 3}`, Elapsed: 1.5}
	for _, r := range recs {
		if r.Phase != exporter.Measure {
			continue
		}
		s.Total++
		if r.Success {
			s.Successful++
		} else {
			s.Failed++
		}
	}
	return s
}
