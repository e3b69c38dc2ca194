package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/lmbench/lmbench/cmd/lmbench/internal/ui"
	"github.com/lmbench/lmbench/core/config"
	"github.com/lmbench/lmbench/core/invocation"
)

// fakeForm replaces the terminal form: it records the Setup it was given
// and answers with a scripted outcome.
func fakeForm(t *testing.T, answer func(ui.Setup) ui.Outcome) *ui.Setup {
	t.Helper()
	var got ui.Setup
	oldRun, oldInteractive := runSetup, interactive
	runSetup = func(_ context.Context, _ io.Reader, _ io.Writer, s ui.Setup) (ui.Outcome, error) {
		got = s
		return answer(s), nil
	}
	interactive = func(*session) bool { return true }
	t.Cleanup(func() { runSetup, interactive = oldRun, oldInteractive })
	t.Setenv("LMBENCH_PLUGIN_PATH", binDir)
	return &got
}

func field(fs []ui.Field, key string) *ui.Field {
	for i := range fs {
		if fs[i].Key == key {
			return &fs[i]
		}
	}
	return nil
}

// Missing arguments on a terminal open the form, pre-filled from the file,
// the environment and flags; the workload's fields come from its schema;
// the answers are the top layer; export writes the resolved file.
func TestGuidedSetupExport(t *testing.T) {
	needBinaries(t)
	eng := newFakeEngine(t)
	dir := t.TempDir()
	cfg := writeTemp(t, "c.yaml", "seed: 5\nldqa_query_per_document: 4\n")
	t.Setenv("LMBENCH_KV_CACHE_VOLUME", "3")
	exportPath := filepath.Join(dir, "answered.json")
	var wlFields []ui.Field
	got := fakeForm(t, func(s ui.Setup) ui.Outcome {
		var err error
		if wlFields, err = s.WorkloadFields("long-doc-qa"); err != nil {
			t.Errorf("WorkloadFields: %v", err)
		}
		return ui.Outcome{Action: ui.ActionExport, Workload: "long-doc-qa", ExportPath: exportPath, Values: map[string]string{
			"engine_url": eng.srv.URL, "tokens_per_gb_kvcache": "4096", "lmcache_url": "", "seed": "9",
			"ldqa_document_length": "500", "ldqa_query_per_document": "4",
		}}
	})
	var stdout, stderr bytes.Buffer
	code, err := cmdRun([]string{"--config", cfg, "--output-dir", dir}, strings.NewReader(""), &stdout, &stderr)
	if err != nil || code != 0 {
		t.Fatalf("code %d err %v\n%s", code, err, stderr.String())
	}
	if !slices.Equal(got.Missing, []string{"engine_url", "workload", "lmcache_url", "tokens_per_gb_kvcache"}) {
		t.Errorf("Missing = %v", got.Missing)
	}
	if got.Workload != "" || !slices.Contains(got.Workloads, "long-doc-qa") || !slices.Contains(got.Workloads, "random-prefill") {
		t.Errorf("Workload %q of %v", got.Workload, got.Workloads)
	}
	if f := field(got.General, "seed"); f == nil || f.Value != "5" || f.Kind != ui.KindInt {
		t.Errorf("seed field %+v (want the file's 5)", f)
	}
	if f := field(got.General, "kv_cache_volume"); f == nil || f.Value != "3" || f.Kind != ui.KindFloat {
		t.Errorf("kv field %+v (want the environment's 3)", f)
	}
	if f := field(got.General, "engine_url"); f == nil || !f.Required {
		t.Errorf("engine_url field %+v", f)
	}
	for _, k := range []string{"workload", "log_level", "log_format"} {
		if field(got.General, k) != nil {
			t.Errorf("%s offered as a general field", k)
		}
	}
	doc := field(wlFields, "ldqa_document_length")
	if doc == nil || doc.Value != "10000" || doc.Flag != "--ldqa-document-length" || doc.Group == "" {
		t.Fatalf("workload fields %+v", wlFields)
	}
	if err := doc.Validate("0"); err == nil || !strings.Contains(err.Error(), "at least 1") {
		t.Errorf("Validate(0) = %v", err)
	}
	if err := doc.Validate("abc"); err == nil || !strings.Contains(err.Error(), "expected an integer") {
		t.Errorf("Validate(abc) = %v", err)
	}
	if f := field(wlFields, "ldqa_query_per_document"); f == nil || f.Value != "4" {
		t.Errorf("query field %+v (want the file's 4)", f)
	}
	if f := field(wlFields, "ldqa_shuffle_policy"); f == nil || f.Kind != ui.KindEnum || !slices.Equal(f.Enum, []string{"random", "tile"}) {
		t.Errorf("policy field %+v", f)
	}
	if len(eng.requests()) != 0 {
		t.Error("export ran the benchmark")
	}
	reg := invocation.Registry()
	v, err := reg.Load(config.Sources{File: exportPath, Environ: []string{}, Partial: true})
	if err != nil {
		t.Fatal(err)
	}
	if v.Int("seed") != 9 || v.Int(config.KeyTokensPerGB) != 4096 || v.Float(config.KeyKVVolume) != 3 || v.String("model") != "fake-model" || v.String(config.KeyWorkload) != "long-doc-qa" {
		b, _ := os.ReadFile(exportPath)
		t.Errorf("exported:\n%s", b)
	}
}

