package protocol_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/lmbench/lmbench/sdk/protocol"
)

// registered is the content a test run knows.
var registered = map[string]string{"doc": "A document.", "empty": ""}

func known(id string) (string, bool) {
	t, ok := registered[id]
	return t, ok
}

func user(segs ...protocol.Segment) protocol.Message {
	return protocol.Message{Role: "user", Content: segs}
}
func text(s string) protocol.Segment { return protocol.Segment{Text: s} }

// chat is a valid chat request; tests break one thing in it.
func chat(id string, msgs ...protocol.Message) protocol.Request {
	if len(msgs) == 0 {
		msgs = []protocol.Message{user(text("hi"))}
	}
	return protocol.Request{ID: id, Messages: msgs, MaxTokens: 16}
}

func tags(n int) map[string]string {
	m := map[string]string{}
	for i := range n {
		m[fmt.Sprint("k", i)] = "v"
	}
	return m
}

const prefix = `workload w returned an invalid request: request "q": `

func TestCheck(t *testing.T) {
	t.Parallel()
	calls := []protocol.ToolCall{{ID: "call_0", Name: "get_weather", Arguments: `{"city":"Paris"}`}}
	with := func(f func(r *protocol.Request)) protocol.Request {
		r := chat("q")
		f(&r)
		return r
	}
	tests := []struct {
		name string
		req  protocol.Request
		want string // the whole error; "" = valid
	}{
		{"valid chat", chat("q"), ""},
		{"valid completion", protocol.Request{ID: "q", Completion: true, Prompt: []protocol.Segment{{Ref: "doc"}, text(" Summary:")}, MaxTokens: 1}, ""},
		{"every role, tools and tool calls", with(func(r *protocol.Request) {
			r.Messages = []protocol.Message{
				{Role: "system", Content: []protocol.Segment{text("Be brief.")}},
				{Role: "developer", Content: []protocol.Segment{text("Use tools.")}},
				user(protocol.Segment{Ref: "doc"}, text(" Weather?")),
				{Role: "assistant", ToolCalls: calls},
				{Role: "tool", Content: []protocol.Segment{text(`{"temp_c":21}`)}, ToolCallID: "call_0"},
			}
			r.Tools = []protocol.Tool{{Name: "get_weather", Description: "Weather.", Parameters: `{"type":"object"}`}, {Name: "no-params"}}
			r.Tags = map[string]string{"doc": "0", "empty-value": ""}
			r.Scheduled, r.HasScheduled = 0, true
		}), ""},
		{"max tokens at the limit", with(func(r *protocol.Request) { r.MaxTokens = protocol.DefaultLimits.MaxTokens }), ""},

		{"empty id", chat(""), `workload w returned an invalid request: a request without an id: id: is empty`},
		{"id too long", chat(strings.Repeat("x", 513)),
			fmt.Sprintf("workload w returned an invalid request: request %q: id: longer than 512 bytes", strings.Repeat("x", 513))},
		{"max tokens negative", with(func(r *protocol.Request) { r.MaxTokens = -5 }), prefix + "max_tokens: must be >= 1, got -5"},
		{"max tokens zero", with(func(r *protocol.Request) { r.MaxTokens = 0 }), prefix + "max_tokens: must be >= 1, got 0"},
		{"expected cached tokens negative", with(func(r *protocol.Request) { r.ExpectedCachedTokens, r.HasExpectedCached = -1, true }),
			prefix + "expected_cached_tokens: must be >= 0, got -1"},
		{"unknown target tier", with(func(r *protocol.Request) { r.TargetTier = "l3" }),
			prefix + `target_tier: must be one of gpu, cpu, disk, blend or empty, got "l3"`},
		{"max tokens above the limit", with(func(r *protocol.Request) { r.MaxTokens = 1<<24 + 1 }), prefix + "max_tokens: must be <= 16777216, got 16777217"},
		{"negative schedule", with(func(r *protocol.Request) { r.Scheduled, r.HasScheduled = -time.Millisecond, true }),
			prefix + "scheduled: must be >= 0, got -1ms"},
		{"negative schedule, unset", with(func(r *protocol.Request) { r.Scheduled = -time.Millisecond }), ""},

		{"too many tags", with(func(r *protocol.Request) { r.Tags = tags(65) }), prefix + "tags: 65 tags, at most 64"},
		{"as many tags as allowed", with(func(r *protocol.Request) { r.Tags = tags(64) }), ""},
		{"empty tag key", with(func(r *protocol.Request) { r.Tags = map[string]string{"": "v"} }), prefix + "tags: a tag has an empty key"},
		{"tag key too long", with(func(r *protocol.Request) { r.Tags = map[string]string{strings.Repeat("k", 1025): "v"} }),
			prefix + "tags[" + strings.Repeat("k", 1025) + "]: key or value longer than 1024 bytes"},
		{"tag value too long", with(func(r *protocol.Request) { r.Tags = map[string]string{"doc": strings.Repeat("v", 1025)} }),
			prefix + "tags[doc]: key or value longer than 1024 bytes"},

		{"chat without messages", with(func(r *protocol.Request) { r.Messages = nil }), prefix + "messages: a chat request needs at least one message"},
		{"chat with an empty message list", with(func(r *protocol.Request) { r.Messages = []protocol.Message{} }),
			prefix + "messages: a chat request needs at least one message"},
		{"chat with a prompt", with(func(r *protocol.Request) { r.Prompt = []protocol.Segment{text("x")} }),
			prefix + "prompt: a chat request has messages, not a prompt (set Completion for a completions request)"},
		{"completion with messages", with(func(r *protocol.Request) { r.Completion, r.Prompt = true, []protocol.Segment{text("x")} }),
			prefix + "messages: a completions request has a prompt, not messages"},
		{"completion with an empty prompt", protocol.Request{ID: "q", Completion: true, MaxTokens: 1}, prefix + "prompt: is empty"},
		{"completion whose prompt resolves to nothing", protocol.Request{ID: "q", Completion: true, Prompt: []protocol.Segment{{Ref: "empty"}, text("")}, MaxTokens: 1},
			prefix + "prompt: is empty"},
		{"completion with tools", protocol.Request{ID: "q", Completion: true, Prompt: []protocol.Segment{text("x")}, MaxTokens: 1, Tools: []protocol.Tool{{Name: "f"}}},
			prefix + "tools: tools need a chat request, not a completions prompt"},
		{"unknown role", chat("q", user(text("hi")), protocol.Message{Role: "robot", Content: []protocol.Segment{text("beep")}}),
			prefix + `messages[1].role: must be system, user, assistant, tool or developer, got "robot"`},
		{"empty role", chat("q", protocol.Message{Content: []protocol.Segment{text("x")}}),
			prefix + `messages[0].role: must be system, user, assistant, tool or developer, got ""`},
		{"unregistered content in a message", chat("q", user(text("a"), protocol.Segment{Ref: "nope"})),
			prefix + `messages[0].content[1]: references content "nope", which is not registered (or was released)`},
		{"unregistered content in a prompt", protocol.Request{ID: "q", Completion: true, Prompt: []protocol.Segment{{Ref: "nope"}}, MaxTokens: 1},
			prefix + `prompt[0]: references content "nope", which is not registered (or was released)`},

		{"tool message without tool_call_id", chat("q", user(text("x")), protocol.Message{Role: "tool", Content: []protocol.Segment{text("42")}}),
			prefix + "messages[1].tool_call_id: a tool message names the call it answers"},
		{"tool_call_id on a user message", chat("q", protocol.Message{Role: "user", Content: []protocol.Segment{text("x")}, ToolCallID: "call_0"}),
			prefix + "messages[0].tool_call_id: only a tool message answers a call, this one is user"},
		{"tool calls on a user message", chat("q", protocol.Message{Role: "user", Content: []protocol.Segment{text("x")}, ToolCalls: calls}),
			prefix + "messages[0].tool_calls: only an assistant message has tool calls, this one is user"},
		{"tool call without an id", chat("q", protocol.Message{Role: "assistant", ToolCalls: []protocol.ToolCall{{Name: "f"}}}),
			prefix + `messages[0].tool_calls[0]: needs an id and a function name of 1-64 letters, digits, _ or -, got id "" name "f"`},
		{"tool call with a bad name", chat("q", protocol.Message{Role: "assistant", ToolCalls: []protocol.ToolCall{{ID: "c", Name: "get weather"}}}),
			prefix + `messages[0].tool_calls[0]: needs an id and a function name of 1-64 letters, digits, _ or -, got id "c" name "get weather"`},
		{"tool without a name", with(func(r *protocol.Request) { r.Tools = []protocol.Tool{{Name: "ok"}, {}} }),
			prefix + `tools[1].name: must be 1-64 letters, digits, _ or -, got ""`},
		{"tool name too long", with(func(r *protocol.Request) { r.Tools = []protocol.Tool{{Name: strings.Repeat("f", 65)}} }),
			prefix + fmt.Sprintf("tools[0].name: must be 1-64 letters, digits, _ or -, got %q", strings.Repeat("f", 65))},
		{"tool name of 64", with(func(r *protocol.Request) { r.Tools = []protocol.Tool{{Name: strings.Repeat("f", 64)}} }), ""},
		{"tool name with a dot", with(func(r *protocol.Request) { r.Tools = []protocol.Tool{{Name: "a.b"}} }),
			prefix + `tools[0].name: must be 1-64 letters, digits, _ or -, got "a.b"`},
		{"tool parameters not JSON", with(func(r *protocol.Request) { r.Tools = []protocol.Tool{{Name: "f", Parameters: `{"type":`}} }),
			prefix + "tools[0].parameters: is not valid JSON"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			v := protocol.NewValidator("w")
			err := v.Check(&tc.req, known)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("Check = %v, want the request accepted", err)
			case tc.want != "" && err == nil:
				t.Errorf("Check accepted the request, want %q", tc.want)
			case tc.want != "":
				if d := cmp.Diff(tc.want, err.Error()); d != "" {
					t.Errorf("error (-want +got):\n%s", d)
				}
			}
		})
	}
}

