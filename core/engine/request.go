package engine

import (
	"net/http"
	"strconv"
	"unicode/utf8"
)

// Message is one chat message.
type Message struct {
	Role    string
	Content string
}

// Request is one generation request.
type Request struct {
	ID       string
	Messages []Message // chat mode
	// Prompt is the completions-mode prompt. When it is empty in completions
	// mode, the first message's content is sent instead, as the original
	// tool does.
	Prompt     string
	Completion bool // POST {base}/completions instead of {base}/chat/completions
	// MaxTokens is sent as "max_tokens"; when <= 0 the field is left out and
	// the engine's own limit applies.
	MaxTokens int
	// Header holds extra headers (e.g. traceparent); they replace defaults
	// of the same name. May be nil.
	Header http.Header
}

func (r Request) prompt() string {
	if r.Prompt == "" && len(r.Messages) > 0 {
		return r.Messages[0].Content
	}
	return r.Prompt
}

// bodyTail closes every request body; temperature is written as 0.0 like
// the original (Python's json.dumps).
const bodyTail = `,"temperature":0.0,"stream_options":{"include_usage":true}}`

// appendBody appends the JSON request body, fields in the order model,
// messages|prompt, stream, max_tokens, temperature, stream_options. prefix is
// the pre-encoded `{"model":"…",` of the Sender.
func appendBody(dst, prefix []byte, r Request) []byte {
	dst = append(dst, prefix...)
	if r.Completion {
		dst = append(dst, `"prompt":`...)
		dst = appendJSONString(dst, r.prompt())
	} else {
		dst = append(dst, `"messages":[`...)
		for i, m := range r.Messages {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, `{"role":`...)
			dst = appendJSONString(dst, m.Role)
			dst = append(dst, `,"content":`...)
			dst = appendJSONString(dst, m.Content)
			dst = append(dst, '}')
		}
		dst = append(dst, ']')
	}
	dst = append(dst, `,"stream":true`...)
	if r.MaxTokens > 0 {
		dst = append(dst, `,"max_tokens":`...)
		dst = strconv.AppendInt(dst, int64(r.MaxTokens), 10)
	}
	return append(dst, bodyTail...)
}

// bodySize estimates the encoded body size so appendBody rarely grows its
// buffer: raw text plus a little for escapes and JSON punctuation.
func bodySize(prefix []byte, r Request) int {
	n := len(prefix) + len(bodyTail) + 64
	if r.Completion {
		n += len(r.prompt())
	} else {
		for _, m := range r.Messages {
			n += len(m.Role) + len(m.Content) + 32
		}
	}
	return n + n/8
}

// needsEscape marks the bytes a JSON string cannot hold as they are.
var needsEscape = func() (t [256]bool) {
	for b := range 0x20 {
		t[b] = true
	}
	t['"'], t['\\'] = true, true
	return t
}()

// appendJSONString appends s as a JSON string. It escapes what JSON
// requires (quote, backslash, control characters) and replaces invalid UTF-8
// with U+FFFD as encoding/json does; unlike encoding/json it leaves <, > and
// & alone, which JSON does not require.
func appendJSONString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	valid := utf8.ValidString(s) // then bytes >= 0x80 need no attention
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		b := s[i]
		if !needsEscape[b] && (b < utf8.RuneSelf || valid) {
			i++
			continue
		}
		dst = append(dst, s[start:i]...)
		switch {
		case b == '"' || b == '\\':
			dst = append(dst, '\\', b)
			i++
		case b == '\n':
			dst = append(dst, '\\', 'n')
			i++
		case b == '\r':
			dst = append(dst, '\\', 'r')
			i++
		case b == '\t':
			dst = append(dst, '\\', 't')
			i++
		case b < 0x20:
			dst = append(dst, '\\', 'u', '0', '0', hex[b>>4], hex[b&0xf])
			i++
		default: // non-ASCII in a string that is not valid UTF-8
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				dst = append(dst, `\ufffd`...)
			} else {
				dst = append(dst, s[i:i+size]...)
			}
			i += size
		}
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