// Cancelling the form runs nothing and exits 130.
func TestGuidedSetupCancel(t *testing.T) {
	needBinaries(t)
	fakeForm(t, func(ui.Setup) ui.Outcome { return ui.Outcome{Action: ui.ActionCancel} })
	var stdout, stderr bytes.Buffer
	code, err := cmdRun([]string{"--workload", "random-prefill"}, strings.NewReader(""), &stdout, &stderr)
	if err != nil || code != exitInterrupted || !strings.Contains(stderr.String(), "setup cancelled") {
		t.Fatalf("code %d err %v stderr %s", code, err, stderr.String())
	}
}

// Answers that leave a required argument empty are reported, not run.
func TestGuidedSetupStillMissing(t *testing.T) {
	needBinaries(t)
	got := fakeForm(t, func(s ui.Setup) ui.Outcome {
		return ui.Outcome{Action: ui.ActionStart, Workload: "random-prefill", Values: map[string]string{"engine_url": "http://127.0.0.1:1"}}
	})
	var stdout, stderr bytes.Buffer
	code, err := cmdRun([]string{"--workload", "random-prefill"}, strings.NewReader(""), &stdout, &stderr)
	if code != exitFailed || err == nil || !strings.Contains(err.Error(), "Missing required arguments: --tokens-per-gb-kvcache or --lmcache-url") {
		t.Fatalf("code %d err %v", code, err)
	}
	if got.Workload != "random-prefill" {
		t.Errorf("form Workload = %q, want the flag's random-prefill", got.Workload)
	}
}