// Without the tool-calls capability a workload's tools, tool calls and
// tool messages are refused by name, before anything is sent.
func TestCheckToolCallsNeedTheCapability(t *testing.T) {
	t.Parallel()
	calls := []protocol.ToolCall{{ID: "call_0", Name: "get_weather", Arguments: `{}`}}
	for name, tc := range map[string]struct {
		req   protocol.Request
		field string
	}{
		"tools":        {protocol.Request{ID: "q", Messages: []protocol.Message{user(text("hi"))}, Tools: []protocol.Tool{{Name: "f"}}, MaxTokens: 1}, "tools"},
		"tool calls":   {chat("q", user(text("hi")), protocol.Message{Role: "assistant", ToolCalls: calls}), "messages[1].tool_calls"},
		"tool message": {chat("q", user(text("hi")), protocol.Message{Role: "tool", ToolCallID: "call_0", Content: []protocol.Segment{text("sunny")}}), "messages[1].role"},
	} {
		v := protocol.NewValidator("w")
		v.NoToolCalls = true
		err := v.Check(&tc.req, known)
		if want := prefix + tc.field + ": needs the tool-calls capability, which the workload did not announce"; err == nil || err.Error() != want {
			t.Errorf("%s: %v, want %s", name, err, want)
		}
		if err := protocol.NewValidator("w").Check(&tc.req, known); err != nil {
			t.Errorf("%s with the capability: %v", name, err)
		}
	}
}

