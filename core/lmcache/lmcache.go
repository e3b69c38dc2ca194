// Package lmcache reads an LMCache server's /status to derive tokens per GB
// of KV cache for a model (spec §8.2), with the original's error messages.
package lmcache

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	neturl "net/url"
	"sort"
	"strings"
	"time"
)

// StatusURL normalises an LMCache base URL and appends /status.
func StatusURL(raw string) string {
	u := strings.TrimRight(raw, "/")
	if !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") {
		u = "http://" + u
	}
	return u + "/status"
}

// Layout is what lmbench needs from a model's KV-cache layout.
type Layout struct {
	CacheSizePerToken int64
	WorldSize         int64
	// BlockSize is the engine's KV block in tokens as the layout reports
	// it (kv_cache_layout.block_size); 0 when it does not.
	BlockSize int
}

// TokensPerGB queries url's /status and returns 2^30 / (cache_size_per_token × world_size).
func TokensPerGB(ctx context.Context, url, model string, client *http.Client) (int64, Layout, error) {
	if client == nil {
		client = &http.Client{Timeout: 10 * time.Second}
	}
	statusURL := StatusURL(url)
	body, err := get(ctx, client, statusURL)
	if err != nil {
		shown := statusURL
		if u, perr := neturl.Parse(statusURL); perr == nil {
			shown = u.Redacted() // a password in the URL is not repeated
		}
		return 0, Layout{}, fmt.Errorf("Cannot connect to LMCache server at %s: %v", shown, err)
	}
	return FromStatus(body, model)
}

func get(ctx context.Context, client *http.Client, url string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 != 2 {
		return nil, fmt.Errorf("HTTP %d: %s", resp.StatusCode, strings.TrimSpace(string(b[:min(len(b), 256)])))
	}
	return b, nil
}

type meta struct {
	ModelName     *string         `json:"model_name"`
	WorldSize     *int64          `json:"world_size"`
	KVCacheLayout json.RawMessage `json:"kv_cache_layout"`
}

// FromStatus computes tokens per GB from a /status body.
func FromStatus(body []byte, model string) (int64, Layout, error) {
	var st struct {
		CacheContextMeta map[string]meta `json:"cache_context_meta"`
		CBGPUContextMeta map[string]meta `json:"cb_gpu_context_meta"`
	}
	if err := json.Unmarshal(body, &st); err != nil {
		return 0, Layout{}, fmt.Errorf("LMCache /status is not JSON: %v", err)
	}
	metas := st.CacheContextMeta
	if len(metas) == 0 {
		metas = st.CBGPUContextMeta
	}
	if len(metas) == 0 {
		return 0, Layout{}, fmt.Errorf("No model info returned by LMCache server; is the server running with a model loaded?")
	}
	ids := make([]string, 0, len(metas))
	for id := range metas {
		ids = append(ids, id)
	}
	sort.Strings(ids) // JSON object order is not kept by Go maps; pick deterministically
	var found *meta
	names := map[string]bool{}
	for _, id := range ids {
		m := metas[id]
		name := "?"
		if m.ModelName != nil {
			name = *m.ModelName
		}
		names[name] = true
		if m.ModelName != nil && *m.ModelName == model && found == nil {
			found = &m
		}
	}
	if found == nil {
		var avail []string
		for n := range names {
			avail = append(avail, n)
		}
		sort.Strings(avail)
		return 0, Layout{}, fmt.Errorf("Model '%s' not found on LMCache server. Available: %s", model, strings.Join(avail, ", "))
	}
	var layout map[string]json.RawMessage
	if len(found.KVCacheLayout) > 0 {
		_ = json.Unmarshal(found.KVCacheLayout, &layout)
	}
	if len(layout) == 0 {
		return 0, Layout{}, fmt.Errorf("No kv_cache_layout for model '%s'", model)
	}
	raw, ok := layout["cache_size_per_token"]
	var per int64
	if !ok || json.Unmarshal(raw, &per) != nil {
		return 0, Layout{}, fmt.Errorf("cache_size_per_token not available for model '%s'; is the LMCache server up to date?", model)
	}
	ws := int64(1)
	if found.WorldSize != nil && *found.WorldSize > 0 {
		ws = *found.WorldSize
	}
	if per <= 0 {
		return 0, Layout{}, fmt.Errorf("cache_size_per_token for model '%s' is %d; expected a positive number of bytes", model, per)
	}
	var block int
	if raw, ok := layout["block_size"]; ok && json.Unmarshal(raw, &block) != nil || block < 0 {
		block = 0 // not a block size: the caller keeps its own
	}
	return (1 << 30) / (per * ws), Layout{CacheSizePerToken: per, WorldSize: ws, BlockSize: block}, nil
}
