package sdktest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/lmbench/lmbench/sdk/exporter"
	"github.com/lmbench/lmbench/sdk/workload"
)

// The checkers report through t.Errorf; these tests call the functions
// that find the problems, so a bad definition can be tested without
// failing the test.

func messages(errs []error) []string {
	var out []string
	for _, e := range errs {
		out = append(out, e.Error())
	}
	return out
}

type goodOptions struct {
	N      int           `opt:"n" help:"Requests." min:"1" max:"10"`
	Rate   float64       `opt:"rate" help:"Per second." min:"0.5"`
	Wait   time.Duration `opt:"wait" help:"Pause." min:"0"`
	Policy string        `opt:"policy" help:"Order." enum:"random,tile"`
	On     bool          `opt:"on" help:"Switch." advanced:"false"`
}

var goodDefaults = goodOptions{N: 1, Rate: 1, Wait: time.Second, Policy: "tile"}

type (
	noHelp struct {
		X int `opt:"x"`
	}
	belowMin struct {
		X int `opt:"x" help:"h" min:"1"`
	}
	aboveMax struct {
		X float64 `opt:"x" help:"h" max:"0.5"`
	}
	minAboveMax struct {
		X int `opt:"x" help:"h" min:"5" max:"1"`
	}
	boundOnString struct {
		S string `opt:"s" help:"h" min:"1"`
	}
	enumOnInt struct {
		X int `opt:"x" help:"h" enum:"1,2"`
	}
	badEnumValues struct {
		E string `opt:"e" help:"h" enum:"a,,a"`
	}
	badAdvanced struct {
		X int `opt:"x" help:"h" advanced:"yes"`
	}
	duplicate struct {
		A int `opt:"a" help:"h"`
		B int `opt:"a" help:"h"`
	}
)

func TestSchemaProblems(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		defaults any
		want     []string
	}{
		{name: "good", defaults: goodDefaults},
		{name: "no options", defaults: struct{}{}},
		{name: "no help", defaults: noHelp{}, want: []string{"option x has no help text (shown in --help and the form)"}},
		{name: "default below min", defaults: belowMin{}, want: []string{"option x: default 0 is below min 1"}},
		{name: "default above max", defaults: aboveMax{X: 0.75}, want: []string{"option x: default 0.75 is above max 0.5"}},
		{name: "min above max", defaults: minAboveMax{X: 3}, want: []string{
			"option x: default 3 is below min 5", "option x: default 3 is above max 1", "option x: min 5 is above max 1",
		}},
		{name: "bound on a string", defaults: boundOnString{}, want: []string{"option s: min/max only apply to numbers and durations"}},
		{name: "enum on an int", defaults: enumOnInt{}, want: []string{"field X: enum tag on a int field has no effect"}},
		{name: "enum values", defaults: badEnumValues{E: "a"}, want: []string{
			"option e: empty enum value", `option e: duplicate enum value "a"`,
		}},
		{name: "advanced", defaults: badAdvanced{}, want: []string{`field X: advanced tag "yes" must be true or false`}},
		{name: "invalid struct", defaults: duplicate{}, want: []string{`options: field B: duplicate opt name "a"`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := messages(schemaProblems("my-plugin", "mp", "a summary", tc.defaults))
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("problems (-want +got):\n%s", d)
			}
		})
	}
}

func TestSchemaProblemsNames(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, prefix, summary string
		want                  []string
	}{
		{"long-doc-qa", "ldqa", "s", nil},
		{"My_Plugin", "", "", []string{
			`Definition.Name "My_Plugin" must be kebab-case (the binary is lmbench-<kind>-<name>)`,
			`Definition.Prefix "" must be kebab-case (flags are --<prefix>-<option>)`,
			"Definition.Summary is empty (it is shown in lmbench's help)",
		}},
		{"", "Fp", "s", []string{
			`Definition.Name "" must be kebab-case (the binary is lmbench-<kind>-<name>)`,
			`Definition.Prefix "Fp" must be kebab-case (flags are --<prefix>-<option>)`,
		}},
	}
	for _, tc := range tests {
		got := messages(schemaProblems(tc.name, tc.prefix, tc.summary, struct{}{}))
		if d := cmp.Diff(tc.want, got); d != "" {
			t.Errorf("%q/%q/%q: problems (-want +got):\n%s", tc.name, tc.prefix, tc.summary, d)
		}
	}
}