// The limits of a Validator are its own; the host and sdktest use the defaults.
func TestCheckSizeLimits(t *testing.T) {
	t.Parallel()
	v := protocol.NewValidator("w")
	v.Limits.MaxTextBytes = 20
	v.Limits.MaxToolsBytes = 10
	tests := []struct {
		name string
		req  protocol.Request
		want string
	}{
		{"text at the limit, references resolved", chat("q1", user(protocol.Segment{Ref: "doc"}, text("123456789"))), ""},
		{"text over the limit once resolved", chat("q", user(protocol.Segment{Ref: "doc"}, text("1234567890"))),
			prefix + "text: 21 bytes once resolved, more than the 20 allowed"},
		{"tool call arguments count as text", chat("q", protocol.Message{Role: "assistant", ToolCalls: []protocol.ToolCall{{ID: "c", Name: "f", Arguments: strings.Repeat("a", 21)}}}),
			prefix + "text: 21 bytes once resolved, more than the 20 allowed"},
		{"tools over the limit", protocol.Request{ID: "q", Messages: []protocol.Message{user(text("x"))}, MaxTokens: 1,
			Tools: []protocol.Tool{{Name: "abc", Description: "de", Parameters: "[1,2]"}, {Name: "f"}}},
			prefix + "tools: 11 bytes, at most 10"},
	}
	for _, tc := range tests {
		err := v.Check(&tc.req, known)
		if tc.want == "" {
			if err != nil {
				t.Errorf("%s: Check = %v, want accepted", tc.name, err)
			}
			continue
		}
		if err == nil || err.Error() != tc.want {
			t.Errorf("%s: Check = %v, want %q", tc.name, err, tc.want)
		}
	}
}

