package engine

import "encoding/json"

// decodeFast fills c from one chunk without encoding/json and without
// allocating. It handles the shape engines send: lower-case keys, each known
// key at most once, token counts written as integers (or as 3.0). It
// reports false, with c partly filled, for anything else (invalid JSON
// included); the caller then decodes with encoding/json, which gives the
// exact result or error. The differential fuzz test holds the two paths to
// the same results.
func (c *chunk) decodeFast(b []byte) bool {
	s := scanner{b: b}
	s.ws()
	var seen uint8
	ok := s.object(func(key []byte) bool {
		switch string(key) {
		case "choices":
			return once(&seen, 1) && c.decodeChoices(&s)
		case "usage":
			return once(&seen, 2) && c.Usage.decodeFast(&s)
		case "error":
			return once(&seen, 4) && s.raw(&c.Error)
		case "id":
			return once(&seen, 8) && s.raw(&c.ID)
		case "model":
			return once(&seen, 16) && s.raw(&c.Model)
		case "timings":
			return once(&seen, 32) && (s.null() || s.object(func(key []byte) bool {
				if string(key) == "cache_n" {
					return once(&seen, 64) && s.tokens(&c.Timings.CacheN)
				}
				return s.skipUnknown(key)
			}))
		}
		return s.skipUnknown(key)
	})
	s.ws()
	return ok && s.i == len(s.b)
}

func (c *chunk) decodeChoices(s *scanner) bool {
	if s.null() {
		return true
	}
	if !s.open('[') {
		return false
	}
	for n := 0; ; n++ {
		end, ok := s.element(n == 0)
		if !ok {
			return false
		}
		if end {
			return true
		}
		if len(c.Choices) < cap(c.Choices) {
			c.Choices = c.Choices[:len(c.Choices)+1] // cleared by reset
		} else {
			c.Choices = append(c.Choices, choice{})
		}
		if !s.null() && !c.Choices[len(c.Choices)-1].decodeFast(s) {
			return false
		}
	}
}

func (ch *choice) decodeFast(s *scanner) bool {
	var seen uint8
	return s.object(func(key []byte) bool {
		switch string(key) {
		case "delta":
			return once(&seen, 1) && (s.null() || ch.decodeDelta(s))
		case "text":
			return once(&seen, 2) && s.raw(&ch.Text)
		case "finish_reason":
			return once(&seen, 4) && s.raw(&ch.FinishReason)
		case "logprobs":
			return once(&seen, 8) && s.raw(&ch.Logprobs)
		}
		return s.skipUnknown(key)
	})
}

func (ch *choice) decodeDelta(s *scanner) bool {
	var seen uint8
	return s.object(func(key []byte) bool {
		switch string(key) {
		case "content":
			return once(&seen, 1) && s.raw(&ch.Delta.Content)
		case "reasoning_content":
			return once(&seen, 2) && s.raw(&ch.Delta.ReasoningContent)
		case "reasoning":
			return once(&seen, 4) && s.raw(&ch.Delta.Reasoning)
		case "tool_calls":
			return once(&seen, 8) && ch.decodeToolCalls(s)
		}
		return s.skipUnknown(key)
	})
}

// decodeToolCalls reads delta.tool_calls. encoding/json sets a null array
// to nil; here it stays empty with its buffer, which reads the same.
func (ch *choice) decodeToolCalls(s *scanner) bool {
	if s.null() {
		return true
	}
	if !s.open('[') {
		return false
	}
	tcs := &ch.Delta.ToolCalls
	for n := 0; ; n++ {
		end, ok := s.element(n == 0)
		if !ok {
			return false
		}
		if end {
			return true
		}
		if len(*tcs) < cap(*tcs) {
			*tcs = (*tcs)[:len(*tcs)+1] // cleared by reset
		} else {
			*tcs = append(*tcs, toolCallDelta{})
		}
		if !s.null() && !(*tcs)[len(*tcs)-1].decodeFast(s) {
			return false
		}
	}
}

