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
	// NoToolCalls refuses tools, tool calls and tool messages: the
	// workload did not announce the tool-calls capability, which gates
	// them.
	NoToolCalls bool
	seed        maphash.Seed
	seen        idSet
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
	c := requestCheck{v: v, r: r, known: known}
	if err := c.fields(); err != nil {
		return err
	}
	var err error
	if r.Completion {
		err = c.completion()
	} else {
		err = c.chat()
	}
	if err != nil {
		return err
	}
	if c.size > v.Limits.MaxTextBytes {
		return c.bad("text", "%d bytes once resolved, more than the %d allowed", c.size, v.Limits.MaxTextBytes)
	}
	h := maphash.String(v.seed, r.ID)
	if v.seen.has(h) {
		return c.bad("id", "is not unique: an earlier request of this run has it")
	}
	v.seen.add(h)
	return nil
}

// requestCheck is one call of Check: the request, and the size of its
// text resolved so far.
type requestCheck struct {
	v     *Validator
	r     *Request
	known func(id string) (string, bool)
	size  int
}

func (c *requestCheck) bad(field, problem string, args ...any) error {
	return &RequestError{Plugin: c.v.Plugin, RequestID: c.r.ID, Field: field, Problem: fmt.Sprintf(problem, args...)}
}

// fields checks the request's scalar fields and its tags.
func (c *requestCheck) fields() error {
	r, l := c.r, c.v.Limits
	switch {
	case r.ID == "":
		return c.bad("id", "is empty")
	case len(r.ID) > l.MaxIDBytes:
		return c.bad("id", "longer than %d bytes", l.MaxIDBytes)
	case r.MaxTokens < 1:
		return c.bad("max_tokens", "must be >= 1, got %d", r.MaxTokens)
	case r.MaxTokens > l.MaxTokens:
		return c.bad("max_tokens", "must be <= %d, got %d", l.MaxTokens, r.MaxTokens)
	case r.MaxInFlight < 0:
		return c.bad("max_in_flight", "must be >= 0, got %d", r.MaxInFlight)
	case r.HasScheduled && r.Scheduled < 0:
		return c.bad("scheduled", "must be >= 0, got %v", r.Scheduled)
	case r.HasExpectedCached && r.ExpectedCachedTokens < 0:
		return c.bad("expected_cached_tokens", "must be >= 0, got %d", r.ExpectedCachedTokens)
	case r.TargetTier != "" && !slices.Contains(Tiers, r.TargetTier):
		return c.bad("target_tier", "must be one of %s or empty, got %q", strings.Join(Tiers, ", "), r.TargetTier)
	case len(r.Tags) > l.MaxTags:
		return c.bad("tags", "%d tags, at most %d", len(r.Tags), l.MaxTags)
	}
	for k, val := range r.Tags {
		switch {
		case k == "":
			return c.bad("tags", "a tag has an empty key")
		case len(k) > l.MaxTagBytes || len(val) > l.MaxTagBytes:
			return c.bad("tags["+k+"]", "key or value longer than %d bytes", l.MaxTagBytes)
		}
	}
	return nil
}

// segments checks that every reference of field is registered, and adds
// the text to the request's size.
func (c *requestCheck) segments(field string, ss []Segment) error {
	for i, s := range ss {
		if s.Ref == "" {
			c.size += len(s.Text)
			continue
		}
		t, ok := c.known(s.Ref)
		if !ok {
			return c.bad(fmt.Sprintf("%s[%d]", field, i), "references content %q, which is not registered (or was released)", s.Ref)
		}
		c.size += len(t)
	}
	return nil
}

// completion checks a completions request: a prompt, nothing of a chat.
func (c *requestCheck) completion() error {
	r := c.r
	switch {
	case len(r.Messages) > 0:
		return c.bad("messages", "a completions request has a prompt, not messages")
	case len(r.Tools) > 0:
		return c.bad("tools", "tools need a chat request, not a completions prompt")
	}
	if err := c.segments("prompt", r.Prompt); err != nil {
		return err
	}
	if c.size == 0 {
		return c.bad("prompt", "is empty")
	}
	return nil
}

// chat checks a chat request: its messages, then its tools.
func (c *requestCheck) chat() error {
	r := c.r
	if len(r.Prompt) > 0 {
		return c.bad("prompt", "a chat request has messages, not a prompt (set Completion for a completions request)")
	}
	if len(r.Messages) == 0 {
		return c.bad("messages", "a chat request needs at least one message")
	}
	for i, m := range r.Messages {
		if err := c.message(fmt.Sprintf("messages[%d]", i), m); err != nil {
			return err
		}
	}
	return c.tools()
}

// message checks one chat message, f naming it (messages[i]).
func (c *requestCheck) message(f string, m Message) error {
	if !roles[m.Role] {
		return c.bad(f+".role", "must be system, user, assistant, tool or developer, got %q", m.Role)
	}
	if c.v.NoToolCalls {
		switch {
		case m.Role == "tool":
			return c.noToolCalls(f + ".role")
		case len(m.ToolCalls) > 0:
			return c.noToolCalls(f + ".tool_calls")
		case m.ToolCallID != "":
			return c.noToolCalls(f + ".tool_call_id")
		}
	}
	if err := c.segments(f+".content", m.Content); err != nil {
		return err
	}
	if len(m.ToolCalls) > 0 && m.Role != "assistant" {
		return c.bad(f+".tool_calls", "only an assistant message has tool calls, this one is %s", m.Role)
	}
	for j, tc := range m.ToolCalls {
		if tc.ID == "" || !toolNameRE.MatchString(tc.Name) {
			return c.bad(fmt.Sprintf("%s.tool_calls[%d]", f, j), "needs an id and a function name of 1-64 letters, digits, _ or -, got id %q name %q", tc.ID, tc.Name)
		}
		c.size += len(tc.Arguments)
	}
	if m.Role == "tool" && m.ToolCallID == "" {
		return c.bad(f+".tool_call_id", "a tool message names the call it answers")
	}
	if m.Role != "tool" && m.ToolCallID != "" {
		return c.bad(f+".tool_call_id", "only a tool message answers a call, this one is %s", m.Role)
	}
	return nil
}

// noToolCalls refuses field: the workload did not announce tool-calls.
func (c *requestCheck) noToolCalls(field string) error {
	return c.bad(field, "needs the %s capability, which the workload did not announce", ToolCalls)
}

// tools checks a chat request's tools and their total size.
func (c *requestCheck) tools() error {
	if c.v.NoToolCalls && len(c.r.Tools) > 0 {
		return c.noToolCalls("tools")
	}
	toolBytes := 0
	for i, t := range c.r.Tools {
		f := fmt.Sprintf("tools[%d]", i)
		if !toolNameRE.MatchString(t.Name) {
			return c.bad(f+".name", "must be 1-64 letters, digits, _ or -, got %q", t.Name)
		}
		if t.Parameters != "" && !json.Valid([]byte(t.Parameters)) {
			return c.bad(f+".parameters", "is not valid JSON")
		}
		toolBytes += len(t.Name) + len(t.Description) + len(t.Parameters)
	}
	if toolBytes > c.v.Limits.MaxToolsBytes {
		return c.bad("tools", "%d bytes, at most %d", toolBytes, c.v.Limits.MaxToolsBytes)
	}
	return nil
}
