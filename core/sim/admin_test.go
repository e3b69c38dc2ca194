package sim

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/lmbench/lmbench/core/lmcache"
)

// TestStatusGivesBackTokensPerGB runs the original tool's --lmcache-url
// arithmetic, 2^30 / (cache_size_per_token × world_size), through
// core/lmcache against the sim's /status: it must give back the sim's
// tokens per GB.
func TestStatusGivesBackTokensPerGB(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ tpg, ws int }{{8192, 1}, {6553, 1}, {1638, 4}, {1 << 20, 1}, {4096, 8}, {32767, 1}} {
		cfg := fastConfig()
		cfg.TokensPerGB, cfg.WorldSize = tt.tpg, tt.ws
		cfg.Model = "org/model-x"
		_, url := startServer(t, cfg)
		got, layout, err := lmcache.TokensPerGB(t.Context(), url, "org/model-x", nil)
		if err != nil {
			t.Fatalf("tokens per GB %d, world size %d: %v", tt.tpg, tt.ws, err)
		}
		if got != int64(tt.tpg) || layout.WorldSize != int64(tt.ws) || layout.CacheSizePerToken != cfg.CacheSizePerToken() {
			t.Errorf("tokens per GB %d, world size %d: /status gives %d (layout %+v)", tt.tpg, tt.ws, got, layout)
		}
		if _, _, err := lmcache.TokensPerGB(t.Context(), url, "other", nil); err == nil ||
			!strings.Contains(err.Error(), "Model 'other' not found on LMCache server. Available: org/model-x") {
			t.Errorf("unknown model: err = %v", err)
		}
	}
}

func TestStatusShape(t *testing.T) {
	t.Parallel()
	cfg := fastConfig()
	cfg.DiskGB = 1
	_, url := startServer(t, cfg)
	postRead(t, url+"/v1/completions", fmt.Sprintf(`{"prompt":%q,"max_tokens":1}`, words("w", 33)))
	status, body := get(t, url+"/status")
	if status != http.StatusOK {
		t.Fatalf("status %d", status)
	}
	want := `{"is_healthy":true,"engine_type":"lmbench-sim","chunk_size":16,"hash_algorithm":"fnv64a-chained",` +
		`"active_sessions":0,"registered_gpu_ids":[0],"cache_context_meta":{"0":{"model_name":"lmbench-sim","world_size":1,` +
		`"kv_cache_layout":{"num_layers":32,"num_blocks":4096,"block_size":16,"cache_size_per_token":131072}}},` +
		`"storage_manager":{"blend":false,"blend_recompute":0.15,"tiers":[` +
		`{"name":"gpu","capacity_tokens":65536,"used_tokens":32},{"name":"cpu","capacity_tokens":262144,"used_tokens":32},` +
		`{"name":"disk","capacity_tokens":8192,"used_tokens":0}]}}`
	if diff := cmp.Diff(want, body); diff != "" {
		t.Errorf("/status (-want +got):\n%s", diff)
	}
}

