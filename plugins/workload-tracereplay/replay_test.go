package main

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/lmbench/lmbench/sdk/option"
	"github.com/lmbench/lmbench/sdk/sdktest"
	"github.com/lmbench/lmbench/sdk/workload"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/")

// smallTrace is testdata/small.jsonl with 4-token blocks: hash ids 1 and
// 2 open three requests, 3 ends two (partial both times), 4, 5 and 6 are
// used once.
func smallTrace() map[string]any {
	return map[string]any{"trace": filepath.Join("testdata", "small.jsonl"), "block-size": 4}
}

func with(base map[string]any, kv ...any) map[string]any {
	out := map[string]any{}
	for k, v := range base {
		out[k] = v
	}
	for i := 0; i < len(kv); i += 2 {
		out[kv[i].(string)] = kv[i+1]
	}
	return out
}

func writeTrace(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func words(t *testing.T, s sdktest.Sent) []string {
	t.Helper()
	return strings.Fields(sdktest.UserText(t, s))
}

func TestContract(t *testing.T) {
	sdktest.CheckWorkload(t, Definition, sdktest.Options{Options: smallTrace()})
}

// The same trace as CSV, with Windows line ends.
func TestContractCSV(t *testing.T) {
	sdktest.CheckWorkload(t, Definition, sdktest.Options{Options: map[string]any{"trace": filepath.Join("testdata", "small.csv"), "block-size": 4}})
}

// A byte-order mark and CRLF line ends do not hide the format or a line.
func TestBOMAndCRLF(t *testing.T) {
	t.Parallel()
	path := writeTrace(t, "bom.jsonl", "\xef\xbb\xbf"+`{"timestamp": 0, "input_length": 5, "output_length": 1, "hash_ids": [7, 8]}`+"\r\n"+
		`{"timestamp": 9, "input_length": 4, "output_length": 1, "hash_ids": [7]}`+"\r\n")
	tr := sdktest.Run(t, Definition, sdktest.Options{Options: map[string]any{"trace": path, "block-size": 4}})
	if tr.Resolved["format"] != "mooncake" || len(tr.Measured()) != 2 || tr.Measured()[1].Tags["shared_blocks"] != "1" {
		t.Errorf("format %v, %d requests, %v", tr.Resolved["format"], len(tr.Measured()), tr.Measured())
	}
}

func TestGoldenTranscript(t *testing.T) {
	t.Parallel()
	tr := sdktest.Run(t, Definition, sdktest.Options{Options: smallTrace()})
	sdktest.Golden(t, filepath.Join("testdata", "transcript.golden.jsonl"), tr.JSONL(), *update)
}

// Every request is due at its timestamp divided by the speed-up, measured
// from the first, exactly, and goes out then with max_tokens = its output
// length and exactly input_length words.
func TestScheduleWithSpeedup(t *testing.T) {
	t.Parallel()
	for _, speedup := range []float64{1, 4, 0.5} {
		t.Run(strconv.FormatFloat(speedup, 'g', -1, 64), func(t *testing.T) {
			t.Parallel()
			tr := sdktest.Run(t, Definition, sdktest.Options{Options: with(smallTrace(), "speedup", speedup)})
			if len(tr.Warmup()) != 0 {
				t.Errorf("warmup sent %d requests, want none", len(tr.Warmup()))
			}
			stamps := []float64{0, 0, 250, 1000, 1500.5}
			inputs := []int{10, 12, 3, 11, 8}
			outputs := []int{3, 2, 1, 4, 2}
			got := tr.Measured()
			if len(got) != len(stamps) {
				t.Fatalf("sent %d requests, want %d", len(got), len(stamps))
			}
			for i, s := range got {
				want := time.Duration(stamps[i] * float64(time.Millisecond) / speedup)
				if s.Scheduled != want || s.Offset != want {
					t.Errorf("%s: scheduled %v, sent %v, want both %v", s.ID, s.Scheduled, s.Offset, want)
				}
				if n := len(words(t, s)); n != inputs[i] {
					t.Errorf("%s: %d words, want input_length %d", s.ID, n, inputs[i])
				}
				if s.MaxTokens != outputs[i] {
					t.Errorf("%s: max_tokens %d, want output_length %d", s.ID, s.MaxTokens, outputs[i])
				}
				if s.ID != "line"+strconv.Itoa(i+1) || s.Tags["line"] != strconv.Itoa(i+1) {
					t.Errorf("request %d: id %s, line tag %q", i, s.ID, s.Tags["line"])
				}
			}
		})
	}
}

// Every request asks for exactly its output length (ignore EOS) by
// default, and none does with --tr-ignore-eos=false.
func TestIgnoreEOS(t *testing.T) {
	t.Parallel()
	for _, on := range []bool{true, false} {
		opts := smallTrace()
		if !on {
			opts = with(opts, "ignore-eos", false)
		}
		tr := sdktest.Run(t, Definition, sdktest.Options{Options: opts})
		if len(tr.Measured()) == 0 {
			t.Fatal("no request sent")
		}
		for _, s := range tr.Measured() {
			if s.IgnoreEOS != on {
				t.Errorf("ignore-eos %v: %s sent with IgnoreEOS %v", on, s.ID, s.IgnoreEOS)
			}
		}
	}
}

// Requests sharing hash ids share exactly those blocks of text; a block
// of another id differs from it; the last partial block is a prefix of
// the same id's full text.
func TestSharedBlockText(t *testing.T) {
	t.Parallel()
	tr := sdktest.Run(t, Definition, sdktest.Options{Options: smallTrace()})
	reqs := tr.Measured()
	ids := [][]int64{{1, 2, 3}, {1, 2, 4}, {5}, {1, 2, 3}, {1, 6}}
	block := map[int64][]string{} // the longest text seen of each id
	for i, s := range reqs {
		w := words(t, s)
		for k, id := range ids[i] {
			part := w[k*4 : min(len(w), (k+1)*4)]
			prev, seen := block[id]
			n := min(len(prev), len(part))
			if seen && !slices.Equal(prev[:n], part[:n]) {
				t.Errorf("%s block %d (id %d) = %q, another request's = %q", s.ID, k, id, part, prev)
			}
			if len(part) > len(prev) {
				block[id] = part
			}
		}
	}
	for a, ta := range block {
		for b, tb := range block {
			if a < b && slices.Equal(ta[:min(len(ta), len(tb))], tb[:min(len(ta), len(tb))]) {
				t.Errorf("ids %d and %d share text %q / %q", a, b, ta, tb)
			}
		}
	}
	// line4 repeats line1's full blocks 1 and 2 (its block 3 was partial);
	// line5 shares block 1 only.
	var shared, first []string
	for _, s := range reqs {
		shared = append(shared, s.Tags["shared_blocks"])
		first = append(first, s.Tags["first_hash_id"])
	}
	if d := cmp.Diff([]string{"0", "2", "0", "2", "1"}, shared); d != "" {
		t.Errorf("shared_blocks tags (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"1", "1", "5", "1", "1"}, first); d != "" {
		t.Errorf("first_hash_id tags (-want +got):\n%s", d)
	}
}

func TestSharedPrefixesFollowTheChain(t *testing.T) {
	t.Parallel()
	es := []entry{
		{input: 12, hashIDs: []int64{1, 2, 3}},
		{input: 12, hashIDs: []int64{9, 2, 3}}, // same ids after a different first: no prefix
		{input: 12, hashIDs: []int64{1, 2, 7}},
		{input: 12, hashIDs: []int64{1, 2, 3}}, // all full blocks seen: 3
		{input: 10, hashIDs: []int64{1, 2, 8}}, // partial 8 is not stored
		{input: 12, hashIDs: []int64{1, 2, 8}}, // so only 2
	}
	if d := cmp.Diff([]int{0, 0, 2, 3, 2, 2}, sharedPrefixes(es, 4)); d != "" {
		t.Errorf("shared prefixes (-want +got):\n%s", d)
	}
}

// A plain JSONL and a CSV trace replay lengths and times, every request
// with text of its own.
func TestPlainFormats(t *testing.T) {
	t.Parallel()
	jsonl := writeTrace(t, "plain.jsonl", `{"timestamp": 0, "input_length": 9, "output_length": 2}
{"timestamp": 40, "input_length": 9, "output_length": 5}
`)
	csvPath := writeTrace(t, "plain.csv", "output_length,timestamp,input_length\n2,0,9\n5,40,9\n")
	for _, tc := range []struct{ path, format string }{{jsonl, "jsonl"}, {csvPath, "csv"}, {jsonl, "auto"}, {csvPath, "auto"}} {
		tr := sdktest.Run(t, Definition, sdktest.Options{Options: map[string]any{"trace": tc.path, "format": tc.format, "block-size": 4}})
		want := strings.TrimPrefix(filepath.Ext(tc.path), ".")
		if tr.Resolved["format"] != want {
			t.Errorf("%s as %s: resolved format %v, want %s", tc.path, tc.format, tr.Resolved["format"], want)
		}
		got := tr.Measured()
		if len(got) != 2 || got[1].Scheduled != 40*time.Millisecond || got[0].MaxTokens != 2 || got[1].MaxTokens != 5 {
			t.Fatalf("%s: %+v", tc.path, got)
		}
		a, b := words(t, got[0]), words(t, got[1])
		if len(a) != 9 || len(b) != 9 || a[0] == b[0] {
			t.Errorf("%s: prompts %q and %q, want 9 words each, no prefix shared", tc.path, a, b)
		}
		if _, has := got[1].Tags["shared_blocks"]; has {
			t.Errorf("%s: a trace without hash ids tags shared_blocks %q", tc.path, got[1].Tags["shared_blocks"])
		}
	}
	auto := sdktest.Run(t, Definition, sdktest.Options{Options: smallTrace()})
	if auto.Resolved["format"] != "mooncake" {
		t.Errorf("small.jsonl resolved as %v, want mooncake", auto.Resolved["format"])
	}
}

func TestWindow(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		opts  map[string]any
		lines []string
		first time.Duration
	}{
		{with(smallTrace(), "max-requests", 2), []string{"line1", "line2"}, 0},
		{with(smallTrace(), "start", 0.25), []string{"line3", "line4", "line5"}, 0},
		{with(smallTrace(), "start", 0.25, "duration", 1.0), []string{"line3", "line4"}, 0},
	} {
		tr := sdktest.Run(t, Definition, sdktest.Options{Options: tc.opts})
		if d := cmp.Diff(tc.lines, sdktest.IDs(tr.Measured())); d != "" {
			t.Errorf("%v (-want +got):\n%s", tc.opts, d)
		}
		if tr.Planned != len(tc.lines) {
			t.Errorf("%v: planned %d", tc.opts, tr.Planned)
		}
	}
	// The window's first request goes at once; the rest keep their gaps.
	tr := sdktest.Run(t, Definition, sdktest.Options{Options: with(smallTrace(), "start", 0.25)})
	if got := tr.Measured()[1].Scheduled; got != 750*time.Millisecond {
		t.Errorf("line4 due at %v, want 750ms after line3", got)
	}
}

func fieldErrors(t *testing.T, opts map[string]any) []option.FieldError {
	t.Helper()
	_, err := sdktest.RunE(Definition, sdktest.Options{Options: opts})
	var ce *sdktest.ConfigError
	if !errors.As(err, &ce) {
		t.Fatalf("want a *sdktest.ConfigError, got %v", err)
	}
	return ce.Fields()
}

// The linter reports every defect, each with file:line, as a --tr-trace
// error, before anything is sent.
func TestLinter(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		file, text string
		opts       map[string]any
		want       []string // messages after "<path>:"
	}{
		"non-monotonic": {"t.jsonl", `{"timestamp": 5, "input_length": 4, "output_length": 1, "hash_ids": [1]}
{"timestamp": 3, "input_length": 4, "output_length": 1, "hash_ids": [2]}
`, nil, []string{`2: timestamp 3 is before the previous request's 5 (line 1): a trace must be in time order`}},
		"hash ids vs length": {"t.jsonl", `{"timestamp": 0, "input_length": 9, "output_length": 1, "hash_ids": [1, 2]}

{"timestamp": 1, "input_length": 4, "output_length": 1, "hash_ids": [1, 2]}
`, nil, []string{
			`1: 2 hash_ids for input_length 9, expected ceil(9 / 4) = 3 (one per block of --tr-block-size 4 tokens)`,
			`3: 2 hash_ids for input_length 4, expected ceil(4 / 4) = 1 (one per block of --tr-block-size 4 tokens)`,
		}},
		"missing and invalid fields": {"t.jsonl", `{"input_length": 4, "output_length": 1, "hash_ids": [1]}
{"timestamp": 1, "input_length": "4", "output_length": 0, "hash_ids": [1]}
{"timestamp": -1, "input_length": 2.5, "output_length": 1}
{"timestamp": 2, "input_length": 4, "output_length": 1, "hash_ids": [1, -2]}
not json
`, map[string]any{"format": "mooncake"}, []string{
			`1: missing "timestamp"`,
			`2: input_length: must be an integer >= 1, got "4"`,
			`2: output_length: must be an integer >= 1, got 0`,
			`3: timestamp: must be a number of milliseconds >= 0, got -1`,
			`3: input_length: must be an integer >= 1, got 2.5`,
			`3: missing "hash_ids" (the mooncake format needs one per block; --tr-format jsonl replays lengths alone)`,
			`4: hash_ids[1]: must be an integer >= 0, got -2`,
			`5: not a JSON object: invalid character 'o' in literal null (expecting 'u')`,
		}},
		"csv header": {"t.csv", "time,input_length,output_length\n0,4,1\n", nil,
			[]string{`1: the header "time,input_length,output_length" lacks the column "timestamp" (expected timestamp,input_length,output_length)`}},
		"csv rows": {"t.csv", "timestamp,input_length,output_length\n5,4,1\n6,,1\n7,x,1\n1,4,1\n", nil, []string{
			`3: missing "input_length"`,
			`4: input_length: must be an integer >= 1, got x`,
			`5: timestamp 1 is before the previous request's 5 (line 2): a trace must be in time order`,
		}},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			path := writeTrace(t, tc.file, tc.text)
			opts := map[string]any{"trace": path, "block-size": 4}
			for k, v := range tc.opts {
				opts[k] = v
			}
			var want []option.FieldError
			for _, m := range tc.want {
				want = append(want, option.FieldError{Option: "trace", Message: path + ":" + m})
			}
			if d := cmp.Diff(want, fieldErrors(t, opts)); d != "" {
				t.Errorf("field errors (-want +got):\n%s", d)
			}
		})
	}
}

