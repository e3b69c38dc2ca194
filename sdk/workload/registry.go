package workload

import (
	"fmt"
	"slices"
	"sync"

	"github.com/lmbench/lmbench/sdk/protocol"
)

// Content is registered text.
type Content = protocol.Content

// Registry collects content to send to the host once; the SDK ships new
// entries with the next Step answer. Safe for concurrent use.
type Registry struct {
	mu       sync.Mutex
	known    map[string]string
	pending  []Content
	released []string
}

// NewRegistry returns an empty registry (Serve and sdktest make one for you).
func NewRegistry() *Registry { return &Registry{known: map[string]string{}} }

// Register stores text under id and returns a segment referencing it.
// Registering the same id with the same text again is a no-op; with
// different text it panics (it would silently change earlier requests).
func (r *Registry) Register(id, text string) Segment {
	r.mu.Lock()
	defer r.mu.Unlock()
	if old, ok := r.known[id]; ok {
		if old != text {
			panic(fmt.Sprintf("workload: content %q registered twice with different text", id))
		}
		return Segment{Ref: id}
	}
	if slices.Contains(r.released, id) {
		// The host drops it after this Step's requests: it cannot also
		// take a new text now.
		panic(fmt.Sprintf("workload: content %q registered again in the Step that released it; register it from the next Step on, or under a new id", id))
	}
	r.known[id] = text
	r.pending = append(r.pending, Content{ID: id, Text: text})
	return Segment{Ref: id}
}

// Release forgets content no later request will reference, here and in
// the host (with the next Step answer, after that answer's requests are
// resolved), so a long run's memory stays flat. Requests already
// returned, and those of the current Step, keep their text. An id may be
// registered again from the next Step on, with any text.
func (r *Registry) Release(ids ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, id := range ids {
		if _, ok := r.known[id]; !ok {
			continue
		}
		delete(r.known, id)
		r.released = append(r.released, id)
	}
}

// Lookup returns registered text (ChatOf uses it; so do tests of a
// workload's content).
func (r *Registry) Lookup(id string) (string, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	t, ok := r.known[id]
	return t, ok
}

// Len is the number of entries registered and not released.
func (r *Registry) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.known)
}

// Drain returns and forgets the content registered since the last call
// (or the last Step answer): for tests that call a workload's Step
// directly and check what it registered. Serve and sdktest drain it
// themselves.
func (r *Registry) Drain() []Content {
	r.mu.Lock()
	defer r.mu.Unlock()
	p := r.pending
	r.pending = nil
	return p
}

// take returns and forgets what the host has not been told yet.
func (r *Registry) take() (pending []Content, released []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	pending, released = r.pending, r.released
	r.pending, r.released = nil, nil
	return pending, released
}
