package hftok

import (
	"fmt"
	"strings"
	"unicode"

	"github.com/dlclark/regexp2/v2"
	"golang.org/x/text/unicode/norm"
)

// normalizer rewrites a piece of text before pre-tokenization, as the
// tokenizers crate's normalizers do (alignment tracking aside: a count
// needs none).
type normalizer func(string) (string, error)

// newNormalizer builds a tokenizer.json "normalizer" object.
func newNormalizer(cfg map[string]any) (normalizer, error) {
	typ, _ := cfg["type"].(string)
	switch typ {
	case "Sequence":
		seq, err := buildAll(cfg, "normalizers", newNormalizer)
		if err != nil {
			return nil, err
		}
		return chain(seq), nil
	case "NFC":
		return plain(norm.NFC.String), nil
	case "NFD":
		return plain(norm.NFD.String), nil
	case "NFKC":
		return plain(norm.NFKC.String), nil
	case "NFKD":
		return plain(norm.NFKD.String), nil
	case "Lowercase":
		return plain(strings.ToLower), nil
	case "StripAccents":
		return plain(func(s string) string {
			return strings.Map(func(r rune) rune {
				if unicode.Is(unicode.Mn, r) {
					return -1
				}
				return r
			}, s)
		}), nil
	case "Strip":
		left, _ := cfg["strip_left"].(bool)
		right, _ := cfg["strip_right"].(bool)
		return plain(func(s string) string {
			if left {
				s = strings.TrimLeftFunc(s, unicode.IsSpace)
			}
			if right {
				s = strings.TrimRightFunc(s, unicode.IsSpace)
			}
			return s
		}), nil
	case "Prepend":
		p, _ := cfg["prepend"].(string)
		return plain(func(s string) string {
			if s == "" {
				return s
			}
			return p + s
		}), nil
	case "Replace":
		return newReplace(cfg)
	}
	return nil, fmt.Errorf("unsupported normalizer type %q (supported: Sequence, NFC, NFD, NFKC, NFKD, Lowercase, StripAccents, Strip, Prepend, Replace)", typ)
}

// chain applies fs in turn: a Sequence.
func chain[T any, F ~func(T) (T, error)](fs []F) F {
	return func(x T) (T, error) {
		var err error
		for _, f := range fs {
			if x, err = f(x); err != nil {
				return x, err
			}
		}
		return x, nil
	}
}

// buildAll builds the objects of a Sequence's list field.
func buildAll[T any](cfg map[string]any, field string, build func(map[string]any) (T, error)) ([]T, error) {
	list, _ := cfg[field].([]any)
	var out []T
	for i, c := range list {
		m, ok := c.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s[%d]: expected an object, got %v", field, i, c)
		}
		x, err := build(m)
		if err != nil {
			return nil, fmt.Errorf("%s[%d]: %w", field, i, err)
		}
		out = append(out, x)
	}
	return out, nil
}

func plain(f func(string) string) normalizer {
	return func(s string) (string, error) { return f(s), nil }
}

// newReplace is the Replace normalizer: every match of a String or
// Regex pattern replaced by content.
func newReplace(cfg map[string]any) (normalizer, error) {
	content, _ := cfg["content"].(string)
	pat, _ := cfg["pattern"].(map[string]any)
	if s, ok := pat["String"].(string); ok {
		if s == "" {
			return plain(func(t string) string { return t }), nil
		}
		return plain(func(t string) string { return strings.ReplaceAll(t, s, content) }), nil
	}
	expr, ok := pat["Regex"].(string)
	if !ok {
		return nil, fmt.Errorf("Replace: expected pattern {String} or {Regex}, got %v", cfg["pattern"])
	}
	re, err := regexp2.Compile(expr)
	if err != nil {
		return nil, fmt.Errorf("Replace: pattern %q: %w", expr, err)
	}
	return func(t string) (string, error) {
		idx, err := re.FindAllStringIndex(t, -1)
		if err != nil {
			return "", err
		}
		var b strings.Builder
		at := 0
		for _, m := range idx {
			b.WriteString(t[at:m[0]])
			b.WriteString(content)
			at = m[1]
		}
		b.WriteString(t[at:])
		return b.String(), nil
	}, nil
}
