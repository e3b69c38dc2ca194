package profile

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lmbench/lmbench/core/engine"
)

// transcript is an engine's recorded answers (testdata/*.json): every
// other request gets a 404, as a server without that endpoint answers.
type transcript struct {
	Engine string `json:"engine"`
	Want   struct {
		Kind     Kind   `json:"kind"`
		Version  string `json:"version"`
		Tokenize bool   `json:"tokenize"`
		Metrics  bool   `json:"metrics"`
		// Cached is the cached prompt tokens of the recorded chat stream.
		Cached int `json:"cached"`
	} `json:"want"`
	Responses []struct {
		Method string `json:"method"`
		Path   string `json:"path"`
		// When, if set, is a text the request body must contain for this
		// answer (the first that fits is served).
		When    string            `json:"when"`
		Status  int               `json:"status"`
		Headers map[string]string `json:"headers"`
		Body    json.RawMessage   `json:"body"`
		Text    string            `json:"text"`
	} `json:"responses"`
}

// replay serves a transcript; asked records the requests, in order.
func replay(t *testing.T, file string) (transcript, *httptest.Server) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var tr transcript
	if err := json.Unmarshal(b, &tr); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		for _, x := range tr.Responses {
			if x.Method != r.Method || x.Path != r.URL.Path || !strings.Contains(string(body), x.When) {
				continue
			}
			for k, v := range x.Headers {
				w.Header().Set(k, v)
			}
			w.WriteHeader(x.Status)
			if x.Body != nil {
				w.Write(x.Body)
			} else {
				w.Write([]byte(x.Text))
			}
			return
		}
		http.NotFound(w, r)
	}))
	t.Cleanup(srv.Close)
	return tr, srv
}

func TestDetectRecordedEngines(t *testing.T) {
	t.Parallel()
	files, _ := filepath.Glob("testdata/*.json")
	if len(files) < 5 {
		t.Fatalf("%d transcripts in testdata, want one per engine (vLLM, SGLang, Ollama, llama.cpp, TGI)", len(files))
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".json"), func(t *testing.T) {
			t.Parallel()
			tr, srv := replay(t, f)
			target := Target{Base: srv.URL + "/v1", Root: srv.URL}
			p := Detect(context.Background(), target)
			if p.Kind != tr.Want.Kind || p.Version != tr.Want.Version {
				t.Fatalf("%s: detected %s %q (from %s), want %s %q", tr.Engine, p.Kind, p.Version, p.DetectedFrom, tr.Want.Kind, tr.Want.Version)
			}
			r := Probe(context.Background(), target, Auto, "", srv.URL+"/metrics")
			if r.Tokenize != tr.Want.Tokenize || r.Metrics != tr.Want.Metrics {
				t.Errorf("%s: probe says tokenize %v, metrics %v; want %v, %v", tr.Engine, r.Tokenize, r.Metrics, tr.Want.Tokenize, tr.Want.Metrics)
			}
			if len(r.Models) == 0 {
				t.Errorf("%s: no models read (%s)", tr.Engine, r.ModelsError)
			}
		})
	}
}

func TestProbeOllamaSaysWhatItCannotMeasure(t *testing.T) {
	t.Parallel()
	_, srv := replay(t, "testdata/ollama.json")
	r := Probe(context.Background(), Target{Base: srv.URL + "/v1", Root: srv.URL}, Auto, "", srv.URL+"/metrics")
	text := r.Text("http://ollama:11434")
	for _, want := range []string{
		"Engine at http://ollama:11434: Ollama 0.17.4 (ollama, from GET /api/version)",
		"cannot: no cached token counts: the cache ledger will use TTFT only",
		"serves 2 models (tinyllama-rand:latest, llama3.2:1b): a run needs --model",
		"cannot: no tokenizer endpoint",
		"cannot: no cache reset",
		"ignores ignore_eos, min_tokens",
		"no Prometheus metrics",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("probe text lacks %q:\n%s", want, text)
		}
	}
}

func TestProbeVLLMSaysWhatItCanMeasure(t *testing.T) {
	t.Parallel()
	_, srv := replay(t, "testdata/vllm.json")
	r := Probe(context.Background(), Target{Base: srv.URL + "/v1", Root: srv.URL}, Auto, "", srv.URL+"/metrics")
	for _, f := range r.Facts() {
		if !f.OK {
			t.Errorf("vLLM fact marked cannot: %s", f.Text)
		}
	}
}

