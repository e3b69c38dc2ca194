package ui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
	"github.com/google/go-cmp/cmp"

	"github.com/lmbench/lmbench/core/plugin"
)

// Keys as a terminal sends them.
const (
	keyEnter = "\r"
	keyDown  = "\x1b[B"
	keyCtrlC = "\x03"
	keyCtrlU = "\x15" // clear the input before the cursor
)

// focus marks the focused field (the theme's left border): the tests wait
// for it before typing, since moving to the next field happens after the
// key that asked for it.
const focus = "┃ "

// console drives RunSetup headlessly: keys go in through a pipe, and the
// rendered output is searched (escape codes stripped) before each key, as
// a person reads the screen before typing.
type console struct {
	t    *testing.T
	in   io.Writer
	mu   sync.Mutex
	out  strings.Builder
	seen int // stripped output already matched
	done chan setupResult
}

type setupResult struct {
	o   Outcome
	err error
}

func (c *console) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.out.Write(p)
}

func (c *console) screen() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return ansi.Strip(c.out.String())
}

func startSetup(t *testing.T, ctx context.Context, s Setup) *console {
	t.Helper()
	r, w := io.Pipe()
	c := &console{t: t, in: w, done: make(chan setupResult, 1)}
	go func() {
		o, err := RunSetup(ctx, r, c, s)
		c.done <- setupResult{o, err}
	}()
	t.Cleanup(func() { _ = w.Close() })
	return c
}

