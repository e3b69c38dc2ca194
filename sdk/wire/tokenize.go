package wire

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"google.golang.org/grpc"

	workloadv1 "github.com/lmbench/lmbench/sdk/proto/lmbench/workload/v1"
	"github.com/lmbench/lmbench/sdk/protocol"
)

// The tokenizer service (capability Tokenizer) runs plugin -> host, the
// wrong way for gRPC, where the plugin serves and the host calls. Rather
// than go-plugin's GRPCBroker (a second listener per callback, an id
// handshake, dial timeouts, multiplexing to opt into on both sides) the
// host opens one bidirectional stream, Tokenize, on the connection it
// already has: the plugin sends queries down it whenever it needs counts
// and the host sends the answers back. Any gRPC implementation can serve
// it, and the in-process path (sdktest) passes the Go counter directly.

// --- conversions ---

func toTokenizeQuery(id uint64, q protocol.TokenQuery) *workloadv1.TokenizeQuery {
	out := &workloadv1.TokenizeQuery{Id: id, Texts: q.Texts}
	for _, c := range q.Chats {
		tc := &workloadv1.TokenizeChat{Messages: make([]*workloadv1.TokenizeMessage, len(c.Messages))}
		for i, m := range c.Messages {
			tc.Messages[i] = &workloadv1.TokenizeMessage{Role: m.Role, Content: m.Content,
				ToolCalls: toToolCalls(m.ToolCalls), ToolCallId: m.ToolCallID}
		}
		for _, t := range c.Tools {
			tc.Tools = append(tc.Tools, &workloadv1.Tool{Name: t.Name, Description: t.Description, ParametersJson: t.Parameters})
		}
		out.Chats = append(out.Chats, tc)
	}
	return out
}

func fromTokenizeQuery(m *workloadv1.TokenizeQuery) protocol.TokenQuery {
	q := protocol.TokenQuery{Texts: m.GetTexts()}
	for _, c := range m.GetChats() {
		ch := protocol.Chat{Messages: make([]protocol.ChatMessage, len(c.GetMessages()))}
		for i, msg := range c.GetMessages() {
			ch.Messages[i] = protocol.ChatMessage{Role: msg.GetRole(), Content: msg.GetContent(),
				ToolCalls: fromToolCalls(msg.GetToolCalls()), ToolCallID: msg.GetToolCallId()}
		}
		for _, t := range c.GetTools() {
			ch.Tools = append(ch.Tools, protocol.Tool{Name: t.GetName(), Description: t.GetDescription(), Parameters: t.GetParametersJson()})
		}
		q.Chats = append(q.Chats, ch)
	}
	return q
}

func toTokenizeAnswer(id uint64, c protocol.TokenCounts, err error) *workloadv1.TokenizeAnswer {
	if err != nil {
		return &workloadv1.TokenizeAnswer{Id: id, Error: err.Error()}
	}
	return &workloadv1.TokenizeAnswer{Id: id, Texts: toInt64s(c.Texts), Chats: toInt64s(c.Chats)}
}

// fromTokenizeAnswer reads the answer to q, checking it answers every
// text and chat.
func fromTokenizeAnswer(a *workloadv1.TokenizeAnswer, q protocol.TokenQuery) (protocol.TokenCounts, error) {
	if a.GetError() != "" {
		return protocol.TokenCounts{}, errors.New(a.GetError())
	}
	c := protocol.TokenCounts{Texts: fromInt64s(a.GetTexts()), Chats: fromInt64s(a.GetChats())}
	if len(c.Texts) != len(q.Texts) || len(c.Chats) != len(q.Chats) {
		return protocol.TokenCounts{}, fmt.Errorf("the host answered %d text and %d chat counts for %d texts and %d chats",
			len(c.Texts), len(c.Chats), len(q.Texts), len(q.Chats))
	}
	return c, nil
}

func toInt64s(v []int) []int64 {
	if v == nil {
		return nil
	}
	out := make([]int64, len(v))
	for i, x := range v {
		out[i] = int64(x)
	}
	return out
}

func fromInt64s(v []int64) []int {
	if v == nil {
		return nil
	}
	out := make([]int, len(v))
	for i, x := range v {
		out[i] = int(x)
	}
	return out
}

// --- host side ---

// tokenRelay answers a plugin's Tokenize stream from the counter of the
// latest Configure. The stream is opened once, with the first Configure
// that has a counter, and ends with the connection.
type tokenRelay struct {
	mu      sync.Mutex
	counter protocol.TokenCounter
	open    bool
}