func TestGivenKindOverridesDetection(t *testing.T) {
	t.Parallel()
	_, srv := replay(t, "testdata/vllm.json")
	r := Probe(context.Background(), Target{Base: srv.URL + "/v1", Root: srv.URL}, Ollama, "--engine-kind", "")
	if r.Profile.Kind != Ollama || r.Profile.DetectedFrom != "--engine-kind" || r.Profile.ReportsCachedTokens() {
		t.Errorf("profile = %+v, want Ollama's from --engine-kind, without cached tokens", r.Profile)
	}
}

func TestDetectLMCacheAndUnknown(t *testing.T) {
	t.Parallel()
	_, srv := replay(t, "testdata/vllm.json")
	if p := Detect(context.Background(), Target{Base: srv.URL + "/v1", Root: srv.URL, LMCache: true}); p.Kind != VLLMLMCache {
		t.Errorf("vLLM with an LMCache server: %s, want %s", p.Kind, VLLMLMCache)
	}
	silent := httptest.NewServer(http.NotFoundHandler())
	defer silent.Close()
	if p := Detect(context.Background(), Target{Base: silent.URL + "/v1", Root: silent.URL}); p.Kind != Unknown {
		t.Errorf("a server answering nothing: %s, want %s", p.Kind, Unknown)
	}
}

func TestParseKind(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]Kind{"": Auto, "Ollama": Ollama, " llamacpp ": LlamaCpp, "vllm-lmcache": VLLMLMCache} {
		if got, err := ParseKind(in, "--engine-kind"); err != nil || got != want {
			t.Errorf("ParseKind(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	_, err := ParseKind("vlm", "--engine-kind")
	if err == nil || !strings.Contains(err.Error(), `--engine-kind: unknown engine kind "vlm"; expected one of auto, vllm,`) {
		t.Errorf("ParseKind(vlm) error = %v", err)
	}
}

func TestCountOf(t *testing.T) {
	t.Parallel()
	tests := []struct {
		shape Shape
		body  string
		want  int
	}{
		{ShapeVLLM, `{"count":3,"max_model_len":10,"tokens":[1,2,3]}`, 3},
		{ShapeSGLang, `{"tokens":[1,2],"count":2}`, 2},
		{ShapeLlamaCpp, `{"tokens":[1,2,3,4]}`, 4},
		{ShapeTGI, `[{"id":1,"text":"a","start":0,"stop":1}]`, 1},
	}
	for _, tt := range tests {
		if n, ok := CountOf(tt.shape, []byte(tt.body)); !ok || n != tt.want {
			t.Errorf("CountOf(%s, %s) = %d, %v; want %d", tt.shape, tt.body, n, ok, tt.want)
		}
	}
	if _, ok := CountOf(ShapeLlamaCpp, []byte(`{"error":"x"}`)); ok {
		t.Error("CountOf read a count from an error")
	}
}

// TestLlamaCppCachedTokensAreRead: llama.cpp's timings.cache_n is read,
// so its probe says the ledger counts them.
func TestLlamaCppCachedTokensAreRead(t *testing.T) {
	t.Parallel()
	p, _ := ForKind(LlamaCpp)
	if !p.ReportsCachedTokens() {
		t.Fatalf("llama.cpp's profile (%s) does not report cached tokens", p.CachedTokens)
	}
	r := Report{Profile: p}
	if text := r.Text("x"); !strings.Contains(text, "can:    cached prompt tokens reported in timings.cache_n") {
		t.Errorf("probe text:\n%s", text)
	}
}

// TestRecordedStreamsCachedTokens: each engine's recorded chat stream
// gives the cached prompt tokens where that engine reports them (usage's
// details, llama.cpp's timings) and none where it reports none.
func TestRecordedStreamsCachedTokens(t *testing.T) {
	t.Parallel()
	files, _ := filepath.Glob("testdata/*.json")
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".json"), func(t *testing.T) {
			t.Parallel()
			tr, srv := replay(t, f)
			s, err := engine.New(engine.Config{BaseURL: srv.URL, Model: "m"})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			res := s.Send(context.Background(), engine.Request{ID: "r", Messages: []engine.Message{{Role: "user", Content: "hi"}}, MaxTokens: 1})
			if !res.Success || res.Text != "Hello" || res.InputTokens == 0 || res.CachedTokens != tr.Want.Cached {
				t.Errorf("%s: success %v (%s), text %q, input %d, cached %d; want Hello, cached %d",
					tr.Engine, res.Success, res.Error, res.Text, res.InputTokens, res.CachedTokens, tr.Want.Cached)
			}
			p := Detect(context.Background(), Target{Base: srv.URL + "/v1", Root: srv.URL})
			if p.ReportsCachedTokens() != (tr.Want.Cached > 0) {
				t.Errorf("%s: profile reports cached tokens %v (%q), but its stream carries %d", tr.Engine, p.ReportsCachedTokens(), p.CachedTokens, tr.Want.Cached)
			}
		})
	}
}
