package profile

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/lmbench/lmbench/core/engine"
)

// probeTimeout bounds each question Detect asks.
const probeTimeout = 5 * time.Second

// Target is the engine to ask.
type Target struct {
	// Base is the API base (http://host:8000/v1), Root the server's root
	// (http://host:8000), as config.Endpoint has them.
	Base, Root string
	APIKey     string // "" sends engine.DefaultAPIKey
	// LMCache: the run reads an LMCache server (--lmcache-url), so a vLLM
	// is one fronted by LMCache.
	LMCache bool
	Client  *http.Client // nil: a client with a 5 s timeout
}

func (t Target) client() *http.Client {
	if t.Client != nil {
		return t.Client
	}
	return &http.Client{Timeout: probeTimeout}
}

// byOwner maps the owned_by of /v1/models entries to the engine that
// writes it.
var byOwner = map[string]Kind{
	"vllm": VLLM, "sglang": SGLang, "llamacpp": LlamaCpp, "library": Ollama, "lmbench-sim": Builtin,
}

// question is one endpoint Detect asks, and how an answer names the
// engine: match returns the engine's version and true when the JSON body
// is that engine's.
type question struct {
	kind  Kind
	path  string
	match func(body map[string]any) (version string, ok bool)
}

// questions are asked in this order: the most specific first, vLLM's bare
// /version last.
var questions = []question{
	{Ollama, "/api/version", func(b map[string]any) (string, bool) {
		v, ok := b["version"].(string)
		return v, ok && len(b) == 1
	}},
	{LlamaCpp, "/props", func(b map[string]any) (string, bool) {
		_, slots := b["total_slots"]
		_, gen := b["default_generation_settings"]
		v, _ := b["build_info"].(string)
		return v, slots || gen
	}},
	{TGI, "/info", func(b map[string]any) (string, bool) {
		_, id := b["model_id"]
		_, total := b["max_total_tokens"]
		router, _ := b["router"].(string)
		v, _ := b["version"].(string)
		return v, id && (total || strings.Contains(router, "text-generation"))
	}},
	{SGLang, "/server_info", sglangInfo},
	{SGLang, "/get_server_info", sglangInfo},
	{VLLM, "/version", func(b map[string]any) (string, bool) {
		v, ok := b["version"].(string)
		return v, ok && len(b) == 1
	}},
}

func sglangInfo(b map[string]any) (string, bool) {
	_, tp := b["tp_size"]
	_, path := b["model_path"]
	v, _ := b["version"].(string)
	return v, tp || path
}

// Detect asks the engine what it is: its model list's owned_by, then its
// version and info endpoints (Ollama's /api/version, llama.cpp's /props,
// TGI's /info, SGLang's /server_info, vLLM's /version). It never fails:
// an engine that answers none of them is Unknown.
func Detect(ctx context.Context, t Target) Profile {
	owner := modelOwner(ctx, t)
	hint, hinted := byOwner[owner]
	if hint == Builtin {
		return detected(Builtin, "", "GET /v1/models (owned_by lmbench-sim)", t.LMCache)
	}
	for _, q := range questions {
		if hinted && q.kind != hint {
			continue
		}
		if v, ok := ask(ctx, t, q); ok {
			return detected(q.kind, v, "GET "+q.path, t.LMCache)
		}
	}
	if hinted { // the owner is enough, though the version endpoint was silent
		return detected(hint, "", "GET /v1/models (owned_by "+owner+")", t.LMCache)
	}
	for _, q := range questions {
		if v, ok := ask(ctx, t, q); ok {
			return detected(q.kind, v, "GET "+q.path, t.LMCache)
		}
	}
	p := profiles[Unknown]
	p.DetectedFrom = "no version or info endpoint answered"
	return p
}

// Given is the profile --engine-kind names; origin is the flag, key or
// variable.
func Given(k Kind, origin string) Profile {
	p := profiles[k]
	p.DetectedFrom = origin
	return p
}

func detected(k Kind, version, from string, lmcache bool) Profile {
	if k == VLLM && lmcache {
		k, from = VLLMLMCache, from+" and an LMCache server"
	}
	p := profiles[k]
	p.Version, p.DetectedFrom = version, from
	return p
}

// modelOwner is the owned_by of the first model the engine lists, "" when
// it lists none or does not answer.
func modelOwner(ctx context.Context, t Target) string {
	var list struct {
		Data []struct {
			OwnedBy string `json:"owned_by"`
		} `json:"data"`
	}
	body, ok := get(ctx, t, strings.TrimSuffix(t.Base, "/")+"/models")
	if !ok || json.Unmarshal(body, &list) != nil || len(list.Data) == 0 {
		return ""
	}
	return list.Data[0].OwnedBy
}

// ask asks one question; ok when the engine answered it as q.kind does.
func ask(ctx context.Context, t Target, q question) (string, bool) {
	body, ok := get(ctx, t, strings.TrimSuffix(t.Root, "/")+q.path)
	if !ok {
		return "", false
	}
	var m map[string]any
	if json.Unmarshal(body, &m) != nil {
		return "", false
	}
	return q.match(m)
}

// get is the body of a 2xx answer to GET url.
func get(ctx context.Context, t Target, url string) ([]byte, bool) {
	resp, err := do(ctx, t, http.MethodGet, url, nil)
	if err != nil {
		return nil, false
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	return b, err == nil && resp.StatusCode/100 == 2
}

// do sends one request with the run's key.
func do(ctx context.Context, t Target, method, url string, body io.Reader) (*http.Response, error) {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	req, err := http.NewRequestWithContext(ctx, method, url, body)
	if err != nil {
		cancel()
		return nil, err
	}
	key := t.APIKey
	if key == "" {
		key = engine.DefaultAPIKey
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := t.client().Do(req)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("%s %s: %w", method, engine.RedactURL(url), err)
	}
	resp.Body = cancelOnClose{resp.Body, cancel}
	return resp, nil
}

type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (c cancelOnClose) Close() error {
	err := c.ReadCloser.Close()
	c.cancel()
	return err
}
