// Package barrier gives the shards of a sharded run one start and one
// clock. A Server (lmbench barrier) waits until every shard has joined,
// then answers each the same start time, on its own clock, with the run's
// id; a shard (Join) first measures its clock against the server's, as
// NTP does: of several round trips it keeps the fastest, whose midpoint
// is closest to when the server read its clock, so the offset's error is
// at most half that round trip. The shard records the offset; lmbench
// merge adds it to the shard's timestamps, putting every shard on the
// barrier's clock.
//
// There are two gates: the run's start (PhaseStart) and, after each
// shard's warmup, the measured phase's (PhaseMeasure), so the shards'
// schedules start together however long their warmups took. A shard that
// stops before the measured phase says so (Leave), and the shards waiting
// there are told at once instead of waiting for it.
package barrier

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/lmbench/lmbench/core/record"
)

// Paths of the barrier's HTTP API.
const (
	TimePath  = "/v1/time"
	JoinPath  = "/v1/join"
	LeavePath = "/v1/leave"
)

// The gates.
const (
	PhaseStart   = "start"
	PhaseMeasure = "measure"
)

// MeasureLead is the measured phase gate's lead: at most this, or the
// server's Lead when shorter (every shard is already connected).
const MeasureLead = time.Second

// JoinRequest is what a shard sends.
type JoinRequest struct {
	Index      int    `json:"index"`
	Count      int    `json:"count"`
	ConfigHash string `json:"config_hash"`
	Host       string `json:"host"`
	// RunID is the shard's --run-id ("": take the barrier's).
	RunID string `json:"run_id,omitempty"`
	// Phase is the gate: PhaseStart ("" too) or PhaseMeasure.
	Phase string `json:"phase,omitempty"`
	// Reason, in a Leave, is why the shard stopped.
	Reason string `json:"reason,omitempty"`
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

// gate is one rendezvous of every shard.
type gate struct {
	joined map[int]JoinRequest
	start  time.Time     // set when the last shard joins
	ready  chan struct{} // closed then
	served map[int]bool
}

func newGate() *gate {
	return &gate{joined: map[int]JoinRequest{}, ready: make(chan struct{}), served: map[int]bool{}}
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
	// OnJoin, when set, hears of each shard admitted to a gate and how
	// many have joined it; OnLeave of a shard that left.
	OnJoin  func(jr JoinRequest, joined int)
	OnLeave func(jr JoinRequest)

	mu      sync.Mutex
	gates   map[string]*gate
	hash    string // the first shard's configuration
	hashBy  int
	failed  string        // why the run cannot go on (a shard left)
	fail    chan struct{} // closed then
	told    map[int]bool  // shards that know it: the one that left, those answered the failure
	allDone chan struct{} // closed once every shard had its measured phase's answer, or on failure
}

// NewServer is the barrier for count shards of run runID.
func NewServer(count int, runID string, lead time.Duration) *Server {
	return &Server{Count: count, RunID: runID, Lead: lead,
		gates:   map[string]*gate{PhaseStart: newGate(), PhaseMeasure: newGate()},
		fail:    make(chan struct{}),
		told:    map[int]bool{},
		allDone: make(chan struct{})}
}

// Done is closed once every shard has been answered its measured phase's
// start, or, when a shard left, once every shard knows (the others are
// told as they join, or at once when they wait).
func (s *Server) Done() <-chan struct{} { return s.allDone }

// Err is why the run cannot go on ("" while it can).
func (s *Server) Err() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.failed
}

// Joined is how many shards have joined the start gate so far.
func (s *Server) Joined() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.gates[PhaseStart].joined)
}

func (s *Server) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// ServeHTTP answers the time, joins and leaves.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case TimePath:
		writeJSON(w, http.StatusOK, timeResponse{UnixNs: s.now().UnixNano()})
	case JoinPath, LeavePath:
		if r.Method != http.MethodPost {
			writeJSON(w, http.StatusMethodNotAllowed, errorResponse{"POST a join or a leave"})
			return
		}
		var jr JoinRequest
		if err := json.NewDecoder(io.LimitReader(r.Body, 1<<16)).Decode(&jr); err != nil {
			writeJSON(w, http.StatusBadRequest, errorResponse{"join: " + err.Error()})
			return
		}
		if r.URL.Path == LeavePath {
			if jr.Count != s.Count || jr.Index < 0 || jr.Index >= s.Count {
				writeJSON(w, http.StatusConflict, errorResponse{fmt.Sprintf("shard %d/%d: this barrier is for %d shards", jr.Index, jr.Count, s.Count)})
				return
			}
			s.leave(jr)
			writeJSON(w, http.StatusOK, struct{}{})
			return
		}
		s.join(w, r, jr)
	default:
		writeJSON(w, http.StatusNotFound, errorResponse{"no such path: the barrier serves " + TimePath + ", " + JoinPath + " and " + LeavePath})
	}
}

