package overhead

import (
	"context"
	"strings"

	"github.com/lmbench/lmbench/sdk/protocol"
	"github.com/lmbench/lmbench/sdk/workload"
)

// replayName names the replay workload in the run loop's errors.
const replayName = "calibrate"

// replayCapabilities are what the replay workload and the host use: its
// results travel in the next Step, and it hands requests over ahead of
// their due times (look-ahead), as the SDK's open-loop workloads do.
var replayCapabilities = protocol.Capabilities{protocol.FinishedInStep, protocol.LookAhead}

// replayWorkload is a recorded schedule as an in-process open-loop
// workload: no warmup; in the measured phase each Step hands over what
// falls due within workload.AheadWindow of its offset, at most
// workload.AheadBatch requests, each scheduled at its offset, and asks
// for the next Step as workload.AheadWake says.
type replayWorkload struct {
	plan  []replayed
	words string // "hi hi …": a prompt of n words is its first 3n-1 bytes
	next  int    // the first request not handed over yet
}

var _ protocol.WorkloadService = (*replayWorkload)(nil)

func newReplayWorkload(plan []replayed) *replayWorkload {
	return &replayWorkload{plan: plan, words: strings.Repeat("hi ", maxWords(plan))}
}

func (w *replayWorkload) Describe(context.Context, protocol.HostInfo) (protocol.WorkloadDescription, error) {
	return protocol.WorkloadDescription{Info: protocol.PluginInfo{Kind: protocol.WorkloadKind, Name: replayName,
		ProtocolMinor: protocol.Minor, Capabilities: replayCapabilities}}, nil
}

func (w *replayWorkload) Configure(context.Context, protocol.WorkloadConfig) (protocol.Configured, error) {
	return protocol.Configured{PlannedRequests: int64(len(w.plan))}, nil
}

func (w *replayWorkload) OnFinished(context.Context, []protocol.Result) error { return nil }

func (w *replayWorkload) Step(_ context.Context, r protocol.StepRequest) (protocol.StepResponse, error) {
	var out protocol.StepResponse
	if r.Phase != protocol.Measure {
		out.Next.Kind = protocol.NextDone
		return out, nil
	}
	for w.next < len(w.plan) && len(out.Requests) < workload.AheadBatch && w.plan[w.next].offset <= r.Offset+workload.AheadWindow {
		out.Requests = append(out.Requests, w.request(w.plan[w.next]))
		w.next++
	}
	switch {
	case w.next == len(w.plan):
		out.Next.Kind = protocol.NextDone
	case len(out.Requests) == workload.AheadBatch: // the rest of the window at once
		out.Next = protocol.Next{Kind: protocol.NextWakeAt, At: r.Offset}
	default:
		out.Next = protocol.Next{Kind: protocol.NextWakeAt, At: workload.AheadWake(workload.AheadWindow, w.plan[w.next].offset, r.Offset)}
	}
	return out, nil
}

// request is p as the workload protocol has it: one user message of
// p.words words, due at p.offset.
func (w *replayWorkload) request(p replayed) protocol.Request {
	return protocol.Request{
		ID: p.id, MaxTokens: p.maxTokens, Scheduled: p.offset, HasScheduled: true,
		Messages: []protocol.Message{{Role: "user", Content: []protocol.Segment{{Text: w.words[:3*p.words-1]}}}},
	}
}

// maxWords is the longest prompt of plan, in words (at least 1).
func maxWords(plan []replayed) int {
	n := 1
	for _, p := range plan {
		n = max(n, p.words)
	}
	return n
}
