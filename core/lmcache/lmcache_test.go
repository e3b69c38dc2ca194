package lmcache

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
)

func status(model string, per, ws int) string {
	return `{"is_healthy":true,"cache_context_meta":{"0":{"model_name":"` + model + `","world_size":` +
		itoa(ws) + `,"kv_cache_layout":{"num_layers":36,"cache_size_per_token":` + itoa(per) + `}}}}`
}

func itoa(i int) string { return strconv.Itoa(i) }

func TestFromStatus(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		body, model string
		want        int64
		wantErr     string
	}{
		"ws1":               {status("m", 163840, 1), "m", 6553, ""},
		"ws4":               {status("m", 163840, 4), "m", 1638, ""},
		"unknown model":     {status("a", 163840, 1), "b", 0, "Model 'b' not found on LMCache server. Available: a"},
		"empty meta":        {`{"cache_context_meta":{}}`, "m", 0, "No model info returned by LMCache server"},
		"cacheblend meta":   {strings.Replace(status("m", 131072, 1), "cache_context_meta", "cb_gpu_context_meta", 1), "m", 8192, ""},
		"no layout":         {`{"cache_context_meta":{"0":{"model_name":"m"}}}`, "m", 0, "No kv_cache_layout for model 'm'"},
		"no size per token": {`{"cache_context_meta":{"0":{"model_name":"m","kv_cache_layout":{"num_layers":2}}}}`, "m", 0, "cache_size_per_token not available for model 'm'"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got, _, err := FromStatus([]byte(tc.body), tc.model)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %d, %v; want %d", got, err, tc.want)
			}
		})
	}
}

func TestTokensPerGBOverHTTP(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/status" {
			http.NotFound(w, r)
			return
		}
		w.Write([]byte(status("Qwen/Qwen3-8B", 147456, 1)))
	}))
	defer srv.Close()
	got, layout, err := TokensPerGB(context.Background(), srv.URL+"/", "Qwen/Qwen3-8B", nil)
	if err != nil || got != 7281 || layout.CacheSizePerToken != 147456 {
		t.Fatalf("got %d %+v %v", got, layout, err)
	}
	_, _, err = TokensPerGB(context.Background(), "127.0.0.1:1", "m", nil)
	if err == nil || !strings.HasPrefix(err.Error(), "Cannot connect to LMCache server at http://127.0.0.1:1/status: ") {
		t.Fatalf("err = %v", err)
	}
	_, _, err = TokensPerGB(context.Background(), "http://u:pw-secret-7@127.0.0.1:1", "m", nil)
	if err == nil || strings.Contains(err.Error(), "pw-secret-7") || !strings.Contains(err.Error(), "http://u:xxxxx@127.0.0.1:1/status") {
		t.Fatalf("err = %v, want the URL without its password", err)
	}
}

// TestBlockSizeFromStatus: the layout's block_size is read when given; a
// layout without one, or with one that is not a count, reports 0.
func TestBlockSizeFromStatus(t *testing.T) {
	t.Parallel()
	with := func(v string) string {
		return strings.Replace(status("m", 131072, 1), `"num_layers":36`, `"num_layers":36,"block_size":`+v, 1)
	}
	for name, tc := range map[string]struct {
		body string
		want int
	}{
		"given":      {with("32"), 32},
		"absent":     {status("m", 131072, 1), 0},
		"not a size": {with(`"big"`), 0},
		"negative":   {with("-16"), 0},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			tpg, layout, err := FromStatus([]byte(tc.body), "m")
			if err != nil || tpg != 8192 {
				t.Fatalf("FromStatus: %d, %v; want 8192 tokens per GB", tpg, err)
			}
			if layout.BlockSize != tc.want {
				t.Errorf("BlockSize = %d, want %d", layout.BlockSize, tc.want)
			}
		})
	}
}