func TestLinterCapsItsList(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	for range 30 {
		b.WriteString(`{"timestamp": 0, "input_length": 4, "output_length": 1, "hash_ids": []}` + "\n")
	}
	path := writeTrace(t, "many.jsonl", b.String())
	got := fieldErrors(t, map[string]any{"trace": path, "block-size": 4})
	if len(got) != maxProblems+1 || got[maxProblems].Message != path+": ... and 10 more problems" {
		t.Errorf("%d errors, last %+v", len(got), got[len(got)-1])
	}
}

func TestOptionErrors(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		opts map[string]any
		want []option.FieldError
	}{
		"no trace":  {map[string]any{}, []option.FieldError{{Option: "trace", Message: "required: the path of the trace to replay"}}},
		"speedup 0": {with(smallTrace(), "speedup", 0.0), []option.FieldError{{Option: "speedup", Message: "must be a finite number > 0 (1 = the trace's own pace), got 0"}}},
		"missing file": {map[string]any{"trace": "testdata/nonexistent.jsonl"}, []option.FieldError{{Option: "trace",
			Message: "cannot read the trace: open testdata/nonexistent.jsonl: no such file or directory"}}},
		"empty window": {with(smallTrace(), "start", 10.0), []option.FieldError{{Option: "start",
			Message: "no request of testdata/small.jsonl (timestamps 0 to 1500.5 ms) falls in the window from 10 s for 0 s"}}},
		"due past a year": {with(smallTrace(), "speedup", 1e-9), []option.FieldError{{Option: "speedup",
			Message: "testdata/small.jsonl:3 is due 69444 hours into the replay at speed-up 0.000000001; at most 8760 hours fit: raise --tr-speedup or use a window (--tr-start, --tr-duration)"}}},
		"empty trace": {map[string]any{"trace": "testdata/empty.jsonl"}, []option.FieldError{{Option: "trace", Message: "testdata/empty.jsonl: no requests in the trace"}}},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if d := cmp.Diff(tc.want, fieldErrors(t, tc.opts)); d != "" {
				t.Errorf("field errors (-want +got):\n%s", d)
			}
		})
	}
}

