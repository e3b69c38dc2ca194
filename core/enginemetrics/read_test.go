package enginemetrics

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/rs/zerolog"
)

// TestReadFileRoundTrip: what a Scraper wrote reads back as the samples
// it kept, failed scrapes included, and a cut-short last line is dropped.
func TestReadFileRoundTrip(t *testing.T) {
	t.Parallel()
	body, err := os.ReadFile(filepath.Join("testdata", "vllm.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 2 {
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		w.Write(body)
	}))
	defer srv.Close()
	path := filepath.Join(t.TempDir(), FileName)
	s, err := New(Config{URL: srv.URL + "/metrics", Path: path, Log: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	s.Scrape(t.Context(), PointRunStart)
	s.SetPhase(Measure)
	s.Scrape(t.Context(), PointInterval)
	s.Scrape(t.Context(), PointInterval)
	s.SetPhase("")
	s.Scrape(t.Context(), PointRunEnd)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if f.URL != srv.URL+"/metrics" || f.Torn {
		t.Errorf("header: url %q torn %v", f.URL, f.Torn)
	}
	// The file keeps times in UTC; the scraper's samples hold local ones.
	if d := cmp.Diff(s.Samples(), f.Samples, cmpopts.EquateEmpty(), cmp.Comparer(func(a, b interface{ UnixNano() int64 }) bool { return a.UnixNano() == b.UnixNano() })); d != "" {
		t.Errorf("samples read back differ (-scraper +file):\n%s", d)
	}
	if f.Samples[1].Err == "" || f.Samples[1].Phase != Measure {
		t.Errorf("the failed scrape reads back as %+v", f.Samples[1])
	}

	b, _ := os.ReadFile(path)
	torn := filepath.Join(t.TempDir(), FileName)
	os.WriteFile(torn, b[:len(b)-40], 0o644)
	g, err := ReadFile(torn)
	if err != nil {
		t.Fatal(err)
	}
	if !g.Torn || len(g.Samples) != len(f.Samples)-1 {
		t.Errorf("cut short: torn %v, %d samples; want torn and %d", g.Torn, len(g.Samples), len(f.Samples)-1)
	}

	bad := filepath.Join(t.TempDir(), FileName)
	os.WriteFile(bad, []byte("{\"schema\":\"other\"}\n"), 0o644)
	if _, err := ReadFile(bad); err == nil || !strings.Contains(err.Error(), "line 1") || !strings.Contains(err.Error(), Schema) {
		t.Errorf("a foreign header: %v, want an error naming line 1 and the schema", err)
	}
}
