package tokenize

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rs/zerolog"

	"github.com/lmbench/lmbench/core/sim"
	"github.com/lmbench/lmbench/sdk/protocol"
	"github.com/lmbench/lmbench/sdk/subword"
)

// startSubwordSim serves the built-in engine with the subword tokenizer
// behind a handler that records /tokenize bodies and Authorization headers.
func startSubwordSim(t *testing.T, noTokenize bool) (string, func() ([]map[string]any, []string)) {
	t.Helper()
	cfg := sim.DefaultConfig()
	cfg.TimeScale, cfg.Tokenizer, cfg.NoTokenize = 0, sim.TokenizerSubword, noTokenize
	s, err := sim.New(cfg, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var bodies []map[string]any
	var auth []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/tokenize" {
			b, _ := io.ReadAll(r.Body)
			var m map[string]any
			_ = json.Unmarshal(b, &m)
			mu.Lock()
			bodies, auth = append(bodies, m), append(auth, r.Header.Get("Authorization"))
			mu.Unlock()
			r.Body = io.NopCloser(bytes.NewReader(b))
		}
		s.Handler().ServeHTTP(w, r)
	}))
	t.Cleanup(func() { srv.Close(); s.Close() })
	return srv.URL, func() ([]map[string]any, []string) {
		mu.Lock()
		defer mu.Unlock()
		return append([]map[string]any(nil), bodies...), append([]string(nil), auth...)
	}
}

func TestEngineTokenizerCountsAndCaches(t *testing.T) {
	t.Parallel()
	url, seen := startSubwordSim(t, false)
	tok := newEngineTokenizer(url+"/v1", "sk-test-key", "lmbench-sim", nil)
	texts := []string{"hello wonderful world", "hi", "extraordinary pseudowords", "hi"}
	chat := protocol.Chat{Messages: []protocol.ChatMessage{{Role: "system", Content: "be brief"}, {Role: "user", Content: "hello there"}}}
	q := protocol.TokenQuery{Texts: texts, Chats: []protocol.Chat{chat}}
	got, err := tok.CountTokens(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	want := protocol.TokenCounts{Chats: []int{subword.ChatTokens("be brief", "hello there")}}
	for _, s := range texts {
		want.Texts = append(want.Texts, subword.TextTokens(s)) // no BOS: add_special_tokens false
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("counts (-want +got):\n%s", d)
	}
	bodies, auth := seen()
	calls := len(bodies)
	if calls != 4 { // "hi" twice in the query: counted once
		t.Errorf("%d /tokenize calls for 3 distinct texts and a chat, want 4", calls)
	}
	for i, a := range auth {
		if a != "Bearer sk-test-key" {
			t.Errorf("call %d: Authorization %q", i, a)
		}
	}
	for _, b := range bodies {
		if _, ok := b["prompt"]; ok && b["add_special_tokens"] != false {
			t.Errorf("text counted with special tokens: %v", b)
		}
		if _, ok := b["messages"]; ok && b["add_generation_prompt"] != true {
			t.Errorf("chat counted without the generation prompt: %v", b)
		}
	}
	// Asked again, everything comes from the cache.
	again, err := tok.CountTokens(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, again); d != "" {
		t.Errorf("cached counts (-want +got):\n%s", d)
	}
	if bodies, _ := seen(); len(bodies) != calls {
		t.Errorf("%d more /tokenize calls for a query already answered", len(bodies)-calls)
	}
}

func TestResolveTokenizer(t *testing.T) {
	t.Parallel()
	with, _ := startSubwordSim(t, false)
	without, _ := startSubwordSim(t, true)
	for name, tc := range map[string]struct {
		mode, url string
		want      string
		hasTok    bool
		err, log  string
	}{
		"auto, /tokenize answers": {mode: "auto", url: with, want: Engine, hasTok: true},
		"default is auto":         {mode: "", url: with, want: Engine, hasTok: true},
		"auto, no /tokenize":      {mode: "auto", url: without, want: Words, log: "prompt lengths are in whitespace words"},
		"words":                   {mode: "words", url: with, want: Words, log: "--tokenizer words: prompt lengths are in whitespace words"},
		"engine, no /tokenize":    {mode: "engine", url: without, err: "--tokenizer engine: the engine's /tokenize does not answer: text 0: engine /tokenize: HTTP 404"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var logs bytes.Buffer
			tok, got, err := Resolve(context.Background(), tc.mode, "--tokenizer", Target{Base: tc.url, Model: "lmbench-sim"}, zerolog.New(&logs))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want || (tok != nil) != tc.hasTok {
				t.Errorf("got %q (tokenizer %v), want %q (%v)", got, tok != nil, tc.want, tc.hasTok)
			}
			if !strings.Contains(logs.String(), tc.log) {
				t.Errorf("log lacks %q:\n%s", tc.log, logs.String())
			}
		})
	}
}

