package sim

import (
	"fmt"
	"strings"

	"github.com/lmbench/lmbench/sdk/subword"
)

// Tokenizer modes (Config.Tokenizer).
const (
	// TokenizerWords: a token is a whitespace-separated word; chat roles
	// and templates add nothing. The default, and what lmbench's workloads
	// were written against.
	TokenizerWords = "words"
	// TokenizerSubword: a word costs 1 to 6 tokens, as pseudo-words do on
	// a real tokenizer, and the chat template adds tokens per message, so
	// the token-exact path is exercised without a GPU.
	TokenizerSubword = "subword"
)

// Subword tokens (the counting rule is package subword's). A word's first
// piece carries wordMark (SentencePiece's "▁"), so /detokenize can put the
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

// tokenizer turns prompt text into the simulator's tokens, per mode.
type tokenizer struct{ mode string }

// text is the tokens of a prompt; special adds the BOS token in subword
// mode, as a real tokenizer's add_special_tokens does.
func (t tokenizer) text(s string, special bool) []string {
	if t.mode != TokenizerSubword {
		return tokenize(s)
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

// chat is the tokens of chat messages through the chat template: in
// subword mode the tools first, as one system message (<|im_start|>
// system, each tool's <tool> name description parameters </tool>,
// <|im_end|>), then <|im_start|> role content [<tool_call> name
// arguments </tool_call>]… <|im_end|> per message, then <|im_start|>
// assistant when addGeneration (vLLM's chat completions always add it).
// In words mode a tool and a call are their texts' words. The counts are
// package subword's, so sdktest's fake tokenizer agrees.
func (t tokenizer) chat(messages []chatMessage, tools []chatTool, addGeneration bool) ([]string, *apiError) {
	if len(messages) == 0 {
		return nil, badRequest("messages: must be a non-empty list")
	}
	tokens := t.tools(tools)
	for i, m := range messages {
		text, err := messageText(m.Content)
		if err != nil {
			return nil, badRequest("messages[%d].content: %v", i, err)
		}
		if t.mode != TokenizerSubword {
			tokens = append(tokens, tokenize(text)...)
			for _, tc := range m.ToolCalls {
				tokens = append(append(tokens, tokenize(tc.Function.Name)...), tokenize(tc.arguments())...)
			}
			continue
		}
		tokens = append(tokens, imStart, m.Role)
		tokens = append(tokens, t.text(text, false)...)
		for _, tc := range m.ToolCalls {
			tokens = append(tokens, toolCallStart)
			tokens = append(tokens, t.text(tc.Function.Name, false)...)
			tokens = append(tokens, t.text(tc.arguments(), false)...)
			tokens = append(tokens, toolCallEnd)
		}
		tokens = append(tokens, imEnd)
	}
	if t.mode == TokenizerSubword && addGeneration {
		tokens = append(tokens, imStart, "assistant")
	}
	return tokens, nil
}

// tools is the tokens of a request's tools (none without any).
func (t tokenizer) tools(tools []chatTool) []string {
	if len(tools) == 0 {
		return nil
	}
	var tokens []string
	if t.mode == TokenizerSubword {
		tokens = append(tokens, imStart, "system")
	}
	for _, tl := range tools {
		f := tl.Function
		if t.mode != TokenizerSubword {
			tokens = append(tokens, tokenize(f.Name+" "+f.Description+" "+string(f.Parameters))...)
			continue
		}
		tokens = append(tokens, toolStart)
		for _, s := range [3]string{f.Name, f.Description, string(f.Parameters)} {
			tokens = append(tokens, t.text(s, false)...)
		}
		tokens = append(tokens, toolEnd)
	}
	if t.mode == TokenizerSubword {
		tokens = append(tokens, imEnd)
	}
	return tokens
}

// detokenize joins tokens back into text.
func (t tokenizer) detokenize(tokens []string) string {
	if t.mode != TokenizerSubword {
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

func checkTokenizerMode(mode string) error {
	switch mode {
	case TokenizerWords, TokenizerSubword:
		return nil
	}
	return fmt.Errorf("must be %s or %s, got %q", TokenizerWords, TokenizerSubword, mode)
}
