package tokenize

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/rs/zerolog"

	"github.com/lmbench/lmbench/core/engine/profile"
	"github.com/lmbench/lmbench/sdk/protocol"
)

// recorded is an engine's transcript from core/engine/profile/testdata:
// its answers, and the token counts of the text "hi" and of the chat
// [user: hi] it implies (-1: the engine has no tokenizer).
type recorded struct {
	Want struct {
		Kind       profile.Kind `json:"kind"`
		TextTokens int          `json:"text_tokens"`
		ChatTokens int          `json:"chat_tokens"`
	} `json:"want"`
	Responses []struct {
		Method, Path, When string
		Status             int
		Body               json.RawMessage
	} `json:"responses"`
}

// replayEngine serves the transcript of kind and records each request's
// path and body.
func replayEngine(t *testing.T, kind string) (recorded, string, func() map[string][]string) {
	t.Helper()
	b, err := os.ReadFile("../engine/profile/testdata/" + kind + ".json")
	if err != nil {
		t.Fatal(err)
	}
	var tr recorded
	if err := json.Unmarshal(b, &tr); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	seen := map[string][]string{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		seen[r.URL.Path] = append(seen[r.URL.Path], string(body))
		mu.Unlock()
		for _, x := range tr.Responses {
			if x.Method == r.Method && x.Path == r.URL.Path && strings.Contains(string(body), x.When) {
				w.WriteHeader(x.Status)
				w.Write(x.Body)
				return
			}
		}
		http.NotFound(w, r)
	}))
	t.Cleanup(srv.Close)
	return tr, srv.URL, func() map[string][]string {
		mu.Lock()
		defer mu.Unlock()
		return seen
	}
}

// TestEngineShapesAgainstRecordedEngines: --tokenizer auto counts
// through each engine's own endpoints, in its shape, and sizes exactly:
// texts without the special tokens an engine adds, chats through its
// template.
func TestEngineShapesAgainstRecordedEngines(t *testing.T) {
	t.Parallel()
	bodyHas := map[profile.Kind][]string{
		profile.VLLM:     {`"prompt":"hi"`, `"add_special_tokens":false`, `"messages":[`, `"add_generation_prompt":true`},
		profile.SGLang:   {`"prompt":"hi"`, `"add_special_tokens":false`, `"messages":[`},
		profile.LlamaCpp: {`"content":"hi"`, `"add_special":false`, `"with_pieces":false`, `"parse_special":true`},
		profile.TGI:      {`"inputs":"hi"`, `"messages":[`},
	}
	for _, kind := range []string{"vllm", "sglang", "llamacpp", "tgi", "ollama"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			tr, url, seen := replayEngine(t, kind)
			p, _ := profile.ForKind(tr.Want.Kind)
			tok, name, err := Resolve(context.Background(), Auto, "--tokenizer",
				Target{Base: url + "/v1", Model: "m", Tokenizer: &p.Tokenizer}, zerolog.Nop())
			if err != nil {
				t.Fatal(err)
			}
			if tr.Want.TextTokens < 0 {
				if tok != nil || name != Words || len(seen()) != 0 {
					t.Errorf("an engine without a tokenizer: got %q, asked %v; want words and no calls", name, seen())
				}
				return
			}
			if tok == nil {
				t.Fatalf("no tokenizer (%s)", name)
			}
			got, err := tok.CountTokens(context.Background(), protocol.TokenQuery{Texts: []string{"hi"},
				Chats: []protocol.Chat{{Messages: []protocol.ChatMessage{{Role: "user", Content: "hi"}}}}})
			if err != nil {
				t.Fatal(err)
			}
			if got.Texts[0] != tr.Want.TextTokens || got.Chats[0] != tr.Want.ChatTokens {
				t.Errorf("text %d, chat %d tokens; want %d, %d", got.Texts[0], got.Chats[0], tr.Want.TextTokens, tr.Want.ChatTokens)
			}
			all := strings.Join(append(seen()[p.Tokenizer.Path], seen()[p.Tokenizer.Chat]...), "\n")
			for _, want := range bodyHas[tr.Want.Kind] {
				if !strings.Contains(all, want) {
					t.Errorf("no request body has %s:\n%s", want, all)
				}
			}
		})
	}
}

// TestSGLangPrefixIsNotCounted: an SGLang whose /tokenize adds the BOS to
// every prompt (the completions path of recent builds) still sizes texts
// without it.
func TestSGLangPrefixIsNotCounted(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var q struct{ Prompt string }
		_ = json.NewDecoder(r.Body).Decode(&q)
		ids := []int{128000} // the BOS, before whatever the text is
		for range strings.Fields(q.Prompt) {
			ids = append(ids, 1000+len(ids))
		}
		json.NewEncoder(w).Encode(map[string]any{"tokens": ids, "count": len(ids), "max_model_len": 8192})
	}))
	defer srv.Close()
	p, _ := profile.ForKind(profile.SGLang)
	tok, _, err := Resolve(context.Background(), Engine, "--tokenizer", Target{Base: srv.URL + "/v1", Model: "m", Tokenizer: &p.Tokenizer}, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	got, err := tok.CountTokens(context.Background(), protocol.TokenQuery{Texts: []string{"one two three"}})
	if err != nil || got.Texts[0] != 3 {
		t.Errorf("count = %v, %v; want 3 (the BOS not counted)", got.Texts, err)
	}
}

func TestEngineKindWithoutTokenizer(t *testing.T) {
	t.Parallel()
	p, _ := profile.ForKind(profile.Ollama)
	_, _, err := Resolve(context.Background(), Engine, "--tokenizer", Target{Base: "http://127.0.0.1:1/v1", Tokenizer: &p.Tokenizer}, zerolog.Nop())
	if err == nil || !strings.Contains(err.Error(), "--tokenizer engine: the engine has no tokenizer endpoint; give the model's tokenizer.json as --tokenizer PATH") {
		t.Errorf("error = %v", err)
	}
}