func (d *toolCallDelta) decodeFast(s *scanner) bool {
	var seen uint8
	return s.object(func(key []byte) bool {
		switch string(key) {
		case "index":
			return once(&seen, 1) && s.raw(&d.Index)
		case "id":
			return once(&seen, 2) && s.raw(&d.ID)
		case "function":
			return once(&seen, 4) && (s.null() || s.object(func(key []byte) bool {
				switch string(key) {
				case "name":
					return once(&seen, 8) && s.raw(&d.Function.Name)
				case "arguments":
					return once(&seen, 16) && s.raw(&d.Function.Arguments)
				}
				return s.skipUnknown(key)
			}))
		}
		return s.skipUnknown(key)
	})
}

func (u *usage) decodeFast(s *scanner) bool {
	if s.null() {
		return true
	}
	var seen uint8
	return s.object(func(key []byte) bool {
		switch string(key) {
		case "prompt_tokens":
			return once(&seen, 1) && s.tokens(&u.PromptTokens)
		case "completion_tokens":
			return once(&seen, 2) && s.tokens(&u.CompletionTokens)
		case "prompt_tokens_details":
			return once(&seen, 4) && (s.null() || s.object(func(key []byte) bool {
				if string(key) == "cached_tokens" {
					return once(&seen, 8) && s.tokens(&u.PromptTokensDetails.CachedTokens)
				}
				return s.skipUnknown(key)
			}))
		}
		return s.skipUnknown(key)
	})
}

// object reads a JSON object, calling field for each member with the
// scanner positioned at its value; field must consume the value.
func (s *scanner) object(field func(key []byte) bool) bool {
	if !s.open('{') {
		return false
	}
	for n := 0; ; n++ {
		key, end, ok := s.member(n == 0)
		if !ok {
			return false
		}
		if end {
			return true
		}
		if !field(key) {
			return false
		}
	}
}

func once(seen *uint8, bit uint8) bool {
	if *seen&bit != 0 {
		return false
	}
	*seen |= bit
	return true
}

// scanner is a strict JSON scanner over one payload. Every method reports
// false on input it does not accept; it never panics on any input.
type scanner struct {
	b     []byte
	i     int
	depth int
}

// maxDepth bounds nesting in skipped values; deeper input is left to
// encoding/json.
const maxDepth = 256

