package workload

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/lmbench/lmbench/sdk/protocol"
)

// TokenChat is one chat request's messages as text, for counting.
type TokenChat = protocol.Chat

// TokenMessage is one message of a TokenChat.
type TokenMessage = protocol.ChatMessage

// Tokenizer counts tokens with the served model's tokenizer, through the
// host (capability protocol.Tokenizer): the engine's /tokenize or a local
// tokenizer.json, cached host-side. Env.Tokenizer is nil when the host has
// none (--tokenizer words, or an lmbench older than protocol minor 2):
// lengths are then in whitespace words, as in the original tool.
//
// Count while preparing (in New): each call is a round trip to the host
// and, through it, to the engine.
type Tokenizer struct {
	c protocol.TokenCounter
	// tools: the host counts tools and tool calls (protocol.TokenizeTools).
	tools bool
}

// NewTokenizer wraps a protocol.TokenCounter that counts chats with tools
// and tool calls (sdktest's fake does). The SDK's server builds Env's
// itself, knowing what the host counts.
func NewTokenizer(c protocol.TokenCounter) *Tokenizer { return &Tokenizer{c: c, tools: true} }

// hostTokenizer is Env.Tokenizer: tools says whether the host announced
// protocol.TokenizeTools.
func hostTokenizer(c protocol.TokenCounter, tools bool) *Tokenizer {
	return &Tokenizer{c: c, tools: tools}
}

// queryBytes bounds the text of one query, well under the message limit.
const queryBytes = 4 << 20

// Count returns the tokens of each text, without special tokens: what
// the text adds to a prompt. Large batches go out as several queries.
func (t *Tokenizer) Count(ctx context.Context, texts ...string) ([]int, error) {
	out := make([]int, 0, len(texts))
	for start := 0; start < len(texts); {
		end, size := start, 0
		for end < len(texts) && (end == start || size+len(texts[end]) <= queryBytes) {
			size += len(texts[end])
			end++
		}
		c, err := t.c.CountTokens(ctx, protocol.TokenQuery{Texts: texts[start:end]})
		if err != nil {
			return nil, err
		}
		out = append(out, c.Texts...)
		start = end
	}
	return out, nil
}

// CountChats returns the tokens of each chat as the engine renders the
// request: the chat template with the generation prompt, the whole prompt,
// the request's tools and its messages' tool calls included (build a
// request's chat with ChatOf). A host older than protocol minor 7 counts
// only messages' text: there a chat with tools or tool calls is an error,
// not a count short of what the engine reports.
func (t *Tokenizer) CountChats(ctx context.Context, chats ...TokenChat) ([]int, error) {
	if !t.tools {
		for i, c := range chats {
			if c.HasTools() {
				return nil, fmt.Errorf("counting chat %d: it has tools or tool calls, and this lmbench counts only messages' text "+
					"(it lacks capability %q, protocol minor 7): upgrade lmbench, or leave this request's prompt tokens unstated",
					i, protocol.TokenizeTools)
			}
		}
	}
	out := make([]int, 0, len(chats))
	for start := 0; start < len(chats); {
		end, size := start, 0
		for end < len(chats) && (end == start || size+chatBytes(chats[end]) <= queryBytes) {
			size += chatBytes(chats[end])
			end++
		}
		c, err := t.c.CountTokens(ctx, protocol.TokenQuery{Chats: chats[start:end]})
		if err != nil {
			return nil, err
		}
		out = append(out, c.Chats...)
		start = end
	}
	return out, nil
}

func chatBytes(c TokenChat) int {
	n := 0
	for _, m := range c.Messages {
		n += len(m.Role) + len(m.Content) + len(m.ToolCallID)
		for _, tc := range m.ToolCalls {
			n += len(tc.ID) + len(tc.Name) + len(tc.Arguments)
		}
	}
	for _, t := range c.Tools {
		n += len(t.Name) + len(t.Description) + len(t.Parameters)
	}
	return n
}

