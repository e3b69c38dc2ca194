package protocol

import (
	"encoding/json"
	"fmt"
	"hash/maphash"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Limits bound what one request may carry.
type Limits struct {
	MaxIDBytes    int // request and content ids
	MaxTokens     int // max_tokens
	MaxTags       int
	MaxTagBytes   int // one key or value
	MaxTextBytes  int // the resolved text of one request
	MaxToolsBytes int // the tools of one request, names, descriptions and schemas
}

// DefaultLimits are the host's and sdktest's limits.
var DefaultLimits = Limits{
	MaxIDBytes:    512,
	MaxTokens:     1 << 24,
	MaxTags:       64,
	MaxTagBytes:   1024,
	MaxTextBytes:  256 << 20,
	MaxToolsBytes: 1 << 20,
}

// RequestError is a request the workload returned that cannot be sent.
type RequestError struct {
	Plugin    string // the workload's name
	RequestID string // "" when the request has none
	Field     string // e.g. "max_tokens", "messages[1].role"
	Problem   string
}

func (e *RequestError) Error() string {
	id := "a request without an id"
	if e.RequestID != "" {
		id = "request " + strconv.Quote(e.RequestID)
	}
	return fmt.Sprintf("workload %s returned an invalid request: %s: %s: %s", e.Plugin, id, e.Field, e.Problem)
}

// Validator holds the request rules of a run. The host and sdktest use the
// same one, so a request one rejects the other rejects with the same
// error. It remembers the ids seen in the run, so ids must be unique
// across both phases: as 64-bit hashes (two ids share a hash, and the
// second is wrongly refused, about once in 3·10⁷ runs of a million
// requests), past the first 4,096 in a temporary file, so a long run's
// memory does not grow with its requests.
type Validator struct {
	Plugin string
	Limits Limits
	seed   maphash.Seed
	seen   idSet
}

// Close releases what the validator holds (a temporary file, once a run
// has had many requests).
func (v *Validator) Close() { v.seen.close() }

// NewValidator returns the validator of one run of plugin.
func NewValidator(plugin string) *Validator {
	return &Validator{Plugin: plugin, Limits: DefaultLimits, seed: maphash.MakeSeed()}
}

var (
	toolNameRE = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)
	roles      = map[string]bool{"system": true, "user": true, "assistant": true, "tool": true, "developer": true}
)

// CheckContent checks content the workload registers. known returns the
// text registered under an id, if any.
func (v *Validator) CheckContent(c Content, known func(id string) (string, bool)) error {
	bad := func(problem string, args ...any) error {
		return &RequestError{Plugin: v.Plugin, Field: "content " + strconv.Quote(c.ID), Problem: fmt.Sprintf(problem, args...)}
	}
	switch {
	case c.ID == "":
		return &RequestError{Plugin: v.Plugin, Field: "content", Problem: "registered without an id"}
	case len(c.ID) > v.Limits.MaxIDBytes:
		return bad("id longer than %d bytes", v.Limits.MaxIDBytes)
	case len(c.Text) > v.Limits.MaxTextBytes:
		return bad("%d bytes, more than the %d a request may carry", len(c.Text), v.Limits.MaxTextBytes)
	}
	if old, ok := known(c.ID); ok && old != c.Text {
		return bad("registered again with different text (it would change the requests that use it)")
	}
	return nil
}