// expect waits until text appears in the output after what was already
// matched.
func (c *console) expect(text string) {
	c.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		scr := c.screen()
		if i := strings.Index(scr[c.seen:], text); i >= 0 {
			c.seen += i + len(text)
			return
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("waited 10s for %q; output since the last match:\n%s", text, scr[c.seen:])
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func (c *console) send(keys ...string) {
	c.t.Helper()
	for _, k := range keys {
		if _, err := io.WriteString(c.in, k); err != nil {
			c.t.Fatalf("typing %q: %v", k, err)
		}
	}
}

func (c *console) result() setupResult {
	c.t.Helper()
	select {
	case r := <-c.done:
		return r
	case <-time.After(10 * time.Second):
		c.t.Fatalf("RunSetup did not return; output:\n%s", c.screen())
	}
	return setupResult{}
}

func atLeastOne(flag string) func(string) error {
	return func(v string) error {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return fmt.Errorf("%s: must be an integer >= 1, got %q", flag, v)
		}
		return nil
	}
}

// testSetup looks like the host's: everything required is missing.
func testSetup(loaded *[]string) Setup {
	return Setup{
		Missing: []string{"engine_url", KeyWorkload, KeyLMCacheURL, KeyTokensPerGB},
		General: []Field{
			{Key: "engine_url", Flag: "--engine-url", Label: "Engine URL", Required: true, Group: "General",
				Validate: func(v string) error {
					if !strings.HasPrefix(v, "http://") {
						return fmt.Errorf("--engine-url: expected an http:// URL, got %q", v)
					}
					return nil
				}},
			{Key: KeyLMCacheURL, Flag: "--lmcache-url", Label: "LMCache server URL", Group: "General"},
			{Key: KeyTokensPerGB, Flag: "--tokens-per-gb-kvcache", Label: "Tokens per GB KV cache", Kind: KindInt, Group: "General",
				Validate: atLeastOne("--tokens-per-gb-kvcache")},
			{Key: "model", Flag: "--model", Label: "Model name", Group: "General"},
			{Key: "kv_cache_volume", Flag: "--kv-cache-volume", Label: "KV cache volume (GB)", Kind: KindFloat, Value: "100", Group: "General"},
			{Key: "api_key", Flag: "--api-key", Label: "API key", Secret: true, Advanced: true, Group: "General"},
			{Key: "seed", Flag: "--seed", Label: "Seed", Kind: KindInt, Value: "42", Advanced: true, Group: "General"},
		},
		Workloads: []string{"long-doc-qa", "random-prefill"},
		WorkloadFields: func(w string) ([]Field, error) {
			*loaded = append(*loaded, w)
			g := "Workload: " + w
			return []Field{
				{Key: "rp_request_length", Flag: "--rp-request-length", Label: "Request length (tokens)", Kind: KindInt, Value: "10000", Group: g,
					Validate: atLeastOne("--rp-request-length")},
				{Key: "rp_num_requests", Flag: "--rp-num-requests", Label: "Number of requests", Kind: KindInt, Value: "50", Group: g},
				{Key: "rp_shuffle", Flag: "--rp-shuffle", Label: "Shuffle", Kind: KindBool, Value: "false", Group: g, Advanced: true},
			}, nil
		},
		ExportPath: "bench_config.json",
	}
}

// The whole flow with the keyboard: missing values (one rejected inline),
// the workload choice, the LMCache question, general settings with the
// advanced ones (a secret), workload settings, summary, start.
func TestSetupStart(t *testing.T) {
	t.Parallel()
	var loaded []string
	c := startSetup(t, context.Background(), testSetup(&loaded))

	c.expect("Engine URL")
	c.send("localhost:9000", keyEnter)
	c.expect(`--engine-url: expected an http:// URL, got "localhost:9000"`)
	c.send(keyCtrlU, "http://localhost:9000", keyEnter)

	c.expect("Workload")
	c.send(keyDown, keyEnter) // random-prefill

	c.expect("LMCache server")
	c.send("n") // no LMCache server: tokens per GB instead

	c.expect("Tokens per GB KV cache")
	c.send("0", keyEnter)
	c.expect(`--tokens-per-gb-kvcache: must be an integer >= 1, got "0"`)
	c.send(keyCtrlU, "6553", keyEnter)

	c.expect("General settings")
	c.send(keyDown, keyEnter) // configure
	c.expect(focus + "Model name")
	c.send("Qwen/Qwen3-8B", keyEnter)
	c.expect(focus + "KV cache volume (GB)")
	c.send(keyCtrlU, "abc", keyEnter) // KV cache volume has no Validate: parsed as a number
	c.expect(`--kv-cache-volume: expected a number, got "abc"`)
	c.send(keyCtrlU, "50.5", keyEnter)
	c.expect("Advanced general settings")
	c.send("y")
	c.expect(focus + "API key")
	c.send("sk-very-secret", keyEnter)
	c.expect(focus + "Seed")
	c.send(keyEnter) // seed stays 42

	c.expect("Workload settings (random-prefill)")
	c.send(keyDown, keyEnter) // configure
	c.expect(focus + "Request length (tokens)")
	c.send(keyCtrlU, "2000", keyEnter)
	c.expect(focus + "Number of requests")
	c.send(keyEnter) // number of requests stays 50
	c.expect("Advanced workload settings")
	c.send("y")
	c.expect("Shuffle")
	c.send("y")

	c.expect("Configuration summary")
	c.expect("What would you like to do?")
	c.send(keyEnter) // start
	r := c.result()
	if r.err != nil {
		t.Fatal(r.err)
	}
	want := Outcome{
		Action: ActionStart, Workload: "random-prefill",
		Values: map[string]string{
			"engine_url": "http://localhost:9000", KeyTokensPerGB: "6553",
			"model": "Qwen/Qwen3-8B", "kv_cache_volume": "50.5", "api_key": "sk-very-secret", "seed": "42",
			"rp_request_length": "2000", "rp_num_requests": "50", "rp_shuffle": "true",
		},
	}
	if diff := cmp.Diff(want, r.o); diff != "" {
		t.Errorf("outcome (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"random-prefill"}, loaded); diff != "" {
		t.Errorf("WorkloadFields calls (-want +got):\n%s", diff)
	}
	scr := c.screen()
	if strings.Contains(scr, "sk-very-secret") {
		t.Errorf("the secret was echoed:\n%s", scr)
	}
	for _, w := range []string{"Starting the benchmark.", "Request length (tokens)      2000", "API key                      ••••••",
		"Model name                   Qwen/Qwen3-8B"} {
		if !strings.Contains(scr, w) {
			t.Errorf("output lacks %q:\n%s", w, scr)
		}
	}
}

// Export with the defaults skipped: the LMCache URL is asked instead of
// tokens per GB, and the export path is asked with the default offered.
func TestSetupExport(t *testing.T) {
	t.Parallel()
	var loaded []string
	c := startSetup(t, context.Background(), testSetup(&loaded))

	c.expect("Engine URL")
	c.send("http://e:8000", keyEnter)
	c.expect("Workload")
	c.send(keyEnter) // long-doc-qa
	c.expect("LMCache server")
	c.send("y")
	c.expect("LMCache server URL")
	c.send(keyEnter)
	c.expect("--lmcache-url is required")
	c.send("http://lmcache:8080", keyEnter)
	c.expect("General settings")
	c.send(keyEnter) // skip
	c.expect("Workload settings (long-doc-qa)")
	c.send(keyEnter) // skip
	c.expect("What would you like to do?")
	c.send(keyDown, keyEnter) // export
	c.expect("Export file")
	c.expect("bench_config.json")
	c.send(keyCtrlU, keyEnter)
	c.expect("the export file name is required")
	c.send("out/my config.json", keyEnter)

	r := c.result()
	if r.err != nil {
		t.Fatal(r.err)
	}
	want := Outcome{
		Action: ActionExport, Workload: "long-doc-qa", ExportPath: "out/my config.json",
		Values: map[string]string{
			"engine_url": "http://e:8000", KeyLMCacheURL: "http://lmcache:8080",
			"model": "", "kv_cache_volume": "100", "api_key": "", "seed": "42",
			"rp_request_length": "10000", "rp_num_requests": "50", "rp_shuffle": "false",
		},
	}
	if diff := cmp.Diff(want, r.o); diff != "" {
		t.Errorf("outcome (-want +got):\n%s", diff)
	}
	for _, w := range []string{"Exporting the configuration to out/my config.json.", "Model name                   (auto-detect)",
		"LMCache server URL           http://lmcache:8080"} {
		if !strings.Contains(c.screen(), w) {
			t.Errorf("output lacks %q:\n%s", w, c.screen())
		}
	}
}

// An engine that serves its own /status (the built-in one) is not asked
// about LMCache or tokens per GB; neither is in the outcome.
func TestSetupEngineServesStatus(t *testing.T) {
	t.Parallel()
	var loaded []string
	s := testSetup(&loaded)
	s.General[0].Validate = nil
	s.EngineServesStatus = func(u string) bool { return u == "builtin" }
	c := startSetup(t, context.Background(), s)
	c.expect("Engine URL")
	c.send("builtin", keyEnter)
	c.expect("Workload")
	c.send(keyEnter) // long-doc-qa
	c.expect("General settings")
	if strings.Contains(c.screen(), "LMCache server") {
		t.Errorf("asked about LMCache for the built-in engine:\n%s", c.screen())
	}
	c.send(keyEnter) // skip
	c.expect("Workload settings (long-doc-qa)")
	c.send(keyEnter) // skip
	c.expect("What would you like to do?")
	c.send(keyEnter) // start
	r := c.result()
	if r.err != nil || r.o.Action != ActionStart {
		t.Fatalf("outcome %+v, err %v", r.o, r.err)
	}
	for _, k := range []string{KeyLMCacheURL, KeyTokensPerGB} {
		if v, ok := r.o.Values[k]; ok {
			t.Errorf("outcome has %s = %q", k, v)
		}
	}
	if r.o.Values["engine_url"] != "builtin" {
		t.Errorf("engine_url = %q", r.o.Values["engine_url"])
	}
}

// An export file name CheckExportPath refuses is reported on the page, and
// a good one is then accepted.
func TestSetupExportPathChecked(t *testing.T) {
	t.Parallel()
	var loaded []string
	s := testSetup(&loaded)
	s.Missing, s.Workload = nil, "long-doc-qa"
	s.CheckExportPath = func(p string) error {
		if !strings.HasSuffix(p, ".json") {
			return fmt.Errorf("unknown file type for %q: expected .json", p)
		}
		return nil
	}
	c := startSetup(t, context.Background(), s)
	c.expect("General settings")
	c.send(keyEnter) // skip
	c.expect("Workload settings (long-doc-qa)")
	c.send(keyEnter) // skip
	c.expect("What would you like to do?")
	c.send(keyDown, keyEnter) // export
	c.expect("Export file")
	c.send(keyCtrlU, "run.txt", keyEnter)
	c.expect(`unknown file type for "run.txt": expected .json`)
	c.send(keyCtrlU, "run.json", keyEnter)
	r := c.result()
	if r.err != nil || r.o.Action != ActionExport || r.o.ExportPath != "run.json" {
		t.Fatalf("outcome %+v, err %v", r.o, r.err)
	}
}

// A workload given on the command line is not asked; its settings are
// loaded up front; nothing missing goes straight to the settings.
func TestSetupWorkloadGiven(t *testing.T) {
	t.Parallel()
	var loaded []string
	s := testSetup(&loaded)
	s.Missing, s.Workload = nil, "random-prefill"
	c := startSetup(t, context.Background(), s)
	c.expect("General settings")
	c.send(keyEnter)
	c.expect("Workload settings (random-prefill)")
	c.send(keyEnter)
	c.expect("What would you like to do?")
	c.send(keyDown, keyDown, keyEnter) // cancel
	r := c.result()
	if r.err != nil || r.o.Action != ActionCancel {
		t.Fatalf("got %+v, %v; want ActionCancel", r.o, r.err)
	}
	if strings.Contains(c.screen(), "The request pattern") {
		t.Errorf("the workload was asked although given")
	}
	if strings.Contains(c.screen(), "LMCache server URL") {
		t.Errorf("the summary lists the empty LMCache URL:\n%s", c.screen())
	}
	if diff := cmp.Diff([]string{"random-prefill"}, loaded); diff != "" {
		t.Errorf("WorkloadFields calls (-want +got):\n%s", diff)
	}
}

func TestSetupCtrlCCancels(t *testing.T) {
	t.Parallel()
	var loaded []string
	c := startSetup(t, context.Background(), testSetup(&loaded))
	c.expect("Engine URL")
	c.send("http://half", keyCtrlC)
	r := c.result()
	if r.err != nil || r.o.Action != ActionCancel {
		t.Fatalf("got %+v, %v; want ActionCancel", r.o, r.err)
	}
	if !strings.Contains(c.screen(), "Setup cancelled.") {
		t.Errorf("output lacks the cancel line:\n%s", c.screen())
	}
}

func TestSetupContextCancels(t *testing.T) {
	t.Parallel()
	var loaded []string
	ctx, cancel := context.WithCancel(context.Background())
	c := startSetup(t, ctx, testSetup(&loaded))
	c.expect("Engine URL")
	cancel()
	r := c.result()
	if r.err != nil || r.o.Action != ActionCancel {
		t.Fatalf("got %+v, %v; want ActionCancel", r.o, r.err)
	}
}

// A workload whose options cannot be read ends the setup with its error.
func TestSetupWorkloadFieldsError(t *testing.T) {
	t.Parallel()
	var loaded []string
	s := testSetup(&loaded)
	s.Missing = []string{KeyWorkload}
	s.WorkloadFields = func(string) ([]Field, error) { return nil, errors.New("plugin exited") }
	c := startSetup(t, context.Background(), s)
	c.expect("Workload")
	c.send(keyEnter)
	c.expect("General settings")
	c.send(keyEnter)
	r := c.result()
	if r.err == nil || r.err.Error() != "workload long-doc-qa: options: plugin exited" {
		t.Fatalf("error = %v, want the workload's", r.err)
	}
	if r.o.Action != ActionCancel {
		t.Errorf("action = %v, want cancel", r.o.Action)
	}
}

func TestSetupNoWorkloads(t *testing.T) {
	t.Parallel()
	_, err := RunSetup(context.Background(), strings.NewReader(""), io.Discard, Setup{Missing: []string{KeyWorkload}})
	if err == nil || !strings.Contains(err.Error(), "no workload plugins") {
		t.Errorf("error = %v, want one saying no workload plugins were found", err)
	}
}

func TestValidator(t *testing.T) {
	t.Parallel()
	tests := []struct {
		f     Field
		value string
		want  string // "" = valid
	}{
		{Field{Key: "x", Flag: "--x", Required: true}, "  ", "--x is required"},
		{Field{Key: "x"}, "", ""},
		{Field{Key: "n", Flag: "--n", Kind: KindInt}, "1.5", `--n: expected an integer, got "1.5"`},
		{Field{Key: "n", Kind: KindInt}, " 7 ", ""},
		{Field{Key: "q", Kind: KindFloat}, "abc", `q: expected a number, got "abc"`},
		{Field{Key: "q", Kind: KindFloat, Validate: func(string) error { return errors.New("custom") }}, "1", "custom"},
		{Field{Key: "q", Kind: KindFloat, Validate: func(string) error { return errors.New("custom") }}, "", ""},
	}
	for _, tt := range tests {
		err := validator(tt.f)(tt.value)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tt.want {
			t.Errorf("%s(%q) = %q, want %q", tt.f.Key, tt.value, got, tt.want)
		}
	}
}

func TestEscapeNote(t *testing.T) {
	t.Parallel()
	if got, want := escapeNote("ldqa_document_length *x* `y` a\\b"), "ldqa\\_document\\_length \\*x\\* \\`y\\` a\\\\b"; got != want {
		t.Errorf("escapeNote = %q, want %q", got, want)
	}
}

// However many settings a page has, the form fits the terminal's height
// with its header, so the question is never pushed off the screen.
func TestSetupFitsTerminalHeight(t *testing.T) {
	t.Parallel()
	var loaded []string
	s := testSetup(&loaded)
	for i := range 12 {
		s.General = append(s.General, Field{Key: fmt.Sprint("extra_", i), Label: fmt.Sprint("Extra ", i), Help: "One more setting.", Group: "General"})
	}
	for _, height := range []int{15, 24, 200} {
		m := newSetupModel(s, io.Discard)
		if m.err != nil {
			t.Fatal(m.err)
		}
		m.Init()
		m.Update(tea.WindowSizeMsg{Width: 80, Height: height})
		view := m.View()
		if n := strings.Count(view, "\n") + 1; n > height {
			t.Errorf("height %d: the view has %d lines:\n%s", height, n, view)
		}
		if !strings.Contains(view, "lmbench — guided setup") || !strings.Contains(view, "Engine URL") {
			t.Errorf("height %d: header or question missing:\n%s", height, view)
		}
	}
}

// Ctrl-C while the workload's options load cancels too.
func TestSetupCtrlCWhileLoading(t *testing.T) {
	t.Parallel()
	var loaded []string
	s := testSetup(&loaded)
	s.Missing = []string{KeyWorkload}
	release := make(chan struct{})
	defer close(release)
	s.WorkloadFields = func(string) ([]Field, error) {
		<-release
		return nil, nil
	}
	c := startSetup(t, context.Background(), s)
	c.expect("Workload")
	c.send(keyEnter)
	c.expect("General settings")
	c.send(keyEnter)
	c.expect("Loading the options of workload long-doc-qa")
	c.send(keyCtrlC)
	r := c.result()
	if r.err != nil || r.o.Action != ActionCancel {
		t.Fatalf("got %+v, %v; want ActionCancel", r.o, r.err)
	}
}

// The confirm screen fits a 50-row terminal however many settings it
// sums up: its first lines (the header, the summary's title, the workload
// and the engine URL) and the question stay on screen.
func TestSetupConfirmFitsTerminalHeight(t *testing.T) {
	t.Parallel()
	var loaded []string
	s := testSetup(&loaded)
	for i := range 45 {
		s.General = append(s.General, Field{Key: fmt.Sprint("extra_", i), Label: fmt.Sprint("Extra setting ", i), Value: "v", Group: "General"})
	}
	for _, height := range []int{50, 30, 200} {
		m := newSetupModel(s, io.Discard)
		if m.err != nil {
			t.Fatal(m.err)
		}
		m.Init()
		m.Update(tea.WindowSizeMsg{Width: 100, Height: height})
		runCmd(m, m.startFinalStep())
		view := m.View()
		lines := strings.Split(strings.TrimRight(view, "\n"), "\n")
		if len(lines) > height {
			t.Errorf("height %d: the confirm screen has %d lines:\n%s", height, len(lines), view)
		}
		for _, want := range []string{"lmbench — guided setup", "Configuration summary", "Workload", "Engine URL", "What would you like to do?", "Start the benchmark"} {
			if !strings.Contains(view, want) {
				t.Errorf("height %d: %q is not on the confirm screen:\n%s", height, want, view)
			}
		}
		if height == 200 && !strings.Contains(view, "Extra setting 44") {
			t.Errorf("height 200: the summary left out settings with room to spare:\n%s", view)
		}
	}
}

// runCmd runs cmd once, batches expanded, and feeds what it returns to m,
// as the program would after a form's Init (no second round).
func runCmd(m *setupModel, cmd tea.Cmd) {
	if cmd == nil {
		return
	}
	switch msg := cmd().(type) {
	case tea.BatchMsg:
		for _, c := range msg {
			runCmd(m, c)
		}
	case nil:
	default:
		m.Update(msg)
	}
}

// The workload picker says what each workload is for, one line each.
func TestSetupWorkloadPickerSummaries(t *testing.T) {
	t.Parallel()
	var loaded []string
	s := testSetup(&loaded)
	s.WorkloadSummaries = map[string]string{
		"long-doc-qa":    "Repeated Q&A over long documents (tests KV cache reuse)",
		"random-prefill": "Prefill-only requests fired simultaneously, or at a rate, " + strings.Repeat("and more words ", 10),
	}
	m := newSetupModel(s, io.Discard)
	if m.err != nil {
		t.Fatal(m.err)
	}
	opts := m.workloadOptions()
	if len(opts) != 2 {
		t.Fatalf("%d options", len(opts))
	}
	if got := opts[0].Key; got != "long-doc-qa     Repeated Q&A over long documents (tests KV cache reuse)" {
		t.Errorf("long-doc-qa's choice reads %q", got)
	}
	if got := opts[1].Key; !strings.HasPrefix(got, "random-prefill  Prefill-only requests") || !strings.HasSuffix(got, "…") ||
		utf8.RuneCountInString(got) > fallbackWidth-6 {
		t.Errorf("random-prefill's choice reads %q (%d runes)", got, utf8.RuneCountInString(got))
	}
	if opts[0].Value != "long-doc-qa" || opts[1].Value != "random-prefill" {
		t.Errorf("values %q, %q: want the names", opts[0].Value, opts[1].Value)
	}
}

func TestPluginTableSummaries(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	PluginTable(&b, []plugin.Listed{
		{Candidate: plugin.Candidate{Kind: "workload", Name: "long-doc-qa", Path: "/p/lmbench-workload-long-doc-qa"}, Version: "1.0.0", Protocol: "v1.7",
			Summary: "Repeated Q&A over long documents\n(tests KV cache reuse)"},
		{Candidate: plugin.Candidate{Kind: "exporter", Name: "csv", Path: "/p/lmbench-exporter-csv"}, Version: "1.0.0", Protocol: "v1.7"},
	})
	want := "KIND      NAME         VERSION  PROTOCOL  PATH\n" +
		"workload  long-doc-qa  1.0.0    v1.7      /p/lmbench-workload-long-doc-qa\n" +
		"            Repeated Q&A over long documents (tests KV cache reuse)\n" +
		"exporter  csv          1.0.0    v1.7      /p/lmbench-exporter-csv\n"
	if d := cmp.Diff(want, b.String()); d != "" {
		t.Errorf("table (-want +got):\n%s", d)
	}
}