func TestCheck(t *testing.T) {
	t.Parallel()
	for _, v := range []string{"auto", "engine", "words"} {
		if err := Check(v, "--tokenizer"); err != nil {
			t.Errorf("%s: %v", v, err)
		}
	}
	err := Check("./tokenizer.json", `key "tokenizer" in run.yaml`)
	if err == nil || !strings.HasPrefix(err.Error(), `key "tokenizer" in run.yaml ./tokenizer.json: expected a Hugging Face tokenizer.json or a directory holding one: `) {
		t.Errorf("error = %v", err)
	}
}

func TestEngineTokenizerErrorHidesCredentials(t *testing.T) {
	t.Parallel()
	tok := newEngineTokenizer("http://user:secret-pw@127.0.0.1:1/v1", "", "m", nil)
	_, err := tok.CountTokens(context.Background(), protocol.TokenQuery{Texts: []string{"x"}})
	if err == nil || strings.Contains(err.Error(), "secret-pw") {
		t.Errorf("error = %v, want one without the URL's password", err)
	}
}

func TestLeadingCount(t *testing.T) {
	t.Parallel()
	for body, want := range map[string]int{
		`{"count":3,"max_model_len":131072,"tokens":[16,16,16]}`: 3,
		`{"count":0}`:    0,
		`{"count":1234}`: 1234,
		`{"count":12,"tokens":[1,2` + strings.Repeat(",7", 100) + `]}`: 12,
		// Anything else is left to encoding/json (-1: not read here).
		`{"tokens":[1],"count":1}`: -1,
		`{"count": 3}`:             -1,
		`{"count":-3}`:             -1,
		`{"count":3.0}`:            -1,
		`{"count":03}`:             -1,
		`{"count":3`:               -1,
		`{"count":12345678901}`:    -1,
	} {
		n, ok := leadingCount([]byte(body))
		if !ok {
			n = -1
		}
		if n != want {
			t.Errorf("leadingCount(%s) = %d, want %d", body, n, want)
		}
	}
}

func TestMeterCountsEngineCalls(t *testing.T) {
	t.Parallel()
	url, seen := startSubwordSim(t, false)
	m := NewMeter(newEngineTokenizer(url+"/v1", "", "lmbench-sim", nil))
	for range 2 { // the second query comes from the cache: no call
		if _, err := m.CountTokens(context.Background(), protocol.TokenQuery{Texts: []string{"a b", "c d e", "a b"}}); err != nil {
			t.Fatal(err)
		}
	}
	bodies, _ := seen()
	if s := m.Sizing(); s.EngineCalls != 2 || int(s.EngineCalls) != len(bodies) || s.Seconds <= 0 {
		t.Errorf("sizing %+v after %d /tokenize calls, want 2 calls and some time", s, len(bodies))
	}
	if NewMeter(nil) != nil || NewMeter(nil).Sizing() != (Sizing{}) {
		t.Error("no tokenizer: want a nil Meter with a zero Sizing")
	}
}

