// Package subword is a stand-in tokenizer whose words cost several tokens,
// as pseudo-words do on a real model's tokenizer, with a chat template
// cost: the rule of the built-in engine's --tokenizer-mode subword and of
// sdktest's fake tokenizer, so a plugin's tests and a run against
// `lmbench sim` count alike.
//
// A word (a run of non-space characters) of up to 3 characters is one
// token; a longer one costs 1 + FNV-1a(word) mod 6 tokens, at most one per
// character. A chat costs its messages' text plus PerMessage tokens per
// message (<|im_start|> role … <|im_end|>) plus GenerationPrompt
// (<|im_start|> assistant). Text parts are counted without special tokens.
//
// Tools, as a ChatML template renders them (Qwen's, say): an assistant's
// tool call costs PerToolCall (<tool_call> … </tool_call>) plus the text
// of its name and of its arguments; a tool message's call id is not
// rendered; a request's tools are one more message before the others
// (PerMessage), each tool costing PerTool (<tool> … </tool>) plus the text
// of its name, description and parameters.
package subword

import (
	"hash/fnv"
	"strings"
	"unicode/utf8"
)

const (
	// MaxPerWord is the most tokens one word costs.
	MaxPerWord = 6
	// ShortWord is the length (in characters) up to which a word is one token.
	ShortWord = 3
	// PerMessage is the chat template's tokens per message.
	PerMessage = 3
	// GenerationPrompt is the tokens of the assistant header a chat request ends with.
	GenerationPrompt = 2
	// PerToolCall is the template's tokens around one tool call.
	PerToolCall = 2
	// PerTool is the template's tokens around one tool's definition.
	PerTool = 2
)

// WordTokens is the number of tokens word costs.
func WordTokens(word string) int {
	n := utf8.RuneCountInString(word)
	if n <= ShortWord {
		return 1
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(word))
	return min(1+int(h.Sum32()%MaxPerWord), n)
}

// TextTokens is the number of tokens of text: the sum over its words.
func TextTokens(text string) int {
	n := 0
	for _, w := range strings.Fields(text) {
		n += WordTokens(w)
	}
	return n
}

// ChatTokens is the number of tokens of a chat whose messages have the
// given texts, with the generation prompt.
func ChatTokens(texts ...string) int {
	n := GenerationPrompt
	for _, t := range texts {
		n += PerMessage + TextTokens(t)
	}
	return n
}

// ToolCallTokens is the number of tokens one tool call adds to its
// assistant message.
func ToolCallTokens(name, arguments string) int {
	return PerToolCall + TextTokens(name) + TextTokens(arguments)
}

// ToolTokens is the number of tokens one tool's definition costs.
func ToolTokens(name, description, parameters string) int {
	return PerTool + TextTokens(name) + TextTokens(description) + TextTokens(parameters)
}