// Check checks one request. known tells whether a content id is
// registered (and not released). On success the id counts as used.
func (v *Validator) Check(r *Request, known func(id string) (string, bool)) error {
	bad := func(field, problem string, args ...any) error {
		return &RequestError{Plugin: v.Plugin, RequestID: r.ID, Field: field, Problem: fmt.Sprintf(problem, args...)}
	}
	l := v.Limits
	switch {
	case r.ID == "":
		return bad("id", "is empty")
	case len(r.ID) > l.MaxIDBytes:
		return bad("id", "longer than %d bytes", l.MaxIDBytes)
	case r.MaxTokens < 1:
		return bad("max_tokens", "must be >= 1, got %d", r.MaxTokens)
	case r.MaxTokens > l.MaxTokens:
		return bad("max_tokens", "must be <= %d, got %d", l.MaxTokens, r.MaxTokens)
	case r.MaxInFlight < 0:
		return bad("max_in_flight", "must be >= 0, got %d", r.MaxInFlight)
	case r.HasScheduled && r.Scheduled < 0:
		return bad("scheduled", "must be >= 0, got %v", r.Scheduled)
	case r.HasExpectedCached && r.ExpectedCachedTokens < 0:
		return bad("expected_cached_tokens", "must be >= 0, got %d", r.ExpectedCachedTokens)
	case r.TargetTier != "" && !slices.Contains(Tiers, r.TargetTier):
		return bad("target_tier", "must be one of %s or empty, got %q", strings.Join(Tiers, ", "), r.TargetTier)
	case len(r.Tags) > l.MaxTags:
		return bad("tags", "%d tags, at most %d", len(r.Tags), l.MaxTags)
	}
	for k, val := range r.Tags {
		switch {
		case k == "":
			return bad("tags", "a tag has an empty key")
		case len(k) > l.MaxTagBytes || len(val) > l.MaxTagBytes:
			return bad("tags["+k+"]", "key or value longer than %d bytes", l.MaxTagBytes)
		}
	}
	size := 0
	segs := func(field string, ss []Segment) error {
		for i, s := range ss {
			if s.Ref == "" {
				size += len(s.Text)
				continue
			}
			t, ok := known(s.Ref)
			if !ok {
				return bad(fmt.Sprintf("%s[%d]", field, i), "references content %q, which is not registered (or was released)", s.Ref)
			}
			size += len(t)
		}
		return nil
	}
	if r.Completion {
		switch {
		case len(r.Messages) > 0:
			return bad("messages", "a completions request has a prompt, not messages")
		case len(r.Tools) > 0:
			return bad("tools", "tools need a chat request, not a completions prompt")
		}
		if err := segs("prompt", r.Prompt); err != nil {
			return err
		}
		if size == 0 {
			return bad("prompt", "is empty")
		}
	} else {
		if len(r.Prompt) > 0 {
			return bad("prompt", "a chat request has messages, not a prompt (set Completion for a completions request)")
		}
		if len(r.Messages) == 0 {
			return bad("messages", "a chat request needs at least one message")
		}
		for i, m := range r.Messages {
			f := fmt.Sprintf("messages[%d]", i)
			if !roles[m.Role] {
				return bad(f+".role", "must be system, user, assistant, tool or developer, got %q", m.Role)
			}
			if err := segs(f+".content", m.Content); err != nil {
				return err
			}
			if len(m.ToolCalls) > 0 && m.Role != "assistant" {
				return bad(f+".tool_calls", "only an assistant message has tool calls, this one is %s", m.Role)
			}
			for j, tc := range m.ToolCalls {
				if tc.ID == "" || !toolNameRE.MatchString(tc.Name) {
					return bad(fmt.Sprintf("%s.tool_calls[%d]", f, j), "needs an id and a function name of 1-64 letters, digits, _ or -, got id %q name %q", tc.ID, tc.Name)
				}
				size += len(tc.Arguments)
			}
			if m.Role == "tool" && m.ToolCallID == "" {
				return bad(f+".tool_call_id", "a tool message names the call it answers")
			}
			if m.Role != "tool" && m.ToolCallID != "" {
				return bad(f+".tool_call_id", "only a tool message answers a call, this one is %s", m.Role)
			}
		}
		toolBytes := 0
		for i, t := range r.Tools {
			f := fmt.Sprintf("tools[%d]", i)
			if !toolNameRE.MatchString(t.Name) {
				return bad(f+".name", "must be 1-64 letters, digits, _ or -, got %q", t.Name)
			}
			if t.Parameters != "" && !json.Valid([]byte(t.Parameters)) {
				return bad(f+".parameters", "is not valid JSON")
			}
			toolBytes += len(t.Name) + len(t.Description) + len(t.Parameters)
		}
		if toolBytes > l.MaxToolsBytes {
			return bad("tools", "%d bytes, at most %d", toolBytes, l.MaxToolsBytes)
		}
	}
	if size > l.MaxTextBytes {
		return bad("text", "%d bytes once resolved, more than the %d allowed", size, l.MaxTextBytes)
	}
	h := maphash.String(v.seed, r.ID)
	if v.seen.has(h) {
		return bad("id", "is not unique: an earlier request of this run has it")
	}
	v.seen.add(h)
	return nil
}
