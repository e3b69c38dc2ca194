// Command lmbench-workload-tool-use replays agent turns that call a tool:
// each request offers the tools, carries a user's question, the
// assistant's call and the tool's answer, and asks for the final reply.
// With a host tokenizer it states each prompt's exact tokens, the tools
// and tool calls included, so the summary holds them to the engine's
// usage.prompt_tokens.
package main

import (
	"context"
	"fmt"
	"strconv"

	"github.com/lmbench/lmbench/sdk/workload"
)

// Options become --tu-sessions, --tu-concurrency and --tu-max-tokens.
type Options struct {
	Sessions    int `opt:"sessions" label:"Sessions" help:"Agent turns to send, one request each." min:"1"`
	Concurrency int `opt:"concurrency" label:"Concurrency" help:"Turns in flight at once." min:"1"`
	MaxTokens   int `opt:"max-tokens" label:"Max output tokens" help:"max_tokens of each final reply." min:"1"`
}

var Definition = workload.Definition[Options]{
	Name:         "tool-use",
	Prefix:       "tu",
	Summary:      "Agent turns that call a tool, prompts stated in the engine's tokens",
	Version:      "0.1.0",
	TagKeys:      []string{"city"},
	Defaults:     Options{Sessions: 8, Concurrency: 2, MaxTokens: 32},
	CountsTokens: true,
	New:          newToolUse,
}

// weather is the one tool every request offers.
var weather = workload.Tool{
	Name:        "get_weather",
	Description: "Current weather for a city",
	Parameters:  `{"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}`,
}

var cities = []string{"Oslo", "Lima", "Accra", "Hanoi", "Perth"}

type toolUse struct {
	o    Options
	reqs []workload.Request
	next int
}

func newToolUse(o Options, env workload.Env) (workload.Workload, error) {
	system := env.Content.Register("system", "You are a weather desk. Answer in one sentence.")
	w := &toolUse{o: o}
	for i := range o.Sessions {
		w.reqs = append(w.reqs, turn(i, system))
	}
	if env.Tokenizer != nil { // nil: lengths are in words, nothing to state
		if err := w.statePromptTokens(env.Context, env); err != nil {
			return nil, err
		}
	}
	return w, nil
}

// turn is session i's request: the question, the assistant's call of
// get_weather, the tool's answer, and the tools on offer.
func turn(i int, system workload.Segment) workload.Request {
	city := cities[i%len(cities)]
	callID := "call-" + strconv.Itoa(i)
	return workload.Chat("turn"+strconv.Itoa(i),
		workload.System(system),
		workload.User(workload.Text("What is the weather in "+city+" right now?")),
		workload.AssistantCalls([]workload.ToolCall{{
			ID: callID, Name: weather.Name, Arguments: fmt.Sprintf(`{"city": %q}`, city),
		}}),
		workload.ToolReply(callID, workload.Text(`{"sky": "clear", "celsius": 21}`)),
	).WithTools(weather).Tag("city", city)
}

// statePromptTokens counts every request as the engine renders it (the
// chat template with the tools and the tool calls) and states it.
func (w *toolUse) statePromptTokens(ctx context.Context, env workload.Env) error {
	chats := make([]workload.TokenChat, len(w.reqs))
	for i, r := range w.reqs {
		c, err := workload.ChatOf(env.Content, r)
		if err != nil {
			return err
		}
		chats[i] = c
	}
	counts, err := env.Tokenizer.CountChats(ctx, chats...)
	if err != nil {
		return fmt.Errorf("counting prompt tokens: %w", err)
	}
	for i, n := range counts {
		w.reqs[i] = w.reqs[i].WithPromptTokens(n)
	}
	return nil
}

func (w *toolUse) Step(_ context.Context, in workload.StepInput) (workload.StepOutput, error) {
	if in.Phase == workload.Warmup {
		return workload.Done(), nil
	}
	var batch []workload.Request
	for ; w.next < len(w.reqs) && in.InFlight+len(batch) < w.o.Concurrency; w.next++ {
		batch = append(batch, w.reqs[w.next].WithMaxTokens(w.o.MaxTokens))
	}
	if w.next == len(w.reqs) {
		return workload.Send(batch...).Done(), nil
	}
	return workload.Send(batch...).WaitForFinish(), nil
}

func (w *toolUse) OnFinished(context.Context, []workload.Result) error { return nil }

func (w *toolUse) PlannedRequests() int { return w.o.Sessions }

func main() { workload.Serve(Definition) }
