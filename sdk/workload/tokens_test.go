package workload_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/lmbench/lmbench/sdk/protocol"
	"github.com/lmbench/lmbench/sdk/sdktest"
	"github.com/lmbench/lmbench/sdk/subword"
	"github.com/lmbench/lmbench/sdk/workload"
)

// funcCounter counts texts with f (chats unsupported).
type funcCounter func(string) int

func (f funcCounter) CountTokens(_ context.Context, q protocol.TokenQuery) (protocol.TokenCounts, error) {
	var c protocol.TokenCounts
	for _, t := range q.Texts {
		c.Texts = append(c.Texts, f(t))
	}
	return c, nil
}

func TestOneTokenWords(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	candidates := []string{"hi", "pseudoword1", "the", "wonderful", "a", "extraordinary", "cat"}
	var want []string
	for _, c := range candidates {
		if subword.WordTokens(c) == 1 {
			want = append(want, c)
		}
	}
	if len(want) < 3 || len(want) == len(candidates) {
		t.Fatalf("test candidates should mix one-token and longer words, got %v", want)
	}
	fake := &sdktest.FakeTokenizer{}
	got, err := workload.NewTokenizer(fake).OneTokenWords(ctx, candidates)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("one-token words (-want +got):\n%s", d)
	}
	if n := len(fake.Queries()); n != 2 {
		t.Errorf("%d queries, want 2 (one batch of probes, one additivity check)", n)
	}
}

func TestOneTokenWordsRefusesMergingTokenizers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	words := func(s string) int { return len(strings.Fields(s)) }
	for name, tc := range map[string]struct {
		count funcCounter
		want  string
	}{
		"doubled word merges": {
			func(s string) int { return min(words(s), 1) },
			"none of the 2 candidates (hi, the…) costs exactly one token",
		},
		"long runs merge": {
			func(s string) int {
				if n := words(s); n > 2 {
					return n - 1
				}
				return words(s)
			},
			"64 one-token words joined by spaces cost 63 tokens, not one each",
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, err := workload.NewTokenizer(tc.count).OneTokenWords(ctx, []string{"hi", "the"})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestExactTexts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	// An extra token for every 100 spaces: not additive, so the builder
	// has to count and adjust.
	quirky := funcCounter(func(s string) int { return subword.TextTokens(s) + strings.Count(s, " ")/100 })
	for name, counter := range map[string]protocol.TokenCounter{"subword": &sdktest.FakeTokenizer{}, "quirky": quirky} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			tok := workload.NewTokenizer(counter)
			prefixes := []string{"Document 0:", "Document 12345: extraordinary pseudowords here", ""}
			for _, n := range []int{1, 7, 2000} {
				texts, err := tok.ExactTexts(ctx, prefixes[2:], []string{"hi", "a"}, n)
				if err != nil {
					t.Fatalf("n=%d: %v", n, err)
				}
				checkCounts(t, counter, texts, n)
			}
			texts, err := tok.ExactTexts(ctx, prefixes, []string{"hi", "a"}, 2000)
			if err != nil {
				t.Fatal(err)
			}
			for i, p := range prefixes {
				if !strings.HasPrefix(texts[i], p) {
					t.Errorf("text %d does not start with its prefix %q", i, p)
				}
			}
			checkCounts(t, counter, texts, 2000)
		})
	}
}

func checkCounts(t *testing.T, c protocol.TokenCounter, texts []string, n int) {
	t.Helper()
	got, err := c.CountTokens(context.Background(), protocol.TokenQuery{Texts: texts})
	if err != nil {
		t.Fatal(err)
	}
	for i, g := range got.Texts {
		if g != n {
			t.Errorf("text %d costs %d tokens, want exactly %d", i, g, n)
		}
	}
}

func TestExactTextsErrors(t *testing.T) {
	t.Parallel()
	tok := workload.NewTokenizer(&sdktest.FakeTokenizer{})
	_, err := tok.ExactTexts(context.Background(), []string{"extraordinary wonderful pseudowords"}, []string{"hi"}, 2)
	if err == nil || !strings.Contains(err.Error(), `the prefix "extraordinary wonderful pseudowords" alone costs`) {
		t.Errorf("error = %v, want the prefix named", err)
	}
	if _, err := tok.ExactTexts(context.Background(), []string{""}, nil, 2); err == nil {
		t.Error("no error for an empty vocabulary")
	}
}