func TestTokenizeDetokenize(t *testing.T) {
	t.Parallel()
	_, url := startServer(t, fastConfig())
	status, body := postRead(t, url+"/tokenize", `{"model":"lmbench-sim","prompt":"the  new words\nthe end","add_special_tokens":true}`)
	if status != http.StatusOK {
		t.Fatalf("tokenize: status %d: %s", status, body)
	}
	// "the" is output word 0; new words get ids after the 16 output words.
	if want := `{"count":5,"max_model_len":131072,"tokens":[0,16,17,0,18],"token_strs":null}`; body != want {
		t.Errorf("tokenize = %s, want %s", body, want)
	}
	status, body = postRead(t, url+"/tokenize", `{"messages":[{"role":"user","content":"new end"},{"role":"assistant","content":"x"}],"return_token_strs":true}`)
	if want := `{"count":3,"max_model_len":131072,"tokens":[16,18,19],"token_strs":["new","end","x"]}`; status != http.StatusOK || body != want {
		t.Errorf("tokenize messages = %d %s, want %s", status, body, want)
	}
	status, body = postRead(t, url+"/detokenize", `{"model":"lmbench-sim","tokens":[0,16,17,0,18,1]}`)
	if want := `{"prompt":"the new words the end quick"}`; status != http.StatusOK || body != want {
		t.Errorf("detokenize = %d %s, want %s", status, body, want)
	}
	for _, tt := range []struct {
		path, body string
		status     int
		message    string
	}{
		{"/detokenize", `{"tokens":[0,999]}`, 400, "tokens[1]: unknown token id 999 (ids come from /tokenize; 20 are known)"},
		{"/detokenize", `{}`, 400, "tokens: required"},
		{"/tokenize", `{}`, 400, "prompt or messages: required"},
		{"/tokenize", `{"prompt":"a","messages":[]}`, 400, "give either prompt or messages, not both"},
		{"/tokenize", `{"model":"gpt-4","prompt":"a"}`, 404, "The model `gpt-4` does not exist."},
	} {
		status, body := postRead(t, url+tt.path, tt.body)
		var e errorBody
		_ = json.Unmarshal([]byte(body), &e)
		if status != tt.status || e.Error.Message != tt.message {
			t.Errorf("%s %s: %d %q, want %d %q", tt.path, tt.body, status, e.Error.Message, tt.status, tt.message)
		}
	}
}

func TestMaxModelLen(t *testing.T) {
	t.Parallel()
	cfg := fastConfig()
	cfg.MaxModelLen = 10
	_, url := startServer(t, cfg)
	status, body := postRead(t, url+"/v1/completions", `{"prompt":"a b c d e f g h","max_tokens":3}`)
	want := "This model's maximum context length is 10 tokens. However, you requested 11 tokens (8 in the messages, 3 in the completion). Please reduce the length of the messages or completion."
	var e errorBody
	_ = json.Unmarshal([]byte(body), &e)
	if status != http.StatusBadRequest || e.Error.Message != want {
		t.Errorf("too long: %d %q, want 400 %q", status, e.Error.Message, want)
	}
	if status, _ := postRead(t, url+"/v1/completions", `{"prompt":"a b c d e f g h","max_tokens":2}`); status != http.StatusOK {
		t.Errorf("exactly max-model-len: status %d, want 200", status)
	}
}

// faultRun sends n streaming requests one at a time and classifies each.
func faultRun(t *testing.T, cfg Config, n int) (outcomes []string) {
	t.Helper()
	_, url := startServer(t, cfg)
	for i := range n {
		start := time.Now()
		resp, err := http.Post(url+"/v1/chat/completions", "application/json",
			strings.NewReader(chatBody(fmt.Sprint("q ", i), `"max_tokens":4,"stream":true,"stream_options":{"include_usage":true}`)))
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(bufio.NewReader(resp.Body))
		resp.Body.Close()
		body := string(b)
		switch {
		case resp.StatusCode == http.StatusInternalServerError:
			outcomes = append(outcomes, "500")
		case err != nil:
			if strings.HasSuffix(body, "[DONE]\n\n") || strings.Count(body, "data: ") < 2 {
				t.Errorf("request %d: cut stream has %q", i, body)
			}
			outcomes = append(outcomes, "cut")
		case strings.Contains(body, `"object":`+"\n\n"):
			if !strings.HasSuffix(body, "data: [DONE]\n\n") {
				t.Errorf("request %d: malformed stream does not end with [DONE]", i)
			}
			outcomes = append(outcomes, "malformed")
		case time.Since(start) >= cfg.scaled(cfg.Faults.SlowFirstTokenDelay):
			outcomes = append(outcomes, "slow")
		default:
			parseSSE(t, body) // well-formed
			outcomes = append(outcomes, "ok")
		}
	}
	return outcomes
}

