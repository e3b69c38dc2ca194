// Package jsonenc appends JSON strings to byte slices without allocating:
// the engine's request bodies and the journal's lines are built with it.
package jsonenc

import "unicode/utf8"

// needsEscape marks the bytes a JSON string cannot hold as they are.
var needsEscape = func() (t [256]bool) {
	for b := range 0x20 {
		t[b] = true
	}
	t['"'], t['\\'] = true, true
	return t
}()

// AppendString appends s as a JSON string. It escapes what JSON
// requires (quote, backslash, control characters) and replaces invalid UTF-8
// with U+FFFD as encoding/json does; unlike encoding/json it leaves <, > and
// & alone, which JSON does not require.
func AppendString(dst []byte, s string) []byte {
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
