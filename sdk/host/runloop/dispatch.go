package runloop

import (
	"container/heap"
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/lmbench/lmbench/sdk/protocol"
)

// held is a request waiting until fewer than limit are in flight (0: no
// limit).
type held struct {
	out   *Outgoing
	limit int
}

// timed holds requests until they are due: a min-heap on the due time,
// in the order handed over among equal times. One timer (the transport's
// Wait deadline) serves them all.
type timed []timedReq

type timedReq struct {
	held
	seq int64
}

func (h timed) Len() int { return len(h) }
func (h timed) Less(i, j int) bool {
	if !h[i].out.Due.Equal(h[j].out.Due) {
		return h[i].out.Due.Before(h[j].out.Due)
	}
	return h[i].seq < h[j].seq
}
func (h timed) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *timed) Push(x any)   { *h = append(*h, x.(timedReq)) }
func (h *timed) Pop() any {
	old := *h
	x := old[len(old)-1]
	old[len(old)-1] = timedReq{}
	*h = old[:len(old)-1]
	return x
}

// dispatch registers the response's content, checks and resolves its
// requests, sends them (or holds them for a slot), then drops released
// content. It returns how many were sent; on an invalid request the ones
// before it still go.
func (l *loop[M]) dispatch(ph protocol.Phase, start time.Time, due time.Duration, outstanding int, resp *protocol.StepResponse) (int, error) {
	for _, c := range resp.Contents {
		if err := l.check.CheckContent(c, l.known); err != nil {
			return 0, fmt.Errorf("%s phase: %w", ph, err)
		}
		l.content[c.ID] = c.Text
	}
	sent := 0
	for i := range resp.Requests {
		r := &resp.Requests[i]
		if err := l.check.Check(r, l.known); err != nil {
			return sent, fmt.Errorf("%s phase: %w", ph, err)
		}
		out := l.resolve(ph, r)
		out.Due, out.Explicit = start.Add(due), r.HasScheduled
		if r.HasScheduled {
			out.Due = start.Add(r.Scheduled)
		}
		h := held{out: out, limit: l.limit(r.MaxInFlight)}
		if r.HasScheduled && out.Due.After(l.cfg.Transport.Now()) {
			// Handed over ahead: it goes out when due, with no Step in
			// between.
			l.timedSeq++
			heap.Push(&l.timed, timedReq{held: h, seq: l.timedSeq})
			continue
		}
		if l.hold(h, outstanding+sent) {
			continue
		}
		l.send(out)
		sent++
	}
	for _, id := range resp.Released {
		delete(l.content, id)
	}
	return sent, nil
}

// sendDuringStep sends, on a second goroutine, the requests handed over
// ahead that fall due before the returned function is called (once the
// Step is back); it returns how many were sent. It stops at one that
// waits for a slot: what frees it is a finish, which the loop handles.
// Without a Sleeper transport it does nothing.
func (l *loop[M]) sendDuringStep() func() int {
	sl, ok := l.cfg.Transport.(Sleeper)
	if !ok || len(l.timed) == 0 || l.timed[0].limit > 0 {
		return func() int { return 0 }
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() {
		n := 0
		defer func() { done <- n }()
		for len(l.timed) > 0 && l.timed[0].limit <= 0 {
			due := l.timed[0].out.Due
			if !sl.SleepUntil(ctx, due) {
				return
			}
			l.send(heap.Pop(&l.timed).(timedReq).out)
			n++
		}
	}()
	return func() int {
		cancel()
		return <-done
	}
}

// limit is the in-flight limit of a request with MaxInFlight m: the
// tighter of m and the run's MaxConcurrency (0: none).
func (l *loop[M]) limit(m int) int {
	c := l.cfg.MaxConcurrency
	switch {
	case m <= 0:
		return max(c, 0)
	case c > 0:
		return min(m, c)
	}
	return m
}

// hold queues h for a slot when it must wait: its limit is reached, or
// requests before it are already waiting (order is kept). A request with
// no limit never waits.
func (l *loop[M]) hold(h held, inFlight int) bool {
	if h.limit > 0 && (len(l.held) > 0 || inFlight >= h.limit) {
		l.held = append(l.held, h)
		return true
	}
	return false
}

// releaseDue sends the requests handed over ahead that are due by now (or
// queues them for a slot); it returns how many were sent.
func (l *loop[M]) releaseDue(outstanding int) int {
	if len(l.timed) == 0 {
		return 0
	}
	now := l.cfg.Transport.Now()
	n := 0
	for len(l.timed) > 0 && !l.timed[0].out.Due.After(now) {
		h := heap.Pop(&l.timed).(timedReq).held
		if l.hold(h, outstanding+n) {
			continue
		}
		l.send(h.out)
		n++
	}
	return n
}

func (l *loop[M]) send(out *Outgoing) {
	if l.cfg.Observer != nil {
		l.cfg.Observer.Sent(out)
	}
	l.cfg.Transport.Send(out)
}

// release sends held requests, in order, while slots are free; a request
// with no schedule of its own counts as due now, when its slot freed.
func (l *loop[M]) release(outstanding int) int {
	n := 0
	for len(l.held) > 0 && outstanding+n < l.held[0].limit {
		out := l.held[0].out
		if !out.Explicit {
			out.Due = l.cfg.Transport.Now()
		}
		l.held = l.held[1:]
		l.send(out)
		n++
	}
	if len(l.held) == 0 {
		l.held = nil
	}
	return n
}

// resolve builds the outgoing request; Check has vouched for every reference.
func (l *loop[M]) resolve(ph protocol.Phase, r *protocol.Request) *Outgoing {
	out := &Outgoing{Phase: ph, ID: r.ID, MaxTokens: r.MaxTokens, Tags: r.Tags, Completion: r.Completion, Tools: r.Tools,
		ExpectedCachedTokens: r.ExpectedCachedTokens, HasExpectedCached: r.HasExpectedCached, TargetTier: r.TargetTier,
		PromptTokens: r.PromptTokens, IgnoreEOS: r.IgnoreEOS}
	if r.Completion {
		out.Prompt = l.text(r.Prompt)
		return out
	}
	out.Messages = make([]Message, len(r.Messages))
	for i, m := range r.Messages {
		out.Messages[i] = Message{Role: m.Role, Content: l.text(m.Content), ToolCalls: m.ToolCalls, ToolCallID: m.ToolCallID}
	}
	return out
}

func (l *loop[M]) text(segs []protocol.Segment) string {
	if len(segs) == 1 {
		if segs[0].Ref == "" {
			return segs[0].Text
		}
		return l.content[segs[0].Ref]
	}
	n := 0
	for _, s := range segs {
		if s.Ref != "" {
			n += len(l.content[s.Ref])
		} else {
			n += len(s.Text)
		}
	}
	var b strings.Builder
	b.Grow(n)
	for _, s := range segs {
		if s.Ref != "" {
			b.WriteString(l.content[s.Ref])
		} else {
			b.WriteString(s.Text)
		}
	}
	return b.String()
}