// The body is what encoding/json would make of it, texts escaped.
func TestTokenizeBodyJSON(t *testing.T) {
	t.Parallel()
	no, yes := false, true
	text := "a \"quoted\" line\n\x01 <tag> é"
	for _, b := range []tokenizeBody{
		{Model: "m", Prompt: &text, AddSpecialTokens: &no},
		{Model: "m", Messages: []protocol.ChatMessage{{Role: "system", Content: "be brief"}, {Role: "user", Content: text}}, AddGenerationPrompt: &yes},
		{Prompt: &text},
	} {
		var got, want map[string]any
		if err := json.Unmarshal(b.appendJSON(nil), &got); err != nil {
			t.Fatalf("%s: %v", b.appendJSON(nil), err)
		}
		plain := map[string]any{}
		if b.Model != "" {
			plain["model"] = b.Model
		}
		if b.Prompt != nil {
			plain["prompt"] = *b.Prompt
		}
		if b.AddSpecialTokens != nil {
			plain["add_special_tokens"] = *b.AddSpecialTokens
		}
		if b.AddGenerationPrompt != nil {
			plain["add_generation_prompt"] = *b.AddGenerationPrompt
		}
		var msgs []map[string]string
		for _, m := range b.Messages {
			msgs = append(msgs, map[string]string{"role": m.Role, "content": m.Content})
		}
		if msgs != nil {
			plain["messages"] = msgs
		}
		wb, _ := json.Marshal(plain)
		_ = json.Unmarshal(wb, &want)
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("body (-want +got):\n%s", d)
		}
	}
}

func TestChatKeyTellsChatsApart(t *testing.T) {
	t.Parallel()
	msg := func(pairs ...string) protocol.Chat {
		var c protocol.Chat
		for i := 0; i < len(pairs); i += 2 {
			c.Messages = append(c.Messages, protocol.ChatMessage{Role: pairs[i], Content: pairs[i+1]})
		}
		return c
	}
	chats := []protocol.Chat{msg("user", "ab"), msg("user", "a", "b", ""), msg("usera", "b"), msg("user", "ab", "user", ""), msg()}
	seen := map[string]int{}
	for i, c := range chats {
		k := chatKey(c)
		if j, ok := seen[k]; ok {
			t.Errorf("chats %d and %d share the key %q", j, i, k)
		}
		seen[k] = i
	}
}

// toolChat is a tool-use chat: the tools offered, an assistant's call and
// the tool's reply.
func toolChat() protocol.Chat {
	return protocol.Chat{
		Messages: []protocol.ChatMessage{
			{Role: "user", Content: "weather in Oslo please"},
			{Role: "assistant", ToolCalls: []protocol.ToolCall{{ID: "c1", Name: "get_weather", Arguments: `{"city": "Oslo"}`}}},
			{Role: "tool", Content: "rain and wind", ToolCallID: "c1"},
		},
		Tools: []protocol.Tool{{Name: "get_weather", Description: "Current weather by city", Parameters: `{"type": "object"}`}},
	}
}