// Log lines written while the form is up are held and written after it.
func TestLogsHeldDuringSetup(t *testing.T) {
	needBinaries(t)
	var stderr bytes.Buffer
	var duringForm int
	s := newSession(strings.NewReader(""), io.Discard, &stderr)
	fakeForm(t, func(ui.Setup) ui.Outcome {
		s.Log.Warn().Msg("logged while the form is up")
		duringForm = stderr.Len()
		return ui.Outcome{Action: ui.ActionCancel}
	})
	defer s.Close()
	r, err := s.Resolve([]string{"--workload", "random-prefill", "--log-format", "console"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, cancelled, err := s.guidedSetup(context.Background(), nil, r, []string{"engine_url"})
	if err != nil || !cancelled {
		t.Fatalf("cancelled %v err %v", cancelled, err)
	}
	if duringForm != 0 || !strings.Contains(stderr.String(), "WRN logged while the form is up") {
		t.Errorf("stderr had %d bytes during the form; after: %q", duringForm, stderr.String())
	}
}

// The live display's sink gives the log back to stderr when it closes.
func TestLiveSinkRestoresLog(t *testing.T) {
	var stderr, live bytes.Buffer
	s := newSession(strings.NewReader(""), &live, &stderr)
	l := ui.NewLive(&live, 80)
	prev := s.logOut.Swap(l.LogWriter())
	sink := ui.NewLiveSink(l, func() { s.logOut.Swap(prev) })
	s.logOut.Write([]byte("during\n"))
	sink.Close()
	s.logOut.Write([]byte("after\n"))
	if strings.Contains(stderr.String(), "during") || stderr.String() != "after\n" || !strings.Contains(live.String(), "during") {
		t.Errorf("stderr %q, display %q", stderr.String(), live.String())
	}
}

// The logger hands each line's level through to the live display, in
// both formats: a warning is printed at once, an info line when the
// display closes, each once.
func TestLiveSinkLogLevels(t *testing.T) {
	for _, format := range []string{"console", "json"} {
		t.Run(format, func(t *testing.T) {
			var stderr, live bytes.Buffer
			s := newSession(strings.NewReader(""), &live, &stderr)
			log, err := newLogger(s.logOut, "info", format, false)
			if err != nil {
				t.Fatal(err)
			}
			l := ui.NewLive(&live, 80)
			prev := s.logOut.Swap(l.LogWriter())
			sink := ui.NewLiveSink(l, func() { s.logOut.Swap(prev) })
			log.Info().Msg("held info")
			log.Warn().Msg("urgent warning")
			if got := live.String(); strings.Contains(got, "held info") || !strings.Contains(got, "urgent warning") {
				t.Errorf("while the display is up: %q", got)
			}
			sink.Close()
			got := live.String()
			if strings.Count(got, "held info") != 1 || strings.Count(got, "urgent warning") != 1 ||
				strings.Index(got, "urgent warning") > strings.Index(got, "held info") {
				t.Errorf("after Close, want the warning then the info line, each once: %q", got)
			}
			if stderr.Len() != 0 {
				t.Errorf("stderr: %q", stderr.String())
			}
		})
	}
}

// The form rejects a zero or negative KV cache volume or tokens per GB on
// the spot, instead of failing after the person has finished it.
func TestFormFieldsRejectNonPositive(t *testing.T) {
	reg := invocation.Registry()
	v, err := reg.Load(config.Sources{Environ: []string{}, Partial: true})
	if err != nil {
		t.Fatal(err)
	}
	fs := ui.FieldsOf(reg.Owned(""), v)
	for _, key := range []string{config.KeyKVVolume, config.KeyTokensPerGB} {
		f := field(fs, key)
		if f == nil {
			t.Fatalf("no %s field", key)
		}
		for _, bad := range []string{"0", "-3"} {
			if err := f.Validate(bad); err == nil || !strings.Contains(err.Error(), "must be positive, got "+bad) {
				t.Errorf("%s: Validate(%q) = %v, want must be positive", key, bad, err)
			}
		}
		if err := f.Validate("8"); err != nil {
			t.Errorf("%s: Validate(8) = %v", key, err)
		}
	}
	if err := field(fs, "seed").Validate("0"); err != nil {
		t.Errorf("seed 0 rejected: %v", err)
	}
}

// A malformed engine or LMCache URL is refused in the form; the forms the
// run accepts (a bare port, host:port, builtin for the engine) pass.
func TestFormFieldsCheckURLs(t *testing.T) {
	reg := invocation.Registry()
	v, err := reg.Load(config.Sources{Environ: []string{}, Partial: true})
	if err != nil {
		t.Fatal(err)
	}
	fs := ui.FieldsOf(reg.Owned(""), v)
	for _, key := range []string{config.KeyEngineURL, config.KeyLMCacheURL} {
		f := field(fs, key)
		for bad, want := range map[string]string{
			"notaurl:://x":    `has the scheme "notaurl:"; expected http:// or https://`,
			"http://[::1":     "is not a URL",
			"htp://host:8000": `has the scheme "htp"; expected http:// or https://`,
			"http://h?x=1":    "has a query or fragment",
		} {
			if err := f.Validate(bad); err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%s: Validate(%q) = %v, want %q", key, bad, err, want)
			}
		}
		for _, good := range []string{"8000", "localhost:8000", "http://h:8000/v1", "https://h"} {
			if err := f.Validate(good); err != nil {
				t.Errorf("%s: Validate(%q) = %v", key, good, err)
			}
		}
	}
	if err := field(fs, config.KeyEngineURL).Validate("builtin"); err != nil {
		t.Errorf("engine builtin: %v", err)
	}
}