// ChatOf is chat request r as the engine receives it, for CountChats:
// each message's segments joined, references looked up in reg (the
// Env.Content they were registered in), with its tool calls and call id,
// and the request's tools. A reference reg does not hold is an error
// naming it; a completions request is an error too.
func ChatOf(reg *Registry, r Request) (TokenChat, error) {
	if r.Completion {
		return TokenChat{}, fmt.Errorf("request %q: a completions request has no chat (count its prompt with Count)", r.ID)
	}
	c := TokenChat{Messages: make([]TokenMessage, len(r.Messages)), Tools: r.Tools}
	for i, m := range r.Messages {
		var b strings.Builder
		for _, s := range m.Content {
			if s.Ref == "" {
				b.WriteString(s.Text)
				continue
			}
			text, ok := reg.Lookup(s.Ref)
			if !ok {
				return TokenChat{}, fmt.Errorf("request %q: message %d references content %q, which is not registered", r.ID, i, s.Ref)
			}
			b.WriteString(text)
		}
		c.Messages[i] = TokenMessage{Role: m.Role, Content: b.String(), ToolCalls: m.ToolCalls, ToolCallID: m.ToolCallID}
	}
	return c, nil
}

// OneTokenWords probes candidates and returns, in order, those that cost
// exactly one token alone and two when doubled ("w w"), then checks that
// text of them joined by spaces costs one token per word. Build exact
// lengths from them with ExactTexts. It fails when no candidate qualifies.
func (t *Tokenizer) OneTokenWords(ctx context.Context, candidates []string) ([]string, error) {
	probes := make([]string, 0, 2*len(candidates))
	for _, c := range candidates {
		probes = append(probes, c, c+" "+c)
	}
	counts, err := t.Count(ctx, probes...)
	if err != nil {
		return nil, fmt.Errorf("probing one-token words: %w", err)
	}
	var words []string
	for i, c := range candidates {
		if counts[2*i] == 1 && counts[2*i+1] == 2 && strings.TrimSpace(c) == c && c != "" {
			words = append(words, c)
		}
	}
	if len(words) == 0 {
		return nil, fmt.Errorf("probing one-token words: none of the %d candidates (%s…) costs exactly one token for this model",
			len(candidates), strings.Join(candidates[:min(len(candidates), 3)], ", "))
	}
	// Joined, the words must stay additive (no merges across spaces).
	sample := cycle(words, 0, max(64, 2*len(words)))
	got, err := t.Count(ctx, strings.Join(sample, " "))
	if err != nil {
		return nil, fmt.Errorf("probing one-token words: %w", err)
	}
	if got[0] != len(sample) {
		return nil, fmt.Errorf("probing one-token words: %d one-token words joined by spaces cost %d tokens, not one each: "+
			"this tokenizer merges across words", len(sample), got[0])
	}
	return words, nil
}

// exactRounds bounds the count-and-adjust rounds of ExactTexts.
const exactRounds = 8

// ExactTexts returns, for each prefix, the prefix followed by words from
// vocab (cycled, joined by spaces, after a space) such that the whole text
// costs exactly n tokens by Count; a prefix of "" gives words only. vocab
// should come from OneTokenWords. Every text's count is checked; one that
// cannot be made exact (the prefix alone costs more than n, or the counts
// do not settle) is an error naming it.
//
// Only one prefix of each byte length is counted alone: the others start
// from its count (numbered headers of one width mostly cost the same),
// and the check of the whole text corrects the few that differ. A text
// costs one count when the guess holds, where counting every prefix cost
// two.
func (t *Tokenizer) ExactTexts(ctx context.Context, prefixes []string, vocab []string, n int) ([]string, error) {
	if len(vocab) == 0 {
		return nil, errors.New("exact texts: empty vocabulary")
	}
	if n < 1 {
		return nil, fmt.Errorf("exact texts: length must be >= 1, got %d", n)
	}
	base, err := t.guessBases(ctx, prefixes)
	if err != nil {
		return nil, fmt.Errorf("exact texts: %w", err)
	}
	words := make([]int, len(prefixes)) // filler words per text
	for i, p := range prefixes {
		if base[i] > n {
			if err := t.prefixTooLong(ctx, p, n); err != nil {
				return nil, err
			}
			base[i] = n // a guess from a longer sibling: the check corrects it
		}
		words[i] = n - base[i]
	}
	texts := make([]string, len(prefixes))
	todo := make([]int, len(prefixes))
	for i := range todo {
		todo[i] = i
	}
	for range exactRounds {
		batch := make([]string, len(todo))
		for k, i := range todo {
			texts[i] = joinFiller(prefixes[i], vocab, words[i])
			batch[k] = texts[i]
		}
		counts, err := t.Count(ctx, batch...)
		if err != nil {
			return nil, fmt.Errorf("exact texts: %w", err)
		}
		var next []int
		for k, i := range todo {
			if d := n - counts[k]; d != 0 {
				if words[i]+d < 0 {
					if err := t.prefixTooLong(ctx, prefixes[i], n); err != nil {
						return nil, err
					}
					return nil, fmt.Errorf("exact texts: %q cannot be cut to %d tokens (%d with no filler)", clip(prefixes[i]), n, counts[k]-words[i])
				}
				words[i] += d
				next = append(next, i)
			}
		}
		if len(next) == 0 {
			return texts, nil
		}
		todo = next
	}
	return nil, fmt.Errorf("exact texts: %d of %d texts (the first with prefix %q) did not settle on %d tokens in %d rounds",
		len(todo), len(prefixes), clip(prefixes[todo[0]]), n, exactRounds)
}

