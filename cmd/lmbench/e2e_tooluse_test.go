package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestToolUseExample builds examples/tooluse, the tool-use workload of
// docs/plugins.md, and runs it through the real host against the built-in
// engine counting subwords: every request carries the tools, the
// assistant's tool call and the tool's reply on the wire, and every
// prompt length it states (the tools and calls included) is the engine's
// own usage.prompt_tokens.
func TestToolUseExample(t *testing.T) {
	needBinaries(t)
	t.Parallel()
	bin := filepath.Join(t.TempDir(), "lmbench-workload-tool-use")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Dir = "../../examples/tooluse"
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build examples/tooluse: %v\n%s", err, out)
	}
	_, simURL := startSim(t, "--tokenizer-mode", "subword", "--time-scale", "0")
	target, err := url.Parse(strings.TrimSuffix(simURL, "/v1"))
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var chats []map[string]any
	proxy := httputil.NewSingleHostReverseProxy(target)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/chat/completions" {
			b, _ := io.ReadAll(r.Body)
			var m map[string]any
			_ = json.Unmarshal(b, &m)
			mu.Lock()
			chats = append(chats, m)
			mu.Unlock()
			r.Body = io.NopCloser(bytes.NewReader(b))
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)

	out := t.TempDir()
	r := lmbench(t, nil, "run", "--engine-url", srv.URL+"/v1", "--workload-plugin", bin, "--tokenizer", "engine",
		"--tokens-per-gb-kvcache", "1000", "--kv-cache-volume", "1", "--tu-sessions", "5", "--tu-concurrency", "2",
		"--no-interactive", "-q", "--output-dir", out)
	if r.code != 0 {
		t.Fatalf("exit %d\nstderr:\n%s", r.code, r.stderr)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(chats) != 5 {
		t.Fatalf("the engine got %d chat requests, want 5", len(chats))
	}
	for _, body := range chats {
		tools, _ := body["tools"].([]any)
		msgs, _ := body["messages"].([]any)
		if len(tools) != 1 || len(msgs) != 4 {
			t.Fatalf("request without the tool turn: tools %v, %d messages", body["tools"], len(msgs))
		}
		call, _ := msgs[2].(map[string]any)["tool_calls"].([]any)
		reply := msgs[3].(map[string]any)
		if len(call) != 1 || reply["role"] != "tool" || reply["tool_call_id"] != call[0].(map[string]any)["id"] {
			t.Errorf("tool call %v answered by %v", call, reply)
		}
	}
	c := readJournal(t, filepath.Join(out, "bench_journal.jsonl"))
	if len(c.Records) != 5 {
		t.Fatalf("journal: %d records, want 5", len(c.Records))
	}
	for _, rec := range c.Records {
		if rec.StatedPromptTokens == 0 || rec.StatedPromptTokens != rec.InputTokens {
			t.Errorf("%s: stated %d prompt tokens, the engine counted %d", rec.RequestID, rec.StatedPromptTokens, rec.InputTokens)
		}
	}
}
