package profile

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/lmbench/lmbench/core/engine"
)

func TestDetectModel(t *testing.T) {
	t.Parallel()
	t.Run("returns the one id", func(t *testing.T) {
		t.Parallel()
		gotAuth := make(chan string, 1)
		srv := newModelServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method != http.MethodGet || r.URL.Path != "/v1/models" {
				t.Errorf("request %s %s, want GET /v1/models", r.Method, r.URL.Path)
			}
			gotAuth <- r.Header.Get("Authorization")
			io.WriteString(w, `{"object":"list","data":[{"id":"Qwen/Qwen3-8B","object":"model"}]}`)
		}))
		got, err := DetectModel(context.Background(), srv.URL+"/", "", nil)
		if err != nil || got != "Qwen/Qwen3-8B" {
			t.Errorf("DetectModel = %q, %v; want Qwen/Qwen3-8B, nil", got, err)
		}
		if a := <-gotAuth; a != "Bearer sk-dummy" {
			t.Errorf("Authorization = %q, want Bearer sk-dummy", a)
		}
	})

	t.Run("several models are an error naming them", func(t *testing.T) {
		t.Parallel()
		srv := newModelServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, `{"object":"list","data":[{"id":"llama3.2:latest","owned_by":"library"},{"id":"qwen3:8b","owned_by":"library"}]}`)
		}))
		got, err := DetectModel(context.Background(), srv.URL, "", nil)
		want := "the engine serves 2 models (llama3.2:latest, qwen3:8b); pass --model with one of them"
		if err == nil || err.Error() != want {
			t.Errorf("DetectModel = %q, %v; want error %q", got, err, want)
		}
	})

	t.Run("sends the key", func(t *testing.T) {
		t.Parallel()
		gotAuth := make(chan string, 1)
		srv := newModelServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			gotAuth <- r.Header.Get("Authorization")
			io.WriteString(w, `{"data":[{"id":"m"}]}`)
		}))
		if _, err := DetectModel(context.Background(), srv.URL, "sk-abc", srv.Client()); err != nil {
			t.Fatal(err)
		}
		if a := <-gotAuth; a != "Bearer sk-abc" {
			t.Errorf("Authorization = %q, want Bearer sk-abc", a)
		}
	})

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := "http://" + ln.Addr().String()
	ln.Close()

	tests := []struct {
		name    string
		handler http.HandlerFunc // nil: use the refused address
		want    string           // exact error, with BASE replaced by the normalised URL
		prefix  bool             // want is only the start of the error
	}{
		{"empty list", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, `{"object":"list","data":[]}`) },
			"No models returned by BASE/models; pass --model explicitly.", false},
		{"no data field", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, `{}`) },
			"No models returned by BASE/models; pass --model explicitly.", false},
		{"HTTP error", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "unauthorized", http.StatusUnauthorized) },
			"Failed to fetch models from BASE/models: HTTP 401: unauthorized", false},
		{"not JSON", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, `<html>`) },
			"Failed to fetch models from BASE/models: decoding the model list: ", true},
		{"empty id", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, `{"data":[{"object":"model"}]}`) },
			`Failed to fetch models from BASE/models: the first listed model has no "id"`, false},
		{"connection refused", nil,
			"Failed to fetch models from BASE/models: dial tcp ", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			base := refused
			if tt.handler != nil {
				base = newModelServer(t, tt.handler).URL
			}
			want := strings.ReplaceAll(tt.want, "BASE", engine.NormalizeURL(base))
			got, err := DetectModel(context.Background(), base, "", nil)
			if err == nil {
				t.Fatalf("DetectModel = %q, nil; want error %q", got, want)
			}
			if tt.prefix && !strings.HasPrefix(err.Error(), want) || !tt.prefix && err.Error() != want {
				t.Errorf("error = %q\nwant %q (prefix: %v)", err, want, tt.prefix)
			}
			if tt.handler == nil && !strings.Contains(err.Error(), "refused") {
				t.Errorf("error = %q, want it to say refused", err)
			}
		})
	}

	t.Run("never repeats a password in the URL", func(t *testing.T) {
		t.Parallel()
		for _, base := range []string{"http://u:pw-secret-7@127.0.0.1:1", "u:pw-secret-7@127.0.0.1:1"} {
			_, err := DetectModel(context.Background(), base, "", nil)
			if err == nil || strings.Contains(err.Error(), "pw-secret-7") || !strings.Contains(err.Error(), "u:xxxxx@127.0.0.1:1/v1/models") {
				t.Errorf("%s: error = %v, want the URL without its password", base, err)
			}
		}
	})

	t.Run("never leaks the key", func(t *testing.T) {
		t.Parallel()
		const key = "sk-secret-42"
		srv := newModelServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "bad key "+r.Header.Get("Authorization"), http.StatusUnauthorized)
		}))
		_, err := DetectModel(context.Background(), srv.URL, key, nil)
		if err == nil || strings.Contains(err.Error(), key) {
			t.Errorf("error = %v, want an error without the key", err)
		}
	})
}

func newModelServer(t *testing.T, h http.Handler) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}