func (r *tokenRelay) start(c workloadv1.WorkloadServiceClient, counter protocol.TokenCounter) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.counter = counter
	if r.open {
		return nil
	}
	stream, err := c.Tokenize(context.Background())
	if err != nil {
		return fmt.Errorf("opening the tokenizer stream: %w", err)
	}
	r.open = true
	go r.serve(stream)
	return nil
}

// serve answers queries one at a time, in order, until the stream ends.
func (r *tokenRelay) serve(stream grpc.BidiStreamingClient[workloadv1.TokenizeAnswer, workloadv1.TokenizeQuery]) {
	for {
		q, err := stream.Recv()
		if err != nil {
			r.mu.Lock()
			r.open = false
			r.mu.Unlock()
			return
		}
		r.mu.Lock()
		counter := r.counter
		r.mu.Unlock()
		counts, err := counter.CountTokens(stream.Context(), fromTokenizeQuery(q))
		if err := stream.Send(toTokenizeAnswer(q.GetId(), counts, err)); err != nil {
			return
		}
	}
}

// --- plugin side ---

// streamTokens is the TokenCounter a plugin's Configure gets over gRPC: it
// sends each query down the host's Tokenize stream and waits for the
// answer with its id.
type streamTokens struct {
	queries chan *workloadv1.TokenizeQuery // taken by the attached stream

	mu      sync.Mutex
	next    uint64
	pending map[uint64]chan *workloadv1.TokenizeAnswer
}

func newStreamTokens() *streamTokens {
	return &streamTokens{queries: make(chan *workloadv1.TokenizeQuery), pending: map[uint64]chan *workloadv1.TokenizeAnswer{}}
}

func (t *streamTokens) CountTokens(ctx context.Context, q protocol.TokenQuery) (protocol.TokenCounts, error) {
	if len(q.Texts) == 0 && len(q.Chats) == 0 {
		return protocol.TokenCounts{}, nil
	}
	ch := make(chan *workloadv1.TokenizeAnswer, 1)
	t.mu.Lock()
	t.next++
	id := t.next
	t.pending[id] = ch
	t.mu.Unlock()
	defer func() {
		t.mu.Lock()
		delete(t.pending, id)
		t.mu.Unlock()
	}()
	select {
	case t.queries <- toTokenizeQuery(id, q):
	case <-ctx.Done():
		return protocol.TokenCounts{}, fmt.Errorf("tokenizer: the host did not take the query: %w", ctx.Err())
	}
	select {
	case a := <-ch:
		c, err := fromTokenizeAnswer(a, q)
		if err != nil {
			return protocol.TokenCounts{}, fmt.Errorf("tokenizer: %w", err)
		}
		return c, nil
	case <-ctx.Done():
		return protocol.TokenCounts{}, fmt.Errorf("tokenizer: no answer from the host: %w", ctx.Err())
	}
}

// serve is the plugin's end of one Tokenize stream: queries go out as
// CountTokens makes them, answers come back to their callers. When the
// stream ends every query waiting on it fails.
func (t *streamTokens) serve(stream grpc.BidiStreamingServer[workloadv1.TokenizeAnswer, workloadv1.TokenizeQuery]) error {
	errc := make(chan error, 1)
	go func() {
		for {
			a, err := stream.Recv()
			if err != nil {
				errc <- err
				return
			}
			t.mu.Lock()
			ch := t.pending[a.GetId()]
			t.mu.Unlock()
			if ch != nil {
				ch <- a // buffered, and each id is answered once
			}
		}
	}()
	var err error
	for err == nil {
		select {
		case q := <-t.queries:
			if serr := stream.Send(q); serr != nil {
				t.answer(q.GetId(), serr)
				err = serr
			}
		case err = <-errc:
		case <-stream.Context().Done():
			err = stream.Context().Err()
		}
	}
	t.failPending(err)
	if errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

func (t *streamTokens) answer(id uint64, err error) {
	t.mu.Lock()
	ch := t.pending[id]
	t.mu.Unlock()
	if ch != nil {
		select {
		case ch <- &workloadv1.TokenizeAnswer{Id: id, Error: "the tokenizer stream ended: " + err.Error()}:
		default:
		}
	}
}

func (t *streamTokens) failPending(err error) {
	t.mu.Lock()
	ids := make([]uint64, 0, len(t.pending))
	for id := range t.pending {
		ids = append(ids, id)
	}
	t.mu.Unlock()
	for _, id := range ids {
		t.answer(id, err)
	}
}