func (s *Server) join(w http.ResponseWriter, r *http.Request, jr JoinRequest) {
	if jr.Phase == "" {
		jr.Phase = PhaseStart
	}
	g, n, msg := s.admit(jr)
	if msg != "" {
		writeJSON(w, http.StatusConflict, errorResponse{msg})
		s.toldFailure(jr)
		return
	}
	if s.OnJoin != nil {
		s.OnJoin(jr, n)
	}
	select {
	case <-g.ready:
	case <-s.fail:
		writeJSON(w, http.StatusConflict, errorResponse{s.Err()})
		s.toldFailure(jr)
		return
	case <-r.Context().Done():
		// The shard died or was stopped while it waited (one stopped by
		// lmbench says so itself): the others will not see it arrive.
		jr.Reason = "its connection to the barrier closed while it waited at the " + jr.Phase + " gate (the shard died or was stopped)"
		s.leave(jr)
		return
	}
	s.mu.Lock()
	resp := JoinResponse{RunID: s.RunID, StartUnixNs: g.start.UnixNano()}
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, resp)
	s.mu.Lock()
	defer s.mu.Unlock()
	g.served[jr.Index] = true
	if jr.Phase == PhaseMeasure && len(g.served) == s.Count {
		s.closeDone()
	}
}

// toldFailure counts a shard answered the run's failure (nothing while
// the run can go on).
func (s *Server) toldFailure(jr JoinRequest) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failed != "" && jr.Count == s.Count && jr.Index >= 0 && jr.Index < s.Count {
		s.told[jr.Index] = true
		s.doneIfAllTold()
	}
}

// doneIfAllTold closes Done once every shard knows of the failure; s.mu
// is held.
func (s *Server) doneIfAllTold() {
	if len(s.told) == s.Count {
		s.closeDone()
	}
}

func (s *Server) closeDone() {
	select {
	case <-s.allDone:
	default:
		close(s.allDone)
	}
}

// admit records a join, returning its gate and how many have joined it,
// or says why it is refused.
func (s *Server) admit(jr JoinRequest) (*gate, int, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	g, ok := s.gates[jr.Phase]
	if !ok {
		return nil, 0, fmt.Sprintf("phase %q: expected %q or %q", jr.Phase, PhaseStart, PhaseMeasure)
	}
	if msg := s.refusal(g, jr); msg != "" {
		return nil, 0, msg
	}
	g.joined[jr.Index] = jr
	if len(g.joined) == s.Count {
		lead := s.Lead
		if jr.Phase == PhaseMeasure {
			lead = min(lead, MeasureLead)
		}
		g.start = s.now().Add(lead)
		close(g.ready)
	}
	return g, len(g.joined), ""
}

// refusal says why a join is refused ("" when it is not); s.mu is held.
func (s *Server) refusal(g *gate, jr JoinRequest) string {
	switch {
	case s.failed != "":
		return s.failed
	case jr.Count != s.Count:
		return fmt.Sprintf("shard %d/%d: this barrier is for %d shards", jr.Index, jr.Count, s.Count)
	case jr.Index < 0 || jr.Index >= s.Count:
		return fmt.Sprintf("shard index %d: expected 0 to %d", jr.Index, s.Count-1)
	case jr.RunID != "" && jr.RunID != s.RunID:
		return fmt.Sprintf("shard %d/%d has --run-id %q, the barrier's run is %q", jr.Index, jr.Count, jr.RunID, s.RunID)
	case !g.start.IsZero():
		return fmt.Sprintf("shard %d/%d joined the %s gate after it opened (at %s): a restarted shard would send its requests twice; merge without it (lmbench merge --partial) or start a new run",
			jr.Index, jr.Count, jr.Phase, g.start.UTC().Format(time.RFC3339Nano))
	case jr.Phase == PhaseMeasure && !s.gates[PhaseStart].served[jr.Index]:
		return fmt.Sprintf("shard %d/%d joined the measure gate without starting through this barrier", jr.Index, jr.Count)
	}
	if prev, ok := g.joined[jr.Index]; ok {
		return fmt.Sprintf("shard %d/%d has joined already (from host %q); each index runs once", jr.Index, jr.Count, prev.Host)
	}
	if s.hash == "" {
		s.hash, s.hashBy = jr.ConfigHash, jr.Index
	} else if jr.ConfigHash != s.hash {
		return fmt.Sprintf("shard %d/%d's configuration (%s) differs from shard %d/%d's (%s): every shard must run the same configuration and seed",
			jr.Index, jr.Count, jr.ConfigHash, s.hashBy, s.Count, s.hash)
	}
	return ""
}