func TestTranscriptProblems(t *testing.T) {
	t.Parallel()
	sent := func(phase, id string, tags map[string]string) Sent { return Sent{Phase: phase, ID: id, Tags: tags} }
	tests := []struct {
		name string
		keys []string
		tr   Transcript
		want []string
	}{
		{
			name: "good",
			keys: []string{"doc"},
			tr:   Transcript{Planned: 1, Requests: []Sent{sent("warmup", "w", nil), sent("measure", "m", map[string]string{"doc": "0"})}},
		},
		{
			name: "id reused across phases",
			tr:   Transcript{Requests: []Sent{sent("warmup", "q0", nil), sent("measure", "q0", nil)}},
			want: []string{`request id "q0" is sent in warmup and again in measure; ids must be unique in a run`},
		},
		{
			name: "undeclared tag keys, each reported once",
			keys: []string{"doc"},
			tr: Transcript{Requests: []Sent{
				sent("measure", "a", map[string]string{"doc": "0", "query": "1", "lora": "x"}),
				sent("measure", "b", map[string]string{"query": "2"}),
			}},
			want: []string{
				`tag key "lora" (on request a) is not in Definition.TagKeys ["doc"]`,
				`tag key "query" (on request a) is not in Definition.TagKeys ["doc"]`,
			},
		},
		{
			name: "planned mismatch",
			tr:   Transcript{Planned: 3, Requests: []Sent{sent("measure", "a", nil)}},
			want: []string{"PlannedRequests() = 3, but the measure phase sent 1 requests"},
		},
		{
			name: "nothing measured",
			tr:   Transcript{Requests: []Sent{sent("warmup", "a", nil)}},
			want: []string{"the measure phase sent no requests"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if d := cmp.Diff(tc.want, messages(transcriptProblems(tc.keys, &tc.tr))); d != "" {
				t.Errorf("problems (-want +got):\n%s", d)
			}
		})
	}
}

type emptyOptions struct{}

// stepper is a Workload from a func.
type stepper func(workload.StepInput) (workload.StepOutput, error)

func (s stepper) Step(_ context.Context, in workload.StepInput) (workload.StepOutput, error) {
	return s(in)
}
func (stepper) OnFinished(context.Context, []workload.Result) error { return nil }

func oneRequest(text string) stepper {
	return func(in workload.StepInput) (workload.StepOutput, error) {
		if in.Phase == workload.Warmup {
			return workload.Done(), nil
		}
		return workload.Send(workload.Chat("q", workload.User(workload.Text(text)))).Done(), nil
	}
}

func wlDef(newFn func(emptyOptions, workload.Env) (workload.Workload, error)) workload.Definition[emptyOptions] {
	return workload.Definition[emptyOptions]{Name: "w", Prefix: "w", Summary: "s", New: newFn}
}

func TestWorkloadProblems(t *testing.T) {
	t.Parallel()
	var runs atomic.Int64 // shared by every run: the workload is not deterministic
	tests := []struct {
		name string
		def  workload.Definition[emptyOptions]
		want []string // prefixes of the problems
	}{
		{
			name: "good",
			def:  wlDef(func(emptyOptions, workload.Env) (workload.Workload, error) { return oneRequest("hi"), nil }),
		},
		{
			name: "no New",
			def:  wlDef(nil),
			want: []string{"Definition.New is nil"},
		},
		{
			name: "configure fails",
			def: wlDef(func(emptyOptions, workload.Env) (workload.Workload, error) {
				return nil, errors.New("no corpus")
			}),
			want: []string{"run with default options (overridden by map[]): no corpus"},
		},
		{
			name: "stalls",
			def: wlDef(func(emptyOptions, workload.Env) (workload.Workload, error) {
				return stepper(func(workload.StepInput) (workload.StepOutput, error) { return workload.WaitForFinish(), nil }), nil
			}),
			want: []string{"run with default options (overridden by map[]): warmup phase: workload w: the workload waits for a request to finish, but none is in flight"},
		},
		{
			name: "not deterministic",
			def: wlDef(func(emptyOptions, workload.Env) (workload.Workload, error) {
				return oneRequest(fmt.Sprint("run ", runs.Add(1))), nil
			}),
			want: []string{"two runs with the same seed differ", "with a host of protocol minor 0 (no capabilities) the requests differ", "the run through gRPC differs"},
		},
		{
			// Invalid UTF-8 passes in-process but cannot be marshalled.
			name: "breaks over gRPC",
			def:  wlDef(func(emptyOptions, workload.Env) (workload.Workload, error) { return oneRequest("\xff"), nil }),
			want: []string{"run through gRPC: measure phase: step: grpc: error while marshaling: string field contains invalid UTF-8"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := messages(workloadProblems(t, tc.def, Options{}))
			if len(got) != len(tc.want) {
				t.Fatalf("problems:\n%s\nwant %d starting with %q", strings.Join(got, "\n"), len(tc.want), tc.want)
			}
			for i := range got {
				if !strings.HasPrefix(got[i], tc.want[i]) {
					t.Errorf("problem %d = %q, want it to start with %q", i, got[i], tc.want[i])
				}
			}
		})
	}
}