// Ids are unique across Check calls (both phases of a run); a rejected
// request does not take its id.
func TestCheckUniqueIDs(t *testing.T) {
	t.Parallel()
	v := protocol.NewValidator("w")
	check := func(r protocol.Request) string {
		if err := v.Check(&r, known); err != nil {
			return err.Error()
		}
		return "ok"
	}
	bad := chat("q")
	bad.MaxTokens = 0
	got := []string{
		check(chat("a")),
		check(bad),       // rejected ...
		check(chat("q")), // ... so q is still free
		check(chat("q")),
		check(chat("a")),
		check(chat("b")),
	}
	dup := func(id string) string {
		return fmt.Sprintf("workload w returned an invalid request: request %q: id: is not unique: an earlier request of this run has it", id)
	}
	want := []string{"ok", prefix + "max_tokens: must be >= 1, got 0", "ok", dup("q"), dup("a"), "ok"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("checks in order (-want +got):\n%s", d)
	}
	// Another run (another Validator) starts afresh.
	if err := protocol.NewValidator("w").Check(new(chat("a")), known); err != nil {
		t.Errorf("a new validator rejected an id of another run: %v", err)
	}
}

func TestCheckContent(t *testing.T) {
	t.Parallel()
	const cprefix = `workload w returned an invalid request: a request without an id: `
	tests := []struct {
		name string
		c    protocol.Content
		want string
	}{
		{"new", protocol.Content{ID: "new", Text: "text"}, ""},
		{"again with the same text", protocol.Content{ID: "doc", Text: "A document."}, ""},
		{"empty text", protocol.Content{ID: "blank"}, ""},
		{"again with different text", protocol.Content{ID: "doc", Text: "Another document."},
			cprefix + `content "doc": registered again with different text (it would change the requests that use it)`},
		{"no id", protocol.Content{Text: "text"}, cprefix + "content: registered without an id"},
		{"id too long", protocol.Content{ID: strings.Repeat("i", 513), Text: "text"},
			cprefix + fmt.Sprintf("content %q: id longer than 512 bytes", strings.Repeat("i", 513))},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := protocol.NewValidator("w").CheckContent(tc.c, known)
			if tc.want == "" {
				if err != nil {
					t.Errorf("CheckContent = %v, want accepted", err)
				}
				return
			}
			if err == nil || err.Error() != tc.want {
				t.Errorf("CheckContent = %v, want %q", err, tc.want)
			}
		})
	}
	v := protocol.NewValidator("w")
	v.Limits.MaxTextBytes = 3
	if err := v.CheckContent(protocol.Content{ID: "big", Text: "four"}, known); err == nil ||
		err.Error() != cprefix+`content "big": 4 bytes, more than the 3 a request may carry` {
		t.Errorf("CheckContent of content over the limit = %v", err)
	}
}

func TestRequestError(t *testing.T) {
	t.Parallel()
	r := chat("q")
	r.Messages[0].Role = "bot"
	err := protocol.NewValidator("long-doc-qa").Check(&r, known)
	var re *protocol.RequestError
	if !errors.As(err, &re) {
		t.Fatalf("Check = %v (%T), want a *protocol.RequestError", err, err)
	}
	want := &protocol.RequestError{Plugin: "long-doc-qa", RequestID: "q", Field: "messages[0].role",
		Problem: `must be system, user, assistant, tool or developer, got "bot"`}
	if d := cmp.Diff(want, re); d != "" {
		t.Errorf("RequestError (-want +got):\n%s", d)
	}
}
