package main

import (
	"context"
	"testing"

	"github.com/lmbench/lmbench/sdk/sdktest"
	"github.com/lmbench/lmbench/sdk/subword"
	"github.com/lmbench/lmbench/sdk/workload"
)

var small = map[string]any{"sessions": 4, "concurrency": 2}

func TestContract(t *testing.T) {
	sdktest.CheckWorkload(t, Definition, sdktest.Options{Options: small, Tokens: &sdktest.FakeTokenizer{}})
}

// Every request offers the tool and carries the call and its answer.
func TestTurnsCallTheTool(t *testing.T) {
	tr := sdktest.Run(t, Definition, sdktest.Options{Options: small})
	if got := len(tr.Measured()); got != 4 {
		t.Fatalf("sent %d turns, want 4", got)
	}
	for _, s := range tr.Measured() {
		if len(s.Tools) != 1 || s.Tools[0].Name != "get_weather" || len(s.Messages) != 4 {
			t.Fatalf("%s: tools %v, %d messages", s.ID, s.Tools, len(s.Messages))
		}
		call, reply := s.Messages[2], s.Messages[3]
		if len(call.ToolCalls) != 1 || reply.Role != "tool" || reply.ToolCallID != call.ToolCalls[0].ID {
			t.Errorf("%s: call %+v, reply %+v", s.ID, call, reply)
		}
	}
}

// The stated prompt tokens count the tools and the tool call, as the
// host's tokenizer renders them (sdktest's fake follows lmbench sim's
// subword rule).
func TestStatesPromptTokensWithTools(t *testing.T) {
	env := workload.Env{Content: workload.NewRegistry(), Context: context.Background(),
		Tokenizer: workload.NewTokenizer(&sdktest.FakeTokenizer{})}
	w, err := newToolUse(Options{Sessions: 1, Concurrency: 1, MaxTokens: 8}, env)
	if err != nil {
		t.Fatal(err)
	}
	got := w.(*toolUse).reqs[0].PromptTokens
	want := subword.ChatTokens("You are a weather desk. Answer in one sentence.", "What is the weather in Oslo right now?",
		"", `{"sky": "clear", "celsius": 21}`) +
		subword.ToolCallTokens("get_weather", `{"city": "Oslo"}`) +
		subword.PerMessage + subword.ToolTokens(weather.Name, weather.Description, weather.Parameters)
	if got != want {
		t.Errorf("stated %d prompt tokens, want %d", got, want)
	}
}
