// Package barrier gives the shards of a sharded run one start and one
// clock. A Server (lmbench barrier) waits until every shard has joined,
// then answers each the same start time, on its own clock, with the run's
// id; a shard (Join) first measures its clock against the server's, as
// NTP does: of several round trips it keeps the fastest, whose midpoint
// is closest to when the server read its clock, so the offset's error is
// at most half that round trip. The shard records the offset; lmbench
// merge adds it to the shard's timestamps, putting every shard on the
// barrier's clock.
package barrier

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/lmbench/lmbench/core/record"
)

// Paths of the barrier's HTTP API.
const (
	TimePath = "/v1/time"
	JoinPath = "/v1/join"
)

// JoinRequest is what a shard sends.
type JoinRequest struct {
	Index      int    `json:"index"`
	Count      int    `json:"count"`
	ConfigHash string `json:"config_hash"`
	Host       string `json:"host"`
	// RunID is the shard's --run-id ("": take the barrier's).
	RunID string `json:"run_id,omitempty"`
}

// JoinResponse is the barrier's answer once every shard has joined.
type JoinResponse struct {
	RunID       string `json:"run_id"`
	StartUnixNs int64  `json:"start_unix_ns"`
}

type timeResponse struct {
	UnixNs int64 `json:"unix_ns"`
}

type errorResponse struct {
	Error string `json:"error"`
}

// Server is the barrier of one run of Count shards.
type Server struct {
	Count int
	RunID string
	// Lead is how long after the last join the run starts: time for every
	// answer to reach its shard.
	Lead time.Duration
	// Now is the server's clock (time.Now when nil).
	Now func() time.Time

	mu      sync.Mutex
	joined  map[int]JoinRequest
	hash    string // the first shard's configuration
	hashBy  int
	start   time.Time     // set when the last shard joins
	ready   chan struct{} // closed then
	served  map[int]bool
	allDone chan struct{} // closed once every shard has had its answer
}

// NewServer is the barrier for count shards of run runID.
func NewServer(count int, runID string, lead time.Duration) *Server {
	return &Server{Count: count, RunID: runID, Lead: lead, joined: map[int]JoinRequest{},
		ready: make(chan struct{}), served: map[int]bool{}, allDone: make(chan struct{})}
}

// Done is closed once every shard has been answered its start.
func (s *Server) Done() <-chan struct{} { return s.allDone }

// Joined is how many shards have joined so far.
func (s *Server) Joined() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.joined)
}

func (s *Server) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// ServeHTTP answers the time and joins.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case TimePath:
		writeJSON(w, http.StatusOK, timeResponse{UnixNs: s.now().UnixNano()})
	case JoinPath:
		if r.Method != http.MethodPost {
			writeJSON(w, http.StatusMethodNotAllowed, errorResponse{"POST a join"})
			return
		}
		s.join(w, r)
	default:
		writeJSON(w, http.StatusNotFound, errorResponse{"no such path: the barrier serves " + TimePath + " and " + JoinPath})
	}
}

func (s *Server) join(w http.ResponseWriter, r *http.Request) {
	var jr JoinRequest
	if err := json.NewDecoder(io.LimitReader(r.Body, 1<<16)).Decode(&jr); err != nil {
		writeJSON(w, http.StatusBadRequest, errorResponse{"join: " + err.Error()})
		return
	}
	if msg := s.admit(jr); msg != "" {
		writeJSON(w, http.StatusConflict, errorResponse{msg})
		return
	}
	select {
	case <-s.ready:
	case <-r.Context().Done():
		s.leave(jr.Index) // the shard gave up (or died): it may join again
		return
	}
	s.mu.Lock()
	resp := JoinResponse{RunID: s.RunID, StartUnixNs: s.start.UnixNano()}
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, resp)
	s.mu.Lock()
	s.served[jr.Index] = true
	if len(s.served) == s.Count {
		select {
		case <-s.allDone:
		default:
			close(s.allDone)
		}
	}
	s.mu.Unlock()
}

