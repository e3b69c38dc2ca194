package workload

import (
	"fmt"
	"sync"
)

// Content is registered text.
type Content struct{ ID, Text string }

// Registry collects content to send to the host once; Serve ships pending
// entries with the next Step response. Safe for concurrent use.
type Registry struct {
	mu      sync.Mutex
	known   map[string]string
	pending []Content
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
	r.known[id] = text
	r.pending = append(r.pending, Content{ID: id, Text: text})
	return Segment{Ref: id}
}

// Lookup returns registered text.
func (r *Registry) Lookup(id string) (string, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	t, ok := r.known[id]
	return t, ok
}

// Drain returns and forgets the entries not yet shipped.
func (r *Registry) Drain() []Content {
	r.mu.Lock()
	defer r.mu.Unlock()
	p := r.pending
	r.pending = nil
	return p
}
