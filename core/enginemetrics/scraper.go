package enginemetrics

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"
)

// FileName is the samples' file in the output directory.
const FileName = "bench_metrics.jsonl"

// Schema names the file's format, in its first line.
const Schema = "lmbench.bench_metrics/1"

// DefaultInterval is how often a run scrapes between phase boundaries.
const DefaultInterval = 5 * time.Second

// DefaultTimeout bounds one scrape.
const DefaultTimeout = 3 * time.Second

// maxBody bounds an exposition (vLLM's is tens of KB).
const maxBody = 32 << 20

// URLFor is the default metrics URL of an engine: its base URL's origin
// plus /metrics (vLLM and SGLang serve it beside /v1).
func URLFor(engineURL string) (string, error) {
	u, err := url.Parse(engineURL)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return "", fmt.Errorf("engine URL %q: want scheme://host[:port]", engineURL)
	}
	return (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: "/metrics"}).String(), nil
}

// CheckURL checks a --metrics-url value.
func CheckURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("want an http:// or https:// URL such as http://localhost:8000/metrics, got %q", raw)
	}
	return nil
}

// Config of a Scraper.
type Config struct {
	URL string
	// Shown is URL as logs, errors and the file name it (credentials
	// removed); "" means URL.
	Shown string
	// Interval between background scrapes (0: none, only the explicit
	// ones); Timeout of one scrape (0: DefaultTimeout).
	Interval, Timeout time.Duration
	// Path of the samples' file ("": not kept).
	Path   string
	Client *http.Client // nil: a client of its own
	Log    zerolog.Logger
}

// Scraper scrapes an engine's /metrics through a run: on demand (Scrape,
// at the phase boundaries) and every Interval (Start), appending every
// sample, failed ones too, to its file as it goes, so a run killed midway
// keeps what it scraped. A failed scrape is logged once (the first) and
// recorded; it never fails the run. Safe for concurrent use.
type Scraper struct {
	cfg    Config
	client *http.Client
	start  time.Time

	mu      sync.Mutex
	samples []Sample
	phase   string
	file    *os.File
	w       *bufio.Writer
	fileErr error
	logged  bool
	failed  int

	stop chan struct{}
	done chan struct{}
}

// New creates the scraper and its file (with its header line).
func New(cfg Config) (*Scraper, error) {
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.Shown == "" {
		cfg.Shown = cfg.URL
	}
	s := &Scraper{cfg: cfg, client: cfg.Client, start: time.Now()}
	if s.client == nil {
		s.client = &http.Client{}
	}
	if cfg.Path != "" {
		f, err := os.Create(cfg.Path)
		if err != nil {
			return nil, fmt.Errorf("engine metrics: %w", err)
		}
		s.file, s.w = f, bufio.NewWriter(f)
		hdr, _ := json.Marshal(header{Schema: Schema, URL: cfg.Shown, IntervalS: cfg.Interval.Seconds(),
			Started: s.start.UTC()})
		s.writeLine(hdr)
	}
	return s, nil
}

// SetPhase names the phase background samples are taken in ("" between
// phases).
func (s *Scraper) SetPhase(phase string) {
	s.mu.Lock()
	s.phase = phase
	s.mu.Unlock()
}

// Start scrapes every Interval until Close (no-op without an interval).
func (s *Scraper) Start(ctx context.Context) {
	if s.cfg.Interval <= 0 || s.stop != nil {
		return
	}
	s.stop, s.done = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(s.done)
		t := time.NewTicker(s.cfg.Interval)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				s.Scrape(ctx, PointInterval)
			case <-s.stop:
				return
			case <-ctx.Done():
				return
			}
		}
	}()
}

