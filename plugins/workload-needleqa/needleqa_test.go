package main

import (
	"flag"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/lmbench/lmbench/sdk/option"
	"github.com/lmbench/lmbench/sdk/protocol"
	"github.com/lmbench/lmbench/sdk/sdktest"
	"github.com/lmbench/lmbench/sdk/workload"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/")

// small is a cheap run: 4 documents of 60 tokens, 2 facts each.
func small(extra map[string]any) sdktest.Options {
	o := map[string]any{"document-length": 60, "documents": 4, "facts-per-document": 2, "depth": "0.25,0.75"}
	for k, v := range extra {
		o[k] = v
	}
	return sdktest.Options{Options: o}
}

var (
	askedVault = regexp.MustCompile(`What is the access code of vault (\d+)\?`)
	statedCode = `The access code of vault %s is (\d+)\.`
)

// answering is an engine that answers a needle question from its prompt,
// as the built-in engine's --sim-answers does, and "I do not know." when
// the prompt lacks the fact.
func answering(s sdktest.Sent) sdktest.Reply {
	r := sdktest.DefaultEngine(s)
	prompt := s.Messages[len(s.Messages)-1].Content
	r.Text = "I do not know."
	if m := askedVault.FindAllStringSubmatch(prompt, -1); len(m) > 0 {
		re := regexp.MustCompile(strings.Replace(statedCode, "%s", m[len(m)-1][1], 1))
		if c := re.FindStringSubmatch(prompt); c != nil {
			r.Text = c[1]
		}
	}
	return r
}

// Every question is scored 1 against an engine that reads the facts, 0
// against one that does not; warmup requests get no score.
func TestScores(t *testing.T) {
	t.Parallel()
	for _, variant := range []string{variantPrefix, variantPermuted} {
		t.Run(variant, func(t *testing.T) {
			t.Parallel()
			o := small(map[string]any{"variant": variant, "documents-per-prompt": 2})
			o.Engine = answering
			tr := sdktest.Run(t, Definition, o)
			if len(tr.Scores) != len(tr.Measured()) || len(tr.Scores) != 8 {
				t.Fatalf("%d scores for %d questions, want 8 of each", len(tr.Scores), len(tr.Measured()))
			}
			for _, s := range tr.Scores {
				if s.Phase != protocol.Measure || s.Values[scoreExact] != 1 || s.Values[scoreContains] != 1 {
					t.Errorf("score %+v, want exact and contains 1 for a measured question", s)
				}
			}
			o.Engine = sdktest.DefaultEngine // "answer to <id>": never the code
			tr = sdktest.Run(t, Definition, o)
			for _, s := range tr.Scores {
				if s.Values[scoreExact] != 0 || s.Values[scoreContains] != 0 {
					t.Errorf("score %+v of a wrong answer, want 0s", s)
				}
			}
		})
	}
}

func TestJudge(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		answer          string
		exact, contains bool
	}{
		{"4832", true, true},
		{" 4832.\n", true, true},
		{"The code is 4832.", false, true},
		{"48320", false, true},
		{"I do not know.", false, false},
		{"", false, false},
	} {
		exact, contains := Judge(tc.answer, "4832")
		if exact != tc.exact || contains != tc.contains {
			t.Errorf("Judge(%q) = %v, %v; want %v, %v", tc.answer, exact, contains, tc.exact, tc.contains)
		}
	}
}

// Facts sit at their depths, and each question carries its fact's depth.
func TestDepths(t *testing.T) {
	t.Parallel()
	vocab := []string{"w"}
	facts := plantFacts(0, 3, []float64{0, 0.5, 1}, 7)
	words := strings.Fields(documentText(0, 100, facts, vocab, 7))
	if len(words) != 100 {
		t.Fatalf("%d words, want 100", len(words))
	}
	filler := 100 - 2 - 3*factWords
	for i, want := range []int{2, 2 + factWords + filler/2, 2 + 2*factWords + filler} {
		if words[want] != "The" || words[want+5] != facts[i].sentence()[len("The access code of vault "):len("The access code of vault ")+len(words[want+5])] {
			t.Errorf("fact %d not at word %d: %v", i, want, words[max(want-1, 0):min(want+factWords, len(words))])
		}
	}
	tr := sdktest.Run(t, Definition, small(nil))
	for _, r := range tr.Measured() {
		if d := r.Tags["depth"]; d != "0.25" && d != "0.75" {
			t.Errorf("%s: depth tag %q, want 0.25 or 0.75", r.ID, d)
		}
	}
}

