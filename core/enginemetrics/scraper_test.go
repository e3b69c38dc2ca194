package enginemetrics

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// --metrics-url at a JSON endpoint (LMCache's /status, Ollama's /api/ps)
// says what it answered and what is expected, not a parser's complaint.
func TestScrapeJSONEndpoint(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.Write([]byte(`{"models":[]}`))
	}))
	defer srv.Close()
	s, err := New(Config{URL: srv.URL + "/api/ps"})
	if err != nil {
		t.Fatal(err)
	}
	smp := s.Scrape(context.Background(), "start")
	want := "answered application/json; charset=utf-8, not Prometheus metrics text: --metrics-url must name"
	if !strings.Contains(smp.Err, want) {
		t.Errorf("scrape error %q, want it to contain %q", smp.Err, want)
	}
}