func (s *scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// open consumes the opening delimiter c ('{' or '[').
func (s *scanner) open(c byte) bool {
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// null consumes a null literal if one is next.
func (s *scanner) null() bool {
	if len(s.b)-s.i >= 4 && string(s.b[s.i:s.i+4]) == "null" {
		s.i += 4
		return true
	}
	return false
}

// member moves to the next object member and returns its key with the
// scanner on the value; end reports the closing '}'. Keys with escapes are
// refused.
func (s *scanner) member(first bool) (key []byte, end, ok bool) {
	s.ws()
	if s.i >= len(s.b) {
		return nil, false, false
	}
	if s.b[s.i] == '}' { // after a value; a '}' right after ',' fails on str below
		s.i++
		return nil, true, true
	}
	if !first {
		if s.b[s.i] != ',' {
			return nil, false, false
		}
		s.i++
		s.ws()
	}
	key, esc, ok := s.str()
	if !ok || esc {
		return nil, false, false
	}
	s.ws()
	if s.i >= len(s.b) || s.b[s.i] != ':' {
		return nil, false, false
	}
	s.i++
	s.ws()
	return key, false, true
}

// element moves to the next array element; end reports the closing ']'.
func (s *scanner) element(first bool) (end, ok bool) {
	s.ws()
	if s.i >= len(s.b) {
		return false, false
	}
	if s.b[s.i] == ']' {
		s.i++
		return true, true
	}
	if !first {
		if s.b[s.i] != ',' {
			return false, false
		}
		s.i++
		s.ws()
	}
	return false, true
}

// skipUnknown skips the value of a key we do not use. encoding/json matches
// keys case-insensitively (with Unicode folding), so a key with an
// upper-case or non-ASCII letter might be one of ours in disguise: refuse.
func (s *scanner) skipUnknown(key []byte) bool {
	for _, c := range key {
		if c >= 'A' && c <= 'Z' || c >= 0x80 {
			return false
		}
	}
	return s.value()
}

// raw stores the next value verbatim into *dst, reusing its buffer.
func (s *scanner) raw(dst *json.RawMessage) bool {
	start := s.i
	if !s.value() {
		return false
	}
	*dst = append((*dst)[:0], s.b[start:s.i]...)
	return true
}

// tokens reads a token count into *dst as tokenCount.UnmarshalJSON would;
// null leaves *dst unchanged. A number that is not a whole number is
// refused (encoding/json then reports it).
func (s *scanner) tokens(dst *tokenCount) bool {
	if s.null() {
		return true
	}
	start := s.i
	if !s.number() {
		return false
	}
	v, ok := wholeNumber(s.b[start:s.i])
	if !ok {
		return false
	}
	*dst = tokenCount(v)
	return true
}

// value skips one JSON value.
func (s *scanner) value() bool {
	if s.i >= len(s.b) {
		return false
	}
	switch c := s.b[s.i]; {
	case c == '"':
		_, _, ok := s.str()
		return ok
	case c == '{':
		if s.depth++; s.depth > maxDepth {
			return false
		}
		s.i++
		for n := 0; ; n++ {
			_, end, ok := s.member(n == 0)
			if !ok {
				return false
			}
			if end {
				break
			}
			if !s.value() {
				return false
			}
		}
		s.depth--
		return true
	case c == '[':
		if s.depth++; s.depth > maxDepth {
			return false
		}
		s.i++
		for n := 0; ; n++ {
			end, ok := s.element(n == 0)
			if !ok {
				return false
			}
			if end {
				break
			}
			if !s.value() {
				return false
			}
		}
		s.depth--
		return true
	case c == 't':
		return s.literal("true")
	case c == 'f':
		return s.literal("false")
	case c == 'n':
		return s.literal("null")
	default:
		return s.number()
	}
}

func (s *scanner) literal(lit string) bool {
	if len(s.b)-s.i >= len(lit) && string(s.b[s.i:s.i+len(lit)]) == lit {
		s.i += len(lit)
		return true
	}
	return false
}

// number skips a number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (s *scanner) number() bool {
	b, i := s.b, s.i
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		i = digits(b, i)
	default:
		return false
	}
	if i < len(b) && b[i] == '.' {
		j := digits(b, i+1)
		if j == i+1 {
			return false
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := digits(b, i)
		if j == i {
			return false
		}
		i = j
	}
	s.i = i
	return true
}

func digits(b []byte, i int) int {
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i
}

// str scans a string and returns its raw inner bytes and whether it holds
// escapes. Invalid UTF-8 is accepted, as encoding/json does.
func (s *scanner) str() (inner []byte, esc, ok bool) {
	b := s.b
	if s.i >= len(b) || b[s.i] != '"' {
		return nil, false, false
	}
	start := s.i + 1
	for j := start; j < len(b); j++ {
		switch c := b[j]; {
		case c == '"':
			s.i = j + 1
			return b[start:j], esc, true
		case c == '\\':
			esc = true
			j++
			if j >= len(b) {
				return nil, false, false
			}
			switch b[j] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if len(b)-j <= 4 || !isHex(b[j+1]) || !isHex(b[j+2]) || !isHex(b[j+3]) || !isHex(b[j+4]) {
					return nil, false, false
				}
				j += 4
			default:
				return nil, false, false
			}
		case c < 0x20:
			return nil, false, false
		}
	}
	return nil, false, false
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}