// A permuted question's prompt carries its group's documents, its own
// never first, and declares blended reuse.
func TestPermuted(t *testing.T) {
	t.Parallel()
	tr := sdktest.Run(t, Definition, small(map[string]any{"variant": variantPermuted, "documents-per-prompt": 2}))
	for _, r := range tr.Measured() {
		prompt := r.Messages[0].Content
		own := "Document " + r.Tags["doc"] + ":"
		if strings.HasPrefix(prompt, own) || !strings.Contains(prompt, own) {
			t.Errorf("%s: its document %q must be in the prompt, not first: %.40q", r.ID, own, prompt)
		}
		if n := strings.Count(prompt, "Document "); n != 2 {
			t.Errorf("%s: %d documents in the prompt, want 2", r.ID, n)
		}
	}
	if len(tr.Warmup()) != 4 {
		t.Errorf("%d warmup requests, want one per document (4)", len(tr.Warmup()))
	}
}

func TestFieldErrors(t *testing.T) {
	t.Parallel()
	sdktest.CheckFieldErrors(t, Definition, small(nil), []sdktest.FieldErrorCase{
		{Name: "depth out of range", Options: map[string]any{"depth": "0.5,1.5"},
			Want: []option.FieldError{{Option: "depth", Message: `expected fractions between 0 and 1 separated by commas, got "0.5,1.5"`}}},
		{Name: "too short for its facts", Options: map[string]any{"document-length": 20, "facts-per-document": 3},
			Want: []option.FieldError{{Option: "document-length", Message: "20 tokens cannot hold 3 facts of 8 tokens and the document's header: at least 29 expected"}}},
		{Name: "fewer documents than a prompt holds", Options: map[string]any{"variant": variantPermuted, "documents": 2, "documents-per-prompt": 3},
			Want: []option.FieldError{{Option: "documents", Message: "the permuted variant puts 3 documents (--nqa-documents-per-prompt) in each prompt: at least that many expected, got 2"}}},
	})
}

// The same seed asks the same questions in the same order, each fact
// questions-per-fact times with an identical prompt.
func TestQuestionsPerFact(t *testing.T) {
	t.Parallel()
	tr := sdktest.Run(t, Definition, small(map[string]any{"questions-per-fact": 2}))
	prompts := map[string][]string{}
	for _, r := range tr.Measured() {
		key := r.Tags["doc"] + "/" + r.Tags["fact"]
		prompts[key] = append(prompts[key], r.Messages[0].Content)
	}
	if len(prompts) != 8 {
		t.Fatalf("%d facts asked about, want 8", len(prompts))
	}
	for k, ps := range prompts {
		if len(ps) != 2 || ps[0] != ps[1] {
			t.Errorf("fact %s: asked %d times, prompts identical: %v", k, len(ps), len(ps) == 2 && ps[0] == ps[1])
		}
	}
	if got := tr.Resolved["num-questions"]; got != int64(16) {
		t.Errorf("num-questions = %v, want 16", got)
	}
	ids := sdktest.IDs(tr.Measured())
	if !slices.Contains(ids, "d3_f1_a1") {
		t.Errorf("ids %v lack d3_f1_a1", ids)
	}
}

// TestGoldenTranscript pins the whole request stream of a tiny run of
// each variant. Rewrite with `go test -run TestGoldenTranscript -update`.
func TestGoldenTranscript(t *testing.T) {
	t.Parallel()
	for _, variant := range []string{variantPrefix, variantPermuted} {
		t.Run(variant, func(t *testing.T) {
			t.Parallel()
			o := small(map[string]any{"variant": variant, "documents-per-prompt": 2, "document-length": 30, "facts-per-document": 1})
			o.Options["depth"] = "0.5"
			tr := sdktest.RunGRPC(t, Definition, o)
			sdktest.Golden(t, filepath.Join("testdata", variant+".golden.jsonl"), tr.JSONL(), *update)
		})
	}
}

func TestSharding(t *testing.T) {
	t.Parallel()
	for _, variant := range []string{variantPrefix, variantPermuted} {
		o := small(map[string]any{"variant": variant, "documents-per-prompt": 2, "documents": 5, "num-inflight-requests": 4})
		o.Engine = sdktest.OutOfOrderEngine
		sdktest.CheckSharding(t, Definition, o, 2)
	}
	sdktest.CheckRefused(t, Definition, sdktest.Options{Options: map[string]any{"documents": 1},
		Common: workload.Common{Shard: workload.Shard{Index: 0, Count: 2}}},
		"documents: 1 documents cannot be split among 2 shards (--shard 0/2): each shard needs at least one")
}

func TestDefaults(t *testing.T) {
	t.Parallel()
	tr := sdktest.Run(t, Definition, sdktest.Options{})
	want := map[string]any{
		"document-length": int64(2000), "documents": int64(4), "facts-per-document": int64(3), "depth": "0.1,0.5,0.9",
		"questions-per-fact": int64(1), "variant": "prefix", "documents-per-prompt": int64(3), "max-tokens": int64(16),
		"num-inflight-requests": int64(2), "num-questions": int64(12),
	}
	if d := cmp.Diff(want, tr.Resolved); d != "" {
		t.Errorf("resolved (-want +got):\n%s", d)
	}
}
