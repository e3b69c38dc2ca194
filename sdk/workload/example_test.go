package workload_test

import (
	"fmt"
	"time"

	"github.com/lmbench/lmbench/sdk/workload"
)

// Step returns a StepOutput: the requests to send now, then when to be
// called again.
func ExampleSend() {
	q := func(i int) workload.Request {
		return workload.Chat(fmt.Sprintf("q%d", i), workload.User(workload.Text("Hello?")))
	}
	fmt.Println(workload.Send(q(0), q(1)))                          // call again at once
	fmt.Println(workload.Send(q(2)).WakeAt(500 * time.Millisecond)) // at a phase offset
	fmt.Println(workload.Send(q(3)).WaitForFinish())                // when any request finishes
	fmt.Println(workload.Send().WaitForFinishOr(2 * time.Second))   // whichever comes first
	fmt.Println(workload.Send(q(4)).Done())                         // no more requests this phase
	fmt.Println(workload.Done())                                    // shorthand for Send().Done()
	// Output:
	// send [q0 q1], then step again now
	// send [q2], then wake at 500ms
	// send [q3], then wait for a finish
	// send [], then wait for a finish or 2s
	// send [q4], then done
	// send [], then done
}

// Long text is registered once and referenced by many requests; it
// crosses the process boundary once, with the next Step response.
// Released once no later request needs it, it is forgotten here and in
// the host, so a long run's memory stays flat.
func ExampleRegistry() {
	reg := workload.NewRegistry() // Env.Content in a real workload
	doc := reg.Register("doc0", "A very long document ...")
	reg.Register("doc0", "A very long document ...") // same text again: no-op

	for q := range 2 {
		r := workload.Chat(fmt.Sprintf("doc0_q%d", q),
			workload.User(doc, workload.Text(fmt.Sprintf(" Question %d?", q))))
		segs := r.Messages[0].Content
		fmt.Printf("%s: content %q, then %q\n", r.ID, segs[0].Ref, segs[1].Text)
	}
	fmt.Println("registered:", reg.Len())
	reg.Release("doc0") // no later request references it
	fmt.Println("after release:", reg.Len())
	// Output:
	// doc0_q0: content "doc0", then " Question 0?"
	// doc0_q1: content "doc0", then " Question 1?"
	// registered: 1
	// after release: 0
}

// A conversation with function calling: the assistant's turn calls a tool,
// the tool's answer follows, and the request offers the tools.
func ExampleAssistantCalls() {
	weather := workload.Tool{
		Name:        "get_weather",
		Description: "The weather in a city.",
		Parameters:  `{"type":"object","properties":{"city":{"type":"string"}}}`,
	}
	call := workload.ToolCall{ID: "call_0", Name: "get_weather", Arguments: `{"city":"Paris"}`}
	r := workload.Chat("s0_turn1",
		workload.User(workload.Text("Weather in Paris?")),
		workload.AssistantCalls([]workload.ToolCall{call}),
		workload.ToolReply("call_0", workload.Text(`{"temp_c":21}`)),
	).WithTools(weather)
	for _, m := range r.Messages {
		fmt.Printf("%s: %d tool calls, answers %q\n", m.Role, len(m.ToolCalls), m.ToolCallID)
	}
	fmt.Println(r.Tools[0].Name)
	// Output:
	// user: 0 tool calls, answers ""
	// assistant: 1 tool calls, answers ""
	// tool: 0 tool calls, answers "call_0"
	// get_weather
}

// Requests are values: each builder method returns a modified copy.
func ExampleChat() {
	base := workload.Chat("doc3_q1",
		workload.System(workload.Text("Answer briefly.")),
		workload.User(workload.Text("What is KV caching?")),
	).Tag("doc", "3")
	r := base.WithMaxTokens(32).Tag("query", "1").At(1500 * time.Millisecond)

	fmt.Println(base.MaxTokens, base.Tags)
	fmt.Println(r.MaxTokens, r.Tags, r.Scheduled)
	// Output:
	// 128 map[doc:3]
	// 32 map[doc:3 query:1] 1.5s
}