// The prompt builder's vocabulary is one token per word for the built-in
// engine: a word never holds whitespace, and all are distinct.
func TestVocabulary(t *testing.T) {
	t.Parallel()
	p := newPrompts(1, 512)
	seen := map[string]bool{}
	for _, w := range p.vocab {
		if strings.ContainsAny(w, " \t\n") || w == "" || seen[w] {
			t.Fatalf("vocabulary word %q is empty, holds whitespace or repeats", w)
		}
		seen[w] = true
	}
	if len(seen) != vocabSize {
		t.Errorf("%d words, want %d", len(seen), vocabSize)
	}
	// Hash ids that differ only above the low bits still get different text.
	if a, b := p.text([]int64{1}, 8), p.text([]int64{1 + 1<<40}, 8); a == b {
		t.Errorf("ids 1 and 1+2^40 share text %q", a)
	}
}

// At the end the cached tokens the engine reports are set against the
// blocks the trace shares.
func TestReuseCheck(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		cached func(s sdktest.Sent) int
		level  string
		want   string
	}{
		// small.jsonl shares 2+2+1 blocks of 4 tokens.
		"as shared": {func(s sdktest.Sent) int { n, _ := strconv.Atoi(s.Tags["shared_blocks"]); return 4 * n }, "info",
			"Trace reuse: the engine reported 20 cached tokens over 5 successful requests; the trace shares 20 in full 4-token blocks (measured/expected 100.0%)"},
		"half": {func(s sdktest.Sent) int { n, _ := strconv.Atoi(s.Tags["shared_blocks"]); return 2 * n }, "info",
			"Trace reuse: the engine reported 10 cached tokens over 5 successful requests; the trace shares 20 in full 4-token blocks (measured/expected 50.0%)"},
		"none reported": {func(sdktest.Sent) int { return 0 }, "warn",
			"Trace reuse: the trace shares 20 tokens in full blocks, but the engine reported no cached tokens (usage.prompt_tokens_details.cached_tokens): it reports none, or its prefix cache is off"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			log, logs := sdktest.CaptureLogs()
			o := sdktest.Options{Options: smallTrace(), Logger: log, Engine: func(s sdktest.Sent) sdktest.Reply {
				r := sdktest.DefaultEngine(s)
				r.CachedTokens = tc.cached(s)
				return r
			}}
			sdktest.Run(t, Definition, o)
			if !slices.Contains(logs.At(t, tc.level), tc.want) {
				t.Errorf("no %s log %q in %v", tc.level, tc.want, logs.Lines(t))
			}
		})
	}
}

// Precheck lints the whole trace without the engine: a defect is its
// error, naming the file and line; a sound trace passes.
func TestPrecheck(t *testing.T) {
	t.Parallel()
	var good workload.Prechecker = Options{Trace: filepath.Join("testdata", "small.jsonl"), Format: "auto", Speedup: 1, BlockSize: 4}
	if err := good.Precheck(); err != nil {
		t.Errorf("small.jsonl: %v", err)
	}
	path := writeTrace(t, "bad.jsonl", `{"timestamp": 5, "input_length": 4, "output_length": 1}`+"\n"+`{"timestamp": 1, "input_length": 4, "output_length": 1}`+"\n")
	err := Options{Trace: path, Format: "auto", Speedup: 1, BlockSize: 4}.Precheck()
	if err == nil || !strings.Contains(err.Error(), "bad.jsonl:2") {
		t.Errorf("a timestamp going back: Precheck = %v, want an error naming bad.jsonl:2", err)
	}
}