type fileOptions struct {
	File string `opt:"file" help:"File name, relative to the output directory."`
}

// fileExporter writes one line per record to File; its behaviour can be
// broken on purpose.
type fileExporter struct {
	path         string
	rows         int64
	needsWrite   bool // fails Finish without any Write
	ghost        bool // reports a file it never wrote
	rowsOnFinish bool // reports a row count even when empty
}

func (e *fileExporter) Write(_ context.Context, recs []exporter.Record) error {
	f, err := os.OpenFile(e.path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	for _, r := range recs {
		fmt.Fprintln(f, r.RequestID)
		e.rows++
	}
	return f.Close()
}

func (e *fileExporter) Finish(context.Context, exporter.Summary) ([]exporter.File, error) {
	if e.needsWrite && e.rows == 0 {
		return nil, errors.New("nothing to finish")
	}
	if e.ghost {
		return []exporter.File{{Path: "ghost.txt"}}, nil
	}
	if err := os.WriteFile(e.path+".done", nil, 0o644); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(e.path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, err
	}
	rows := e.rows
	if e.rowsOnFinish {
		rows++
	}
	return []exporter.File{{Path: e.path, Rows: rows}}, f.Close()
}

func expDef(mod func(*fileExporter)) exporter.Definition[fileOptions] {
	return exporter.Definition[fileOptions]{
		Name: "lines", Prefix: "lines", Summary: "request ids, one per line",
		Defaults: fileOptions{File: "ids.txt"},
		New: func(o fileOptions, env exporter.Env) (exporter.Exporter, error) {
			e := &fileExporter{path: filepath.Join(env.Run.OutputDir, o.File)}
			if mod != nil {
				mod(e)
			}
			return e, nil
		},
	}
}

func TestExporterProblems(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		def  exporter.Definition[fileOptions]
		opts map[string]any
		want []string
	}{
		{name: "good", def: expDef(nil)},
		{name: "bad option", def: expDef(nil), opts: map[string]any{"fil": "x"},
			want: []string{"configure with default options (overridden by map[fil:x]): fil: unknown option"}},
		{name: "finish needs a write", def: expDef(func(e *fileExporter) { e.needsWrite = true }),
			want: []string{"Finish without any Write: finish: finish: nothing to finish"}},
		{name: "reports a missing file", def: expDef(func(e *fileExporter) { e.ghost = true }),
			want: []string{"Finish without any Write: reported file: stat ", "Write and Finish: reported file: stat ", "Write and Finish through gRPC: reported file: stat "}},
		{name: "rows without writes", def: expDef(func(e *fileExporter) { e.rowsOnFinish = true }),
			want: []string{"Finish without any Write: file "}},
		{name: "no New", def: exporter.Definition[fileOptions]{Name: "x", Prefix: "x", Summary: "s"},
			want: []string{"Definition.New is nil"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := messages(exporterProblems(t, tc.def, tc.opts, exporter.RunMetadata{}))
			if len(got) != len(tc.want) {
				t.Fatalf("problems:\n%s\nwant %d starting with %q", strings.Join(got, "\n"), len(tc.want), tc.want)
			}
			for i := range got {
				if !strings.HasPrefix(got[i], tc.want[i]) {
					t.Errorf("problem %d = %q, want it to start with %q", i, got[i], tc.want[i])
				}
			}
		})
	}
}
