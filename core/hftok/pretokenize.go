package hftok

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/dlclark/regexp2/v2"
)

// piece is a stretch of text on its way to the model; atStart says it
// begins the original text (Metaspace's prepend_scheme "first").
type piece struct {
	s       string
	atStart bool
}

// preTokenizer splits pieces into the words the model sees, as the
// tokenizers crate's pre-tokenizers do.
type preTokenizer func([]piece) ([]piece, error)

// span is a stretch of a piece, a match of a pattern or a gap between
// matches; spans cover the piece in order.
type span struct {
	start, end int
	match      bool
}

// behavior is a Split's SplitDelimiterBehavior.
type behavior int

const (
	removed behavior = iota
	isolated
	mergedWithPrevious
	mergedWithNext
	contiguous
)

func parseBehavior(v any) (behavior, error) {
	switch v {
	case "Removed":
		return removed, nil
	case "Isolated":
		return isolated, nil
	case "MergedWithPrevious":
		return mergedWithPrevious, nil
	case "MergedWithNext":
		return mergedWithNext, nil
	case "Contiguous":
		return contiguous, nil
	}
	return 0, fmt.Errorf("unknown behavior %v (expected Removed, Isolated, MergedWithPrevious, MergedWithNext or Contiguous)", v)
}

// splitSpans cuts p at spans as NormalizedString::split does, dropping
// empty results, and appends the parts to out.
func splitSpans(out []piece, p piece, spans []span, b behavior) []piece {
	type part struct {
		start, end int
		remove     bool
	}
	var parts []part
	prevMatch := false
	switch b {
	case isolated:
		for _, s := range spans {
			parts = append(parts, part{s.start, s.end, false})
		}
	case removed:
		for _, s := range spans {
			parts = append(parts, part{s.start, s.end, s.match})
		}
	case contiguous:
		for _, s := range spans {
			if s.match == prevMatch && len(parts) > 0 {
				parts[len(parts)-1].end = s.end
			} else {
				parts = append(parts, part{s.start, s.end, false})
			}
			prevMatch = s.match
		}
	case mergedWithPrevious:
		for _, s := range spans {
			if s.match && !prevMatch && len(parts) > 0 {
				parts[len(parts)-1].end = s.end
			} else {
				parts = append(parts, part{s.start, s.end, false})
			}
			prevMatch = s.match
		}
	case mergedWithNext:
		for i := len(spans) - 1; i >= 0; i-- {
			s := spans[i]
			if s.match && !prevMatch && len(parts) > 0 {
				parts[len(parts)-1].start = s.start
			} else {
				parts = append(parts, part{s.start, s.end, false})
			}
			prevMatch = s.match
		}
		for i, j := 0, len(parts)-1; i < j; i, j = i+1, j-1 {
			parts[i], parts[j] = parts[j], parts[i]
		}
	}
	for _, q := range parts {
		if !q.remove && q.end > q.start {
			out = append(out, piece{s: p.s[q.start:q.end], atStart: p.atStart && q.start == 0})
		}
	}
	return out
}

// spansOf turns match offsets into spans covering s, as the crate's
// Pattern::find_matches does.
func spansOf(s string, idx [][]int, invert bool) []span {
	if s == "" {
		return []span{{0, 0, invert}}
	}
	spans := make([]span, 0, 2*len(idx)+1)
	prev := 0
	for _, m := range idx {
		if m[0] != prev {
			spans = append(spans, span{prev, m[0], invert})
		}
		spans = append(spans, span{m[0], m[1], !invert})
		prev = m[1]
	}
	if prev != len(s) {
		spans = append(spans, span{prev, len(s), invert})
	}
	return spans
}

// literalIndex is every non-overlapping occurrence of lit in s.
func literalIndex(s, lit string) [][]int {
	var idx [][]int
	if lit == "" {
		return nil
	}
	for at := 0; ; {
		i := strings.Index(s[at:], lit)
		if i < 0 {
			return idx
		}
		idx = append(idx, []int{at + i, at + i + len(lit)})
		at += i + len(lit)
	}
}