// Prefixes of one byte length share one count alone; the texts' checks
// correct those that cost otherwise, and a sibling too long for n is
// still named.
func TestExactTextsCountsOnePrefixPerLength(t *testing.T) {
	t.Parallel()
	fake := &sdktest.FakeTokenizer{}
	tok := workload.NewTokenizer(fake)
	var prefixes []string
	for i := 10; i < 100; i++ {
		prefixes = append(prefixes, fmt.Sprintf("Request %d:", i))
	}
	prefixes = append(prefixes, "extraordinar", "Request 100:") // same length, other counts
	texts, err := tok.ExactTexts(context.Background(), prefixes, []string{"hi"}, 50)
	if err != nil {
		t.Fatal(err)
	}
	counted := 0
	for _, q := range fake.Queries() {
		counted += len(q.Texts)
	}
	if max := 2 + len(prefixes) + 2; counted > max { // 2 lengths alone, every text, 2 corrections
		t.Errorf("%d texts counted for %d prefixes, want at most %d", counted, len(prefixes), max)
	}
	checkCounts(t, fake, texts, 50)

	long := "a a a a a a a a a"  // 17 bytes, 9 tokens
	short := "extraordinaries!!" // 17 bytes, counted first
	if len(long) != len(short) || subword.TextTokens(long) <= 5 || subword.TextTokens(short) >= 5 {
		t.Fatalf("test prefixes should share a length and straddle 5 tokens: %d/%d bytes, %d/%d tokens",
			len(long), len(short), subword.TextTokens(long), subword.TextTokens(short))
	}
	_, err = tok.ExactTexts(context.Background(), []string{short, long}, []string{"hi"}, 5)
	if err == nil || !strings.Contains(err.Error(), `the prefix "a a a a a a a a a" alone costs 9 tokens, more than 5`) {
		t.Errorf("error = %v, want the long prefix named", err)
	}
}

// TestEnvTokenizer: Env.Tokenizer is there only when the host sent a
// counter and announced the capability, in-process and over gRPC.
func TestEnvTokenizer(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		tokens protocol.TokenCounter
		caps   []string
		grpc   bool
		words  bool // the definition does not count tokens
		want   bool
	}{
		"definition in words": {tokens: &sdktest.FakeTokenizer{}, words: true},
		"in-process":          {tokens: &sdktest.FakeTokenizer{}, want: true},
		"over gRPC":           {tokens: &sdktest.FakeTokenizer{}, grpc: true, want: true},
		"no tokenizer":        {},
		"minor-0 host":        {tokens: &sdktest.FakeTokenizer{}, caps: []string{}},
		"minor-1 host":        {tokens: &sdktest.FakeTokenizer{}, caps: []string{protocol.FinishedInStep, protocol.LookAhead}},
		"no tokenizer rpc":    {grpc: true},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var count []int
			var has bool
			def := definition(func(_ testOptions, env workload.Env) (workload.Workload, error) {
				has = env.Tokenizer != nil
				if has {
					var err error
					if count, err = env.Tokenizer.Count(env.Context, "hi there"); err != nil {
						return nil, err
					}
				}
				return &fake{step: func(workload.StepInput) (workload.StepOutput, error) { return workload.Done(), nil }}, nil
			})
			def.CountsTokens = !tc.words
			o := sdktest.Options{Tokens: tc.tokens, HostCapabilities: tc.caps}
			if tc.grpc {
				sdktest.RunGRPC(t, def, o)
			} else {
				sdktest.Run(t, def, o)
			}
			if has != tc.want {
				t.Fatalf("Env.Tokenizer set = %v, want %v", has, tc.want)
			}
			if tc.want && !cmp.Equal(count, []int{subword.TextTokens("hi there")}) {
				t.Errorf("count = %v, want [%d]", count, subword.TextTokens("hi there"))
			}
		})
	}
}

// Batches larger than one query's budget go out as several queries, the
// answers in order.
func TestCountSplitsLargeBatches(t *testing.T) {
	t.Parallel()
	fake := &sdktest.FakeTokenizer{}
	tok := workload.NewTokenizer(fake)
	big := strings.Repeat("hi ", 1<<20) // 3 MiB: two per 4 MiB query at most
	texts := []string{big, "hi", big, big}
	got, err := tok.Count(context.Background(), texts...)
	if err != nil {
		t.Fatal(err)
	}
	chats := []workload.TokenChat{{Messages: []workload.TokenMessage{{Role: "user", Content: big}}}, {Messages: []workload.TokenMessage{{Role: "user", Content: big}}}}
	gotChats, err := tok.CountChats(context.Background(), chats...)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]int{1 << 20, 1, 1 << 20, 1 << 20}, got); d != "" {
		t.Errorf("counts (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]int{1<<20 + subword.ChatTokens(""), 1<<20 + subword.ChatTokens("")}, gotChats); d != "" {
		t.Errorf("chat counts (-want +got):\n%s", d)
	}
	if n := len(fake.Queries()); n != 3+2 {
		t.Errorf("%d queries, want 3 for the texts and 2 for the chats", n)
	}
}