// admit records a join, or says why it is refused.
func (s *Server) admit(jr JoinRequest) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case jr.Count != s.Count:
		return fmt.Sprintf("shard %d/%d: this barrier is for %d shards", jr.Index, jr.Count, s.Count)
	case jr.Index < 0 || jr.Index >= s.Count:
		return fmt.Sprintf("shard index %d: expected 0 to %d", jr.Index, s.Count-1)
	case jr.RunID != "" && jr.RunID != s.RunID:
		return fmt.Sprintf("shard %d/%d has --run-id %q, the barrier's run is %q", jr.Index, jr.Count, jr.RunID, s.RunID)
	case !s.start.IsZero():
		return fmt.Sprintf("shard %d/%d joined after the run started (at %s): a restarted shard would send its requests twice; merge without it (lmbench merge --partial) or start a new run",
			jr.Index, jr.Count, s.start.UTC().Format(time.RFC3339Nano))
	}
	if prev, ok := s.joined[jr.Index]; ok {
		return fmt.Sprintf("shard %d/%d has joined already (from host %q); each index runs once", jr.Index, jr.Count, prev.Host)
	}
	if s.hash == "" {
		s.hash, s.hashBy = jr.ConfigHash, jr.Index
	} else if jr.ConfigHash != s.hash {
		return fmt.Sprintf("shard %d/%d's configuration (%s) differs from shard %d/%d's (%s): every shard must run the same configuration and seed",
			jr.Index, jr.Count, jr.ConfigHash, s.hashBy, s.Count, s.hash)
	}
	s.joined[jr.Index] = jr
	if len(s.joined) == s.Count {
		s.start = s.now().Add(s.Lead)
		close(s.ready)
	}
	return ""
}

// leave forgets a shard that went away before the start.
func (s *Server) leave(index int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.start.IsZero() {
		delete(s.joined, index)
		if len(s.joined) == 0 {
			s.hash = ""
		}
	}
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

// Samples is how many round trips Join measures the clock with.
const Samples = 8

// Joined is what a shard learnt from the barrier.
type Joined struct {
	RunID string
	// Start is the common start on the barrier's clock; Clock is this
	// host's clock against it (barrier time = local time + Offset).
	Start time.Time
	Clock record.Clock
}

// LocalStart is Start on this host's clock.
func (j Joined) LocalStart() time.Time { return j.Start.Add(-j.Clock.Offset) }

// Join measures the clock against the barrier at url, joins, and waits
// for the answer (until ctx ends).
func Join(ctx context.Context, client *http.Client, url string, jr JoinRequest) (Joined, error) {
	base := strings.TrimRight(url, "/")
	clock, err := Measure(ctx, client, base, Samples)
	if err != nil {
		return Joined{}, err
	}
	body, _ := json.Marshal(jr)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+JoinPath, bytes.NewReader(body))
	if err != nil {
		return Joined{}, fmt.Errorf("--barrier %s: %w", url, err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return Joined{}, fmt.Errorf("--barrier %s: joining: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return Joined{}, fmt.Errorf("--barrier %s refused shard %d/%d: %s", url, jr.Index, jr.Count, errorText(resp))
	}
	var out JoinResponse
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<16)).Decode(&out); err != nil {
		return Joined{}, fmt.Errorf("--barrier %s: its answer: %w", url, err)
	}
	if out.RunID == "" || out.StartUnixNs == 0 {
		return Joined{}, fmt.Errorf("--barrier %s answered no run id or start time", url)
	}
	return Joined{RunID: out.RunID, Start: time.Unix(0, out.StartUnixNs), Clock: clock}, nil
}

// Measure estimates this host's clock offset against the barrier's from n
// round trips to its time endpoint, keeping the fastest.
func Measure(ctx context.Context, client *http.Client, base string, n int) (record.Clock, error) {
	best := record.Clock{Reference: "barrier " + base}
	for i := range n {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+TimePath, nil)
		if err != nil {
			return record.Clock{}, fmt.Errorf("--barrier %s: %w", base, err)
		}
		t0 := time.Now()
		resp, err := client.Do(req)
		if err != nil {
			return record.Clock{}, fmt.Errorf("--barrier %s: reading its clock: %w", base, err)
		}
		var tr timeResponse
		err = json.NewDecoder(io.LimitReader(resp.Body, 1<<12)).Decode(&tr)
		t1 := time.Now()
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK || tr.UnixNs == 0 {
			return record.Clock{}, fmt.Errorf("--barrier %s: %s is not a barrier's clock (HTTP %d)", base, TimePath, resp.StatusCode)
		}
		rtt := t1.Sub(t0) // monotonic
		// The server read its clock about halfway through the round trip.
		mid := t0.UnixNano() + int64(rtt)/2
		if i == 0 || rtt < best.RTT {
			best.RTT, best.Offset = rtt, time.Duration(tr.UnixNs-mid)
		}
		best.Samples++
	}
	return best, nil
}

func errorText(resp *http.Response) string {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<14))
	var e errorResponse
	if json.Unmarshal(b, &e) == nil && e.Error != "" {
		return e.Error
	}
	if s := strings.TrimSpace(string(b)); s != "" {
		return fmt.Sprintf("HTTP %d: %s", resp.StatusCode, s)
	}
	return fmt.Sprintf("HTTP %d", resp.StatusCode)
}

// ErrTimeout is the barrier giving up on shards that never joined.
var ErrTimeout = errors.New("not every shard joined in time")