// splitter splits by a pattern: one of pattern.go's, else a regexp2
// expression (look-ahead, \p{..}, (?i:..), as Oniguruma reads the
// crate's), or a literal.
type splitter struct {
	pat *pattern
	re  *regexp2.Regexp
	lit string
}

// compileSplitter is the splitter of a regular expression.
func compileSplitter(expr string) (splitter, error) {
	if pt, err := parsePattern(expr); err == nil {
		return splitter{pat: pt}, nil
	}
	re, err := regexp2.Compile(expr)
	if err != nil {
		return splitter{}, fmt.Errorf("pattern %q: %w", expr, err)
	}
	return splitter{re: re}, nil
}

func (sp splitter) index(s string) ([][]int, error) {
	switch {
	case sp.pat != nil:
		return sp.pat.findAll(s), nil
	case sp.re != nil:
		return sp.re.FindAllStringIndex(s, -1)
	}
	return literalIndex(s, sp.lit), nil
}

func (sp splitter) split(pieces []piece, b behavior, invert bool) ([]piece, error) {
	out := make([]piece, 0, len(pieces))
	for _, p := range pieces {
		idx, err := sp.index(p.s)
		if err != nil {
			return nil, err
		}
		out = splitSpans(out, p, spansOf(p.s, idx, invert), b)
	}
	return out, nil
}

func newSplitter(pattern any) (splitter, error) {
	pat, _ := pattern.(map[string]any)
	if s, ok := pat["String"].(string); ok {
		return splitter{lit: s}, nil
	}
	expr, ok := pat["Regex"].(string)
	if !ok {
		return splitter{}, fmt.Errorf("expected pattern {String} or {Regex}, got %v", pattern)
	}
	return compileSplitter(expr)
}

// gpt2Pattern is the ByteLevel pre-tokenizer's own split (GPT-2's).
const gpt2Pattern = `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`

// newPreTokenizer builds a tokenizer.json "pre_tokenizer" object.
func newPreTokenizer(cfg map[string]any) (preTokenizer, error) {
	typ, _ := cfg["type"].(string)
	switch typ {
	case "Sequence":
		seq, err := buildAll(cfg, "pretokenizers", newPreTokenizer)
		if err != nil {
			return nil, err
		}
		return chain(seq), nil
	case "Split":
		sp, err := newSplitter(cfg["pattern"])
		if err != nil {
			return nil, fmt.Errorf("Split: %w", err)
		}
		b, err := parseBehavior(cfg["behavior"])
		if err != nil {
			return nil, fmt.Errorf("Split: %w", err)
		}
		invert, _ := cfg["invert"].(bool)
		return func(ps []piece) ([]piece, error) { return sp.split(ps, b, invert) }, nil
	case "ByteLevel":
		return newByteLevel(cfg)
	case "Metaspace":
		return newMetaspace(cfg)
	case "Digits":
		individual, _ := cfg["individual_digits"].(bool)
		return func(ps []piece) ([]piece, error) { return splitRunes(ps, unicode.IsDigit, !individual), nil }, nil
	case "WhitespaceSplit":
		return func(ps []piece) ([]piece, error) { return whitespaceSplit(ps), nil }, nil
	case "Whitespace":
		sp := splitter{re: regexp2.MustCompile(`\w+|[^\w\s]+`)}
		return func(ps []piece) ([]piece, error) { return sp.split(ps, removed, true) }, nil
	}
	return nil, fmt.Errorf("unsupported pre-tokenizer type %q (supported: Sequence, Split, ByteLevel, Metaspace, Digits, Whitespace, WhitespaceSplit)", typ)
}