func TestFaults(t *testing.T) {
	t.Parallel()
	base := fastConfig()
	base.TimeScale = 1
	base.PrefillPerToken, base.DecodePerToken = 0, 0
	base.Faults.SlowFirstTokenDelay = 300 * time.Millisecond
	count := func(outcomes []string, kind string) int {
		n := 0
		for _, o := range outcomes {
			if o == kind {
				n++
			}
		}
		return n
	}
	for _, tt := range []struct {
		kind string
		set  func(*Faults)
	}{
		{"500", func(f *Faults) { f.HTTP500 = 1 }},
		{"cut", func(f *Faults) { f.CutStream = 1 }},
		{"malformed", func(f *Faults) { f.MalformedSSE = 1 }},
		{"slow", func(f *Faults) { f.SlowFirstToken = 1 }},
	} {
		cfg := base
		tt.set(&cfg.Faults)
		if got := faultRun(t, cfg, 3); count(got, tt.kind) != 3 {
			t.Errorf("rate 1 of %s: outcomes %v, want all %s", tt.kind, got, tt.kind)
		}
	}
	// Seeded: the same seed fails the same requests; rate 0.3 fails some.
	cfg := base
	cfg.Faults.HTTP500, cfg.Faults.Seed = 0.3, 7
	cfg.Faults.SlowFirstTokenDelay = time.Hour // no slow faults here: a slow machine must not look like one
	first, second := faultRun(t, cfg, 40), faultRun(t, cfg, 40)
	if !cmp.Equal(first, second) {
		t.Errorf("same seed, different faults:\n%v\n%v", first, second)
	}
	if n := count(first, "500"); n < 4 || n > 24 {
		t.Errorf("rate 0.3 over 40 requests: %d failures, want about 12", n)
	}
	cfg.Faults.Seed = 8
	if other := faultRun(t, cfg, 40); cmp.Equal(first, other) {
		t.Errorf("seeds 7 and 8 fail the same requests: %v", other)
	}
}

func TestFaultsAreCounted(t *testing.T) {
	t.Parallel()
	cfg := fastConfig()
	cfg.Faults.HTTP500 = 1
	_, url := startServer(t, cfg)
	for range 3 {
		postRead(t, url+"/v1/completions", `{"prompt":"a","max_tokens":1}`)
	}
	m := metrics(t, url)
	if got := m[`lmbench_sim:faults_total{kind="http_500"}`]; got != 3 {
		t.Errorf("faults_total{http_500} = %v, want 3", got)
	}
	if m["vllm:request_success_total"] != 0 {
		t.Errorf("request_success_total = %v, want 0", m["vllm:request_success_total"])
	}
}

// TestResetNoop: with the fault on, /reset_prefix_cache answers 200 and
// the next request still hits.
func TestResetNoop(t *testing.T) {
	t.Parallel()
	for _, noop := range []bool{false, true} {
		t.Run(fmt.Sprint("noop=", noop), func(t *testing.T) {
			t.Parallel()
			cfg := fastConfig()
			cfg.CPUGB = 0
			cfg.Faults.ResetNoop = noop
			_, url := startServer(t, cfg)
			body := chatBody(words("r", 64), `"max_tokens":1`)
			for range 2 {
				if status, b := postRead(t, url+"/v1/chat/completions", body); status != http.StatusOK {
					t.Fatalf("status %d: %s", status, b)
				}
			}
			if status, _ := postRead(t, url+"/reset_prefix_cache", ""); status != http.StatusOK {
				t.Fatalf("reset: status %d, want 200", status)
			}
			before := metrics(t, url)["vllm:prefix_cache_hits_total"]
			postRead(t, url+"/v1/chat/completions", body)
			m := metrics(t, url)
			got := m["vllm:prefix_cache_hits_total"] - before
			want := 0.0
			if noop {
				want = 48 // 3 whole blocks: the block holding the last token is computed
			}
			if got != want {
				t.Errorf("hits after the reset = %v, want %v", got, want)
			}
			if n := m[fmt.Sprintf(`lmbench_sim:resets_total{cleared="%t"}`, !noop)]; n != 1 {
				t.Errorf("resets_total{cleared=%t} = %v, want 1", !noop, n)
			}
		})
	}
}
