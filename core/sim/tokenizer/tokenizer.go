// Package tokenizer is the simulated engine's tokenizer: prompt text and
// chat requests (messages, tools, tool calls, through a ChatML-like
// template) to the simulator's tokens, and tokens back to text, in two
// modes: Words (a token is a whitespace-separated word) and Subword (a word
// costs 1 to 6 tokens, by package sdk/subword's rule). It holds the chat
// request's wire types it reads, in vLLM's JSON shape.
package tokenizer

import (
	"errors"
	"fmt"
	"strings"

	"github.com/lmbench/lmbench/sdk/subword"
)

// Modes (sim.Config.Tokenizer).
const (
	// Words: a token is a whitespace-separated word; chat roles and
	// templates add nothing. The default, and what lmbench's workloads
	// were written against.
	Words = "words"
	// Subword: a word costs 1 to 6 tokens, as pseudo-words do on a real
	// tokenizer, and the chat template adds tokens per message, so the
	// token-exact path is exercised without a GPU.
	Subword = "subword"
)

// Subword tokens (the counting rule is package subword's). A word's first
// piece carries wordMark (SentencePiece's "▁"), so Detokenize can put the
// spaces back.
const (
	wordMark = "▁"
	bosToken = "<|begin_of_text|>"
	imStart  = "<|im_start|>"
	imEnd    = "<|im_end|>"
	// Around a tool call and a tool's definition (subword.PerToolCall,
	// subword.PerTool).
	toolCallStart = "<tool_call>"
	toolCallEnd   = "</tool_call>"
	toolStart     = "<tool>"
	toolEnd       = "</tool>"
)

// CheckMode refuses a mode other than Words and Subword.
func CheckMode(mode string) error {
	switch mode {
	case Words, Subword:
		return nil
	}
	return fmt.Errorf("must be %s or %s, got %q", Words, Subword, mode)
}

// subwordPieces splits word into subword.WordTokens(word) pieces of near-equal
// rune counts, the first marked as a word start.
func subwordPieces(word string) []string {
	k := subword.WordTokens(word)
	runes := []rune(word)
	out := make([]string, 0, k)
	for i := range k {
		lo, hi := i*len(runes)/k, (i+1)*len(runes)/k
		p := string(runes[lo:hi])
		if i == 0 {
			p = wordMark + p
		}
		out = append(out, p)
	}
	return out
}

// Tokenizer turns prompt text into the simulator's tokens, per Mode (Words
// unless it is Subword).
type Tokenizer struct{ Mode string }

// Text is the tokens of a prompt; special adds the BOS token in Subword
// mode, as a real tokenizer's add_special_tokens does.
func (t Tokenizer) Text(s string, special bool) []string {
	if t.Mode != Subword {
		return strings.Fields(s)
	}
	var out []string
	if special {
		out = append(out, bosToken)
	}
	for _, w := range strings.Fields(s) {
		out = append(out, subwordPieces(w)...)
	}
	return out
}

// Chat is the tokens of chat messages through the chat template: in
// Subword mode the tools first, as one system message (<|im_start|>
// system, each tool's <tool> name description parameters </tool>,
// <|im_end|>), then <|im_start|> role content [<tool_call> name
// arguments </tool_call>]… <|im_end|> per message, then <|im_start|>
// assistant when addGeneration (vLLM's chat completions always add it).
// In Words mode a tool and a call are their texts' words. The counts are
// package subword's, so sdktest's fake tokenizer agrees. The error names
// the request field at fault (messages, messages[i].content).
func (t Tokenizer) Chat(messages []Message, tools []Tool, addGeneration bool) ([]string, error) {
	if len(messages) == 0 {
		return nil, errors.New("messages: must be a non-empty list")
	}
	tokens := t.tools(tools)
	for i, m := range messages {
		text, err := messageText(m.Content)
		if err != nil {
			return nil, fmt.Errorf("messages[%d].content: %v", i, err)
		}
		if t.Mode != Subword {
			tokens = append(tokens, strings.Fields(text)...)
			for _, tc := range m.ToolCalls {
				tokens = append(append(tokens, strings.Fields(tc.Function.Name)...), strings.Fields(tc.arguments())...)
			}
			continue
		}
		tokens = append(tokens, imStart, m.Role)
		tokens = append(tokens, t.Text(text, false)...)
		for _, tc := range m.ToolCalls {
			tokens = append(tokens, toolCallStart)
			tokens = append(tokens, t.Text(tc.Function.Name, false)...)
			tokens = append(tokens, t.Text(tc.arguments(), false)...)
			tokens = append(tokens, toolCallEnd)
		}
		tokens = append(tokens, imEnd)
	}
	if t.Mode == Subword && addGeneration {
		tokens = append(tokens, imStart, "assistant")
	}
	return tokens, nil
}

// tools is the tokens of a request's tools (none without any).
func (t Tokenizer) tools(tools []Tool) []string {
	if len(tools) == 0 {
		return nil
	}
	var tokens []string
	if t.Mode == Subword {
		tokens = append(tokens, imStart, "system")
	}
	for _, tl := range tools {
		f := tl.Function
		if t.Mode != Subword {
			tokens = append(tokens, strings.Fields(f.Name+" "+f.Description+" "+string(f.Parameters))...)
			continue
		}
		tokens = append(tokens, toolStart)
		for _, s := range [3]string{f.Name, f.Description, string(f.Parameters)} {
			tokens = append(tokens, t.Text(s, false)...)
		}
		tokens = append(tokens, toolEnd)
	}
	if t.Mode == Subword {
		tokens = append(tokens, imEnd)
	}
	return tokens
}

// Detokenize joins tokens back into text.
func (t Tokenizer) Detokenize(tokens []string) string {
	if t.Mode != Subword {
		return strings.Join(tokens, " ")
	}
	var b strings.Builder
	for _, tok := range tokens {
		switch {
		case strings.HasPrefix(tok, wordMark):
			b.WriteString(" ")
			b.WriteString(strings.TrimPrefix(tok, wordMark))
		default: // a word's later piece, or a special token
			b.WriteString(tok)
		}
	}
	return strings.TrimPrefix(b.String(), " ")
}