// newByteLevel is the ByteLevel pre-tokenizer: an optional leading
// space, GPT-2's split unless use_regex is false, then every byte as
// its printable stand-in.
func newByteLevel(cfg map[string]any) (preTokenizer, error) {
	prefix, _ := cfg["add_prefix_space"].(bool)
	var sp *splitter
	if use, ok := cfg["use_regex"].(bool); !ok || use { // absent means true, as in the crate
		gpt2, err := compileSplitter(gpt2Pattern)
		if err != nil {
			return nil, err
		}
		sp = &gpt2
	}
	return func(ps []piece) ([]piece, error) {
		if prefix {
			for i, p := range ps {
				if !strings.HasPrefix(p.s, " ") {
					ps[i].s = " " + p.s
				}
			}
		}
		if sp != nil {
			var err error
			if ps, err = sp.split(ps, isolated, false); err != nil {
				return nil, err
			}
		}
		for i, p := range ps {
			ps[i].s = byteLevelString(p.s)
		}
		return ps, nil
	}, nil
}

// byteChars is GPT-2's bytes_to_unicode: printable bytes stand for
// themselves, the others for code points from U+0100 up.
var byteChars = func() (t [256]string) {
	n := 0
	for b := 0; b < 256; b++ {
		if b >= '!' && b <= '~' || b >= 0xA1 && b <= 0xAC || b >= 0xAE {
			t[b] = string(rune(b))
		} else {
			t[b] = string(rune(256 + n))
			n++
		}
	}
	return t
}()

func byteLevelString(s string) string {
	var b strings.Builder
	b.Grow(2 * len(s))
	for i := 0; i < len(s); i++ {
		b.WriteString(byteChars[s[i]])
	}
	return b.String()
}

// newMetaspace is the Metaspace pre-tokenizer: spaces replaced by the
// replacement character, one prepended by the prepend scheme, then a
// split before each replacement character when split is set.
func newMetaspace(cfg map[string]any) (preTokenizer, error) {
	rep := "▁"
	if r, ok := cfg["replacement"].(string); ok && r != "" {
		rep = r
	}
	scheme, _ := cfg["prepend_scheme"].(string)
	if scheme == "" {
		scheme = "always"
		if add, ok := cfg["add_prefix_space"].(bool); ok && !add {
			scheme = "never"
		}
	}
	if scheme != "always" && scheme != "first" && scheme != "never" {
		return nil, fmt.Errorf("Metaspace: prepend_scheme %q, expected always, first or never", scheme)
	}
	split := true
	if s, ok := cfg["split"].(bool); ok {
		split = s
	}
	sp := splitter{lit: rep}
	return func(ps []piece) ([]piece, error) {
		for i, p := range ps {
			s := strings.ReplaceAll(p.s, " ", rep)
			if !strings.HasPrefix(s, rep) && (scheme == "always" || scheme == "first" && p.atStart) {
				s = rep + s
			}
			ps[i].s = s
		}
		if !split {
			return ps, nil
		}
		return sp.split(ps, mergedWithNext, false)
	}, nil
}

// splitRunes isolates the runes of class in: each one alone, or runs of
// them when contiguous.
func splitRunes(ps []piece, in func(rune) bool, runs bool) []piece {
	var out []piece
	for _, p := range ps {
		var spans []span
		for i, r := range p.s {
			m := in(r)
			_, size := utf8.DecodeRuneInString(p.s[i:])
			if n := len(spans); n > 0 && spans[n-1].match == m && (!m || runs) {
				spans[n-1].end = i + size
				continue
			}
			spans = append(spans, span{i, i + size, m})
		}
		out = splitSpans(out, p, spans, isolated)
	}
	return out
}

// whitespaceSplit splits at whitespace, dropping it.
func whitespaceSplit(ps []piece) []piece {
	var out []piece
	for _, p := range ps {
		var spans []span
		for i, r := range p.s {
			m := unicode.IsSpace(r)
			_, size := utf8.DecodeRuneInString(p.s[i:])
			if n := len(spans); n > 0 && spans[n-1].match == m {
				spans[n-1].end = i + size
				continue
			}
			spans = append(spans, span{i, i + size, m})
		}
		out = splitSpans(out, p, spans, removed)
	}
	return out
}