// A chat's tools and tool calls reach the engine's /tokenize in OpenAI's
// shape, and are counted as the engine renders them.
func TestEngineTokenizerCountsToolChats(t *testing.T) {
	t.Parallel()
	url, seen := startSubwordSim(t, false)
	tok := newEngineTokenizer(url+"/v1", "", "lmbench-sim", nil)
	chat := toolChat()
	bare := protocol.Chat{Messages: chat.Messages[:1]}
	got, err := tok.CountTokens(context.Background(), protocol.TokenQuery{Chats: []protocol.Chat{chat, bare}})
	if err != nil {
		t.Fatal(err)
	}
	want := subword.ChatTokens("weather in Oslo please", "", "rain and wind") +
		subword.ToolCallTokens("get_weather", `{"city": "Oslo"}`) +
		subword.PerMessage + subword.ToolTokens("get_weather", "Current weather by city", `{"type": "object"}`)
	if d := cmp.Diff([]int{want, subword.ChatTokens("weather in Oslo please")}, got.Chats); d != "" {
		t.Errorf("chat counts (-want +got):\n%s", d)
	}
	bodies, _ := seen()
	var sent map[string]any
	for _, b := range bodies {
		if _, ok := b["tools"]; ok {
			sent = b
		}
	}
	if sent == nil {
		t.Fatalf("no /tokenize body carried tools: %v", bodies)
	}
	msgs, _ := sent["messages"].([]any)
	if len(msgs) != 3 {
		t.Fatalf("messages sent: %v", sent["messages"])
	}
	call := msgs[1].(map[string]any)["tool_calls"].([]any)[0].(map[string]any)["function"].(map[string]any)
	if call["name"] != "get_weather" || call["arguments"] != `{"city": "Oslo"}` {
		t.Errorf("tool call sent as %v", call)
	}
	if id := msgs[2].(map[string]any)["tool_call_id"]; id != "c1" {
		t.Errorf("tool_call_id sent as %v, want c1", id)
	}
	_, err = tok.CountTokens(context.Background(), protocol.TokenQuery{Chats: []protocol.Chat{{
		Messages: chat.Messages[:1], Tools: []protocol.Tool{{Name: "f", Parameters: "{not json"}}}}})
	if err == nil || !strings.Contains(err.Error(), `chat 0: tools[0] ("f"): parameters are not valid JSON`) {
		t.Errorf("bad parameters: got %v", err)
	}
}

func TestChatKeyTellsToolChatsApart(t *testing.T) {
	t.Parallel()
	full := toolChat()
	noTools := full
	noTools.Tools = nil
	otherArgs := toolChat()
	otherArgs.Messages[1].ToolCalls = []protocol.ToolCall{{ID: "c1", Name: "get_weather", Arguments: `{"city": "Rome"}`}}
	noID := toolChat()
	noID.Messages[2].ToolCallID = ""
	seen := map[string]string{}
	for name, c := range map[string]protocol.Chat{"full": full, "no tools": noTools, "other arguments": otherArgs, "no call id": noID} {
		k := chatKey(c)
		if other, ok := seen[k]; ok {
			t.Errorf("%s and %s share a key", other, name)
		}
		seen[k] = name
	}
}

// The count is read from each shape an engine may answer: count first
// with a long token array after it (read and dropped), count after the
// tokens (decoded), and an error status keeps its body for the message.
func TestEngineTokenizerReadsEachAnswerShape(t *testing.T) {
	t.Parallel()
	ids := strings.TrimSuffix(strings.Repeat("12345,", 50000), ",")
	answers := map[string]struct {
		status int
		body   string
	}{
		"lead":  {http.StatusOK, `{"count":50000,"max_model_len":8192,"tokens":[` + ids + `]}`},
		"trail": {http.StatusOK, `{"tokens":[1,2,3],"count":3}`},
		"short": {http.StatusOK, `{"count":7}`},
		"bad":   {http.StatusBadRequest, `{"error":"the prompt is too long for this model"}`},
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b struct{ Prompt string }
		_ = json.NewDecoder(r.Body).Decode(&b)
		a := answers[b.Prompt]
		w.WriteHeader(a.status)
		io.WriteString(w, a.body)
	}))
	t.Cleanup(srv.Close)
	tok := newEngineTokenizer(srv.URL+"/v1", "", "m", nil)
	for prompt, want := range map[string]int{"lead": 50000, "trail": 3, "short": 7} {
		got, err := tok.CountTokens(context.Background(), protocol.TokenQuery{Texts: []string{prompt}})
		if err != nil {
			t.Fatalf("%s: %v", prompt, err)
		}
		if got.Texts[0] != want {
			t.Errorf("%s: count %d, want %d", prompt, got.Texts[0], want)
		}
	}
	_, err := tok.CountTokens(context.Background(), protocol.TokenQuery{Texts: []string{"bad"}})
	if err == nil || !strings.Contains(err.Error(), "HTTP 400") || !strings.Contains(err.Error(), "too long for this model") {
		t.Errorf("error status: got %v, want HTTP 400 with the engine's message", err)
	}
}