// leave records a shard that stopped before its measured phase: the
// shards waiting (or yet to wait) at a gate are told at once.
func (s *Server) leave(jr JoinRequest) {
	s.mu.Lock()
	if s.failed == "" && s.gates[PhaseMeasure].start.IsZero() {
		why := jr.Reason
		if why == "" {
			why = "it stopped"
		}
		s.failed = fmt.Sprintf("shard %d/%d left before the measured phase: %s", jr.Index, jr.Count, why)
		close(s.fail)
	}
	if s.failed != "" {
		s.told[jr.Index] = true
		s.doneIfAllTold()
	}
	s.mu.Unlock()
	if s.OnLeave != nil {
		s.OnLeave(jr)
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
	// Start is the gate's start on the barrier's clock; Clock is this
	// host's clock against it (barrier time = local time + Offset).
	Start time.Time
	Clock record.Clock
}

// LocalStart is Start on this host's clock.
func (j Joined) LocalStart() time.Time { return j.Start.Add(-j.Clock.Offset) }

// Join measures the clock against the barrier at url, joins its start
// gate, and waits for the answer (until ctx ends).
func Join(ctx context.Context, client *http.Client, url string, jr JoinRequest) (Joined, error) {
	base := strings.TrimRight(url, "/")
	clock, err := Measure(ctx, client, base, Samples)
	if err != nil {
		return Joined{}, err
	}
	jr.Phase = PhaseStart
	j, err := post(ctx, client, base, JoinPath, jr)
	j.Clock = clock
	return j, err
}

// JoinMeasure joins the measured phase's gate and waits for its start,
// given on this host's clock through clock.
func JoinMeasure(ctx context.Context, client *http.Client, url string, jr JoinRequest, clock record.Clock) (Joined, error) {
	jr.Phase = PhaseMeasure
	j, err := post(ctx, client, strings.TrimRight(url, "/"), JoinPath, jr)
	j.Clock = clock
	return j, err
}

// Leave tells the barrier the shard stopped before its measured phase.
func Leave(ctx context.Context, client *http.Client, url string, jr JoinRequest) error {
	_, err := post(ctx, client, strings.TrimRight(url, "/"), LeavePath, jr)
	return err
}

func post(ctx context.Context, client *http.Client, base, path string, jr JoinRequest) (Joined, error) {
	body, _ := json.Marshal(jr)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+path, bytes.NewReader(body))
	if err != nil {
		return Joined{}, fmt.Errorf("--barrier %s: %w", base, err)
	}
	req.Header.Set("Content-Type", "application/json")
	var resp *http.Response
	if path == LeavePath {
		resp, err = client.Do(req) // a barrier gone is no one to tell
	} else {
		resp, err = do(ctx, client, req, body)
	}
	if err != nil {
		return Joined{}, fmt.Errorf("--barrier %s: %w", base, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return Joined{}, fmt.Errorf("--barrier %s refused shard %d/%d: %s", base, jr.Index, jr.Count, errorText(resp))
	}
	if path == LeavePath {
		return Joined{}, nil
	}
	var out JoinResponse
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<16)).Decode(&out); err != nil {
		return Joined{}, fmt.Errorf("--barrier %s: its answer: %w", base, err)
	}
	if out.RunID == "" || out.StartUnixNs == 0 {
		return Joined{}, fmt.Errorf("--barrier %s answered no run id or start time", base)
	}
	return Joined{RunID: out.RunID, Start: time.Unix(0, out.StartUnixNs)}, nil
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
		if i == 0 {
			// The barrier may not be up yet (its pod still starting).
			if resp, err := do(ctx, client, req, nil); err == nil {
				resp.Body.Close()
			}
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

// DialPatience is how long a shard keeps trying to reach a barrier that
// refuses connections (not yet listening), a try a second.
var DialPatience = 2 * time.Minute

// do sends req, trying again while the barrier cannot be dialled, for up
// to DialPatience: a connection refused is a barrier not up yet, not an
// answer. body is req's, for a retry.
func do(ctx context.Context, client *http.Client, req *http.Request, body []byte) (*http.Response, error) {
	deadline := time.Now().Add(DialPatience)
	for {
		resp, err := client.Do(req)
		var op *net.OpError
		if err == nil || !errors.As(err, &op) || op.Op != "dial" || time.Now().After(deadline) {
			return resp, err
		}
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(time.Second):
		}
		if body != nil {
			req.Body = io.NopCloser(bytes.NewReader(body))
		}
	}
}

// ErrTimeout is the barrier giving up on shards that never joined.
var ErrTimeout = errors.New("not every shard joined in time")