// FitTexts keeps each text's own words (a prefix of them) and makes it
// exactly n tokens, even where words cost several tokens each.
func TestFitTexts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	fake := &sdktest.FakeTokenizer{}
	tok := workload.NewTokenizer(fake)
	words := make([]string, 5000)
	for i := range words {
		words[i] = fmt.Sprintf("pseudo%dword", i) // 1-6 tokens each
	}
	grow := func(header string, from int) func(k int) string {
		return func(k int) string { return header + " " + strings.Join(words[from:from+k], " ") }
	}
	for _, n := range []int{20, 300, 3000} {
		texts, err := tok.FitTexts(ctx, []func(int) string{grow("CTX_0", 0), grow("CTX_1", 100)}, []string{"hi"}, n)
		if err != nil {
			t.Fatalf("n=%d: %v", n, err)
		}
		checkCounts(t, fake, texts, n)
		for i, from := range []int{0, 100} {
			if want := "CTX_" + fmt.Sprint(i) + " " + words[from] + " " + words[from+1]; !strings.HasPrefix(texts[i], want) {
				t.Errorf("n=%d: text %d starts %q, want its own words %q", n, i, texts[i][:40], want)
			}
		}
	}
	if _, err := tok.FitTexts(ctx, []func(int) string{grow("extraordinary wonderful pseudowords", 0)}, []string{"hi"}, 2); err == nil {
		t.Error("no error for a text that cannot fit")
	}
}

// toolRequest is a tool-use request: a registered context, the tools
// offered, an assistant's call and the tool's reply.
func toolRequest(reg *workload.Registry) workload.Request {
	ctx := reg.Register("ctx", "Weather desk.")
	return workload.Chat("r1",
		workload.System(ctx, workload.Text(" Be brief.")),
		workload.User(workload.Text("weather in Oslo?")),
		workload.AssistantCalls([]workload.ToolCall{{ID: "c1", Name: "get_weather", Arguments: `{"city": "Oslo"}`}}),
		workload.ToolReply("c1", workload.Text("rain")),
	).WithTools(workload.Tool{Name: "get_weather", Description: "Weather by city", Parameters: `{"type": "object"}`})
}

func TestChatOf(t *testing.T) {
	t.Parallel()
	reg := workload.NewRegistry()
	got, err := workload.ChatOf(reg, toolRequest(reg))
	if err != nil {
		t.Fatal(err)
	}
	want := workload.TokenChat{
		Messages: []workload.TokenMessage{
			{Role: "system", Content: "Weather desk. Be brief."},
			{Role: "user", Content: "weather in Oslo?"},
			{Role: "assistant", ToolCalls: []workload.ToolCall{{ID: "c1", Name: "get_weather", Arguments: `{"city": "Oslo"}`}}},
			{Role: "tool", Content: "rain", ToolCallID: "c1"},
		},
		Tools: []workload.Tool{{Name: "get_weather", Description: "Weather by city", Parameters: `{"type": "object"}`}},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("ChatOf (-want +got):\n%s", d)
	}
	reg.Release("ctx")
	if _, err := workload.ChatOf(reg, toolRequest(workload.NewRegistry())); err == nil ||
		err.Error() != `request "r1": message 0 references content "ctx", which is not registered` {
		t.Errorf("unregistered reference: got %v", err)
	}
	if _, err := workload.ChatOf(reg, workload.Completion("p", workload.Text("x"))); err == nil || !strings.Contains(err.Error(), "completions request") {
		t.Errorf("completion: got %v", err)
	}
}

// CountChats counts tools and tool calls where the host does, and refuses
// (rather than undercount) on a host that counts only messages' text.
func TestCountChatsWithTools(t *testing.T) {
	t.Parallel()
	older := slices.DeleteFunc(slices.Clone(protocol.HostCapabilities), func(c string) bool { return c == protocol.TokenizeTools })
	for name, tc := range map[string]struct {
		caps    []string
		grpc    bool
		wantErr string
	}{
		"in-process":   {},
		"over gRPC":    {grpc: true},
		"minor-6 host": {caps: older, wantErr: `counting chat 0: it has tools or tool calls, and this lmbench counts only messages' text (it lacks capability "tokenize-tools", protocol minor 7)`},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var got []int
			var countErr error
			def := definition(func(_ testOptions, env workload.Env) (workload.Workload, error) {
				chat, err := workload.ChatOf(env.Content, toolRequest(env.Content))
				if err != nil {
					return nil, err
				}
				got, countErr = env.Tokenizer.CountChats(env.Context, chat)
				return &fake{step: func(workload.StepInput) (workload.StepOutput, error) { return workload.Done(), nil }}, nil
			})
			def.CountsTokens = true
			o := sdktest.Options{Tokens: &sdktest.FakeTokenizer{}, HostCapabilities: tc.caps}
			if tc.grpc {
				sdktest.RunGRPC(t, def, o)
			} else {
				sdktest.Run(t, def, o)
			}
			if tc.wantErr != "" {
				if countErr == nil || !strings.Contains(countErr.Error(), tc.wantErr) {
					t.Errorf("CountChats error = %v, want %q", countErr, tc.wantErr)
				}
				return
			}
			if countErr != nil {
				t.Fatal(countErr)
			}
			want := subword.ChatTokens("Weather desk. Be brief.", "weather in Oslo?", "", "rain") +
				subword.ToolCallTokens("get_weather", `{"city": "Oslo"}`) +
				subword.PerMessage + subword.ToolTokens("get_weather", "Weather by city", `{"type": "object"}`)
			if !cmp.Equal(got, []int{want}) {
				t.Errorf("CountChats = %v, want [%d]", got, want)
			}
		})
	}
}