// guessBases counts the first prefix of each byte length alone and gives
// every prefix its length's count ("" costs 0).
func (t *Tokenizer) guessBases(ctx context.Context, prefixes []string) ([]int, error) {
	first := map[int]int{} // byte length -> index into probes
	var probes []string
	for _, p := range prefixes {
		if _, ok := first[len(p)]; !ok && p != "" {
			first[len(p)] = len(probes)
			probes = append(probes, p)
		}
	}
	counts, err := t.Count(ctx, probes...)
	if err != nil {
		return nil, err
	}
	base := make([]int, len(prefixes))
	for i, p := range prefixes {
		if p != "" {
			base[i] = counts[first[len(p)]]
		}
	}
	return base, nil
}

// prefixTooLong counts prefix alone: the error when it costs more than n.
func (t *Tokenizer) prefixTooLong(ctx context.Context, prefix string, n int) error {
	c, err := t.Count(ctx, prefix)
	if err != nil {
		return fmt.Errorf("exact texts: %w", err)
	}
	if c[0] > n {
		return fmt.Errorf("exact texts: the prefix %q alone costs %d tokens, more than %d", clip(prefix), c[0], n)
	}
	return nil
}

// FitTexts makes texts of exactly n tokens from texts that grow with k
// (grow[i](k): e.g. a header and k seeded pseudo-words): for each, as many
// k as stay at or under n (estimated from the first text's tokens per
// word, then cut where a text came out long), topped up with fill (words
// from OneTokenWords) by ExactTexts. It keeps a text's own words while
// making its length exact.
func (t *Tokenizer) FitTexts(ctx context.Context, grow []func(k int) string, fill []string, n int) ([]string, error) {
	if len(grow) == 0 {
		return nil, nil
	}
	sample := grow[0](200)
	c, err := t.Count(ctx, sample)
	if err != nil {
		return nil, fmt.Errorf("fit texts: %w", err)
	}
	perWord := max(float64(c[0])/float64(max(len(strings.Fields(sample)), 1)), 1)
	k := make([]int, len(grow))
	for i := range k {
		k[i] = max(int(0.9*float64(n)/perWord)-2, 1)
	}
	bases := make([]string, len(grow))
	todo := make([]int, len(grow))
	for i := range todo {
		todo[i] = i
	}
	for range exactRounds {
		batch := make([]string, len(todo))
		for j, i := range todo {
			bases[i] = grow[i](k[i])
			batch[j] = bases[i]
		}
		counts, err := t.Count(ctx, batch...)
		if err != nil {
			return nil, fmt.Errorf("fit texts: %w", err)
		}
		var over []int
		for j, i := range todo {
			if counts[j] > n {
				if k[i] <= 1 {
					return nil, fmt.Errorf("fit texts: %q with one word costs %d tokens, more than %d", clip(bases[i]), counts[j], n)
				}
				k[i] = max(k[i]-int(float64(counts[j]-n)/perWord)-1, 1)
				over = append(over, i)
			}
		}
		if len(over) == 0 {
			return t.ExactTexts(ctx, bases, fill, n)
		}
		todo = over
	}
	return nil, fmt.Errorf("fit texts: %d of %d texts did not fit in %d tokens in %d rounds", len(todo), len(grow), n, exactRounds)
}

// joinFiller is prefix, a space, and k words of vocab cycled.
func joinFiller(prefix string, vocab []string, k int) string {
	var b strings.Builder
	b.WriteString(prefix)
	for j := range k {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(vocab[j%len(vocab)])
	}
	return b.String()
}

func cycle(words []string, from, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = words[(from+i)%len(words)]
	}
	return out
}

func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}