// Scrape takes one sample now, records it and returns it.
func (s *Scraper) Scrape(ctx context.Context, point string) Sample {
	at := time.Now()
	snap, err := s.fetch(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	smp := Sample{Time: at, Elapsed: at.Sub(s.start).Seconds(), Point: point, Phase: s.phase, Snap: snap}
	if err != nil {
		smp.Err, smp.Snap = err.Error(), Snapshot{}
		s.failed++
		if !s.logged {
			s.logged = true
			s.cfg.Log.Warn().Err(err).Str("url", s.cfg.Shown).
				Msg("engine metrics: scrape failed (the run goes on; later failures are recorded, not logged)")
		}
	}
	s.samples = append(s.samples, smp)
	if s.w != nil {
		line, _ := json.Marshal(lineOf(smp))
		s.writeLine(line)
	}
	return smp
}

func (s *Scraper) fetch(ctx context.Context) (Snapshot, error) {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.cfg.URL, nil)
	if err != nil {
		return Snapshot{}, fmt.Errorf("GET %s: %w", s.cfg.Shown, err)
	}
	// The text format: a Go or Python client would otherwise be free to
	// answer OpenMetrics or protobuf.
	req.Header.Set("Accept", "text/plain;version=0.0.4;q=1,*/*;q=0.1")
	resp, err := s.client.Do(req)
	if err != nil {
		return Snapshot{}, fmt.Errorf("GET %s: %w", s.cfg.Shown, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
		return Snapshot{}, fmt.Errorf("GET %s: %s", s.cfg.Shown, resp.Status)
	}
	if ct := resp.Header.Get("Content-Type"); strings.Contains(ct, "json") || strings.Contains(ct, "html") {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
		return Snapshot{}, fmt.Errorf("GET %s: answered %s, not Prometheus metrics text: "+
			"--metrics-url must name the engine's Prometheus exposition (vLLM, SGLang --enable-metrics, llama.cpp --metrics: /metrics; "+
			"Ollama serves none: --no-metrics)", s.cfg.Shown, ct)
	}
	snap, err := Parse(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return Snapshot{}, fmt.Errorf("GET %s: %w (is it the engine's Prometheus /metrics?)", s.cfg.Shown, err)
	}
	return snap, nil
}

// writeLine appends one line and flushes it; the first write error is
// kept for Close and stops further writes.
func (s *Scraper) writeLine(b []byte) {
	if s.fileErr != nil {
		return
	}
	_, err := s.w.Write(append(b, '\n'))
	if err == nil {
		err = s.w.Flush()
	}
	s.fileErr = err
}

// Samples returns every sample so far, in the order taken.
func (s *Scraper) Samples() []Sample {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Sample(nil), s.samples...)
}

// Failed is how many scrapes failed.
func (s *Scraper) Failed() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.failed
}

// Path is the samples' file ("" when not kept).
func (s *Scraper) Path() string { return s.cfg.Path }

// Close stops the background scrapes and closes the file.
func (s *Scraper) Close() error {
	if s.stop != nil {
		close(s.stop)
		<-s.done
		s.stop = nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.file == nil {
		return nil
	}
	err := errors.Join(s.fileErr, s.file.Close())
	s.file, s.w = nil, nil
	if err != nil {
		return fmt.Errorf("engine metrics: writing %s: %w", s.cfg.Path, err)
	}
	return nil
}

// The file's lines (docs/results-schema.md).
type header struct {
	Schema    string    `json:"schema"`
	URL       string    `json:"url"`
	IntervalS float64   `json:"interval_s"`
	Started   time.Time `json:"started"`
}

type line struct {
	Time     time.Time           `json:"time"`
	ElapsedS float64             `json:"elapsed_s"`
	Point    string              `json:"point"`
	Phase    *string             `json:"phase"`
	Error    *string             `json:"error"`
	Values   map[string]float64  `json:"values"`
	Hists    map[string]histLine `json:"histograms"`
}

type histLine struct {
	Count      float64   `json:"count"`
	Sum        float64   `json:"sum"`
	Bounds     []float64 `json:"bounds"`
	Cumulative []float64 `json:"cumulative"`
}

func lineOf(s Sample) line {
	l := line{Time: s.Time.UTC(), ElapsedS: s.Elapsed, Point: s.Point, Values: s.Snap.Values,
		Hists: map[string]histLine{}}
	if l.Values == nil {
		l.Values = map[string]float64{}
	}
	if s.Phase != "" {
		l.Phase = &s.Phase
	}
	if s.Err != "" {
		l.Error = &s.Err
	}
	for k, h := range s.Snap.Hists {
		l.Hists[k] = histLine{Count: h.Count, Sum: h.Sum, Bounds: h.Bounds, Cumulative: h.Cum}
	}
	return l
}
