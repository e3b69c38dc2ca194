package hftok

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The Split patterns of the common families (GPT-2's, Llama 3's, Qwen's,
// DeepSeek's, gpt-oss's) are alternations of character classes with
// greedy counts, a (?i:…) group of literals and \s+(?!\S). regexp2's
// interpreter spends two thirds of an 8,000-token count on them, so
// such a pattern is matched here by a small backtracking matcher with
// regexp2's semantics (leftmost-first alternation, greedy counts, .NET's
// \s, Go's Unicode tables); anything else it does not parse is left to
// regexp2. TestPatternMatchesRegexp2 holds the two to the same matches.

// classItem is one position of a pattern: a character class repeated
// min..max times, or a group of alternatives (literal sequences), or a
// negative look-ahead at a class.
type classItem struct {
	class    *charClass
	min, max int      // max -1: unbounded
	group    [][]rune // alternatives of a (?i:…) group; nil: a class
	fold     bool     // the group is case-insensitive
	notAhead bool     // (?!class)
}

// charClass is a set of runes: a bitmap for ASCII, the predicate above.
type charClass struct {
	ascii  [2]uint64
	neg    bool
	tables []*unicode.RangeTable
	ranges [][2]rune
}

func (c *charClass) has(r rune) bool {
	if r < 128 {
		return c.ascii[r>>6]&(1<<(r&63)) != 0
	}
	return c.slow(r)
}

func (c *charClass) slow(r rune) bool {
	in := false
	for _, rg := range c.ranges {
		if r >= rg[0] && r <= rg[1] {
			in = true
			break
		}
	}
	if !in {
		for _, t := range c.tables {
			if unicode.Is(t, r) {
				in = true
				break
			}
		}
	}
	return in != c.neg
}

func (c *charClass) seal() {
	for r := rune(0); r < 128; r++ {
		if c.slow(r) {
			c.ascii[r>>6] |= 1 << (r & 63)
		}
	}
}

// dotnetSpace is regexp2's \s: [\f\n\r\t\v\x85\p{Z}].
var dotnetSpace = func() *charClass {
	c := &charClass{tables: []*unicode.RangeTable{unicode.Z}, ranges: [][2]rune{{'\t', '\r'}, {0x85, 0x85}}}
	return c
}()

// pattern is a parsed alternation, with the classes each alternative
// can start with (a match is tried only where one holds the rune).
type pattern struct {
	alts  [][]classItem
	first [][]*charClass
}

// firstClasses is what seq can start with: its leading optional items'
// classes and the first required one's; a group's literals' first
// runes, both cases.
func firstClasses(seq []classItem) []*charClass {
	var out []*charClass
	for _, it := range seq {
		switch {
		case it.notAhead:
			continue
		case it.group != nil:
			c := &charClass{}
			for _, lit := range it.group {
				for r := lit[0]; ; { // its case-fold orbit
					c.ranges = append(c.ranges, [2]rune{r, r})
					if r = unicode.SimpleFold(r); r == lit[0] {
						break
					}
				}
			}
			c.seal()
			out = append(out, c)
		default:
			out = append(out, it.class)
		}
		if it.min > 0 {
			break
		}
	}
	return out
}

func canStart(first []*charClass, r rune) bool {
	for _, c := range first {
		if c.has(r) {
			return true
		}
	}
	return false
}

// parsePattern parses expr, or fails for anything outside the subset.
func parsePattern(expr string) (*pattern, error) {
	p := &patParser{s: expr}
	var alts [][]classItem
	for {
		seq, err := p.sequence()
		if err != nil {
			return nil, err
		}
		if len(seq) == 0 || minLen(seq) == 0 {
			return nil, fmt.Errorf("an alternative that may match empty")
		}
		alts = append(alts, seq)
		if p.i == len(p.s) {
			pt := &pattern{alts: alts}
			for _, a := range alts {
				pt.first = append(pt.first, firstClasses(a))
			}
			return pt, nil
		}
		if p.s[p.i] != '|' {
			return nil, fmt.Errorf("unexpected %q at %d", p.s[p.i], p.i)
		}
		p.i++
	}
}

func minLen(seq []classItem) int {
	n := 0
	for _, it := range seq {
		switch {
		case it.notAhead:
		case it.group != nil:
			if it.min > 0 {
				n++
			}
		default:
			n += it.min
		}
	}
	return n
}

type patParser struct {
	s string
	i int
}

func (p *patParser) sequence() ([]classItem, error) {
	var seq []classItem
	for p.i < len(p.s) && p.s[p.i] != '|' {
		var it classItem
		switch {
		case strings.HasPrefix(p.s[p.i:], "(?!"):
			p.i += 3
			c, err := p.atom()
			if err != nil {
				return nil, err
			}
			if p.i >= len(p.s) || p.s[p.i] != ')' {
				return nil, fmt.Errorf("a look-ahead of more than one class")
			}
			p.i++
			seq = append(seq, classItem{class: c, notAhead: true})
			continue
		case strings.HasPrefix(p.s[p.i:], "(?i:"):
			p.i += 4
			g, err := p.literals()
			if err != nil {
				return nil, err
			}
			it = classItem{group: g, fold: true, min: 1, max: 1}
		case p.s[p.i] == '(' || p.s[p.i] == ')':
			return nil, fmt.Errorf("a group other than (?i:…) or (?!…)")
		default:
			c, err := p.atom()
			if err != nil {
				return nil, err
			}
			it = classItem{class: c, min: 1, max: 1}
		}
		if err := p.quantifier(&it); err != nil {
			return nil, err
		}
		seq = append(seq, it)
	}
	return seq, nil
}

// literals is a (?i:…) group's alternatives, up to its ')'.
func (p *patParser) literals() ([][]rune, error) {
	var alts [][]rune
	var cur []rune
	for p.i < len(p.s) {
		switch c := p.s[p.i]; c {
		case '|':
			alts, cur = append(alts, cur), nil
			p.i++
		case ')':
			p.i++
			if cur == nil && alts == nil {
				return nil, fmt.Errorf("an empty group")
			}
			return append(alts, cur), nil
		case '\\', '[', '(', '.', '*', '+', '?', '{', '^', '$':
			return nil, fmt.Errorf("a group holding more than literals")
		default:
			r, size := utf8.DecodeRuneInString(p.s[p.i:])
			cur = append(cur, r)
			p.i += size
		}
	}
	return nil, fmt.Errorf("an unclosed group")
}

func (p *patParser) quantifier(it *classItem) error {
	if p.i >= len(p.s) {
		return nil
	}
	switch p.s[p.i] {
	case '?':
		it.min, it.max = 0, 1
		p.i++
	case '*':
		it.min, it.max = 0, -1
		p.i++
	case '+':
		it.min, it.max = 1, -1
		p.i++
	case '{':
		end := strings.IndexByte(p.s[p.i:], '}')
		if end < 0 {
			return fmt.Errorf("an unclosed {")
		}
		lo, hi, two := strings.Cut(p.s[p.i+1:p.i+end], ",")
		a, err := strconv.Atoi(lo)
		if err != nil {
			return fmt.Errorf("a count %q", p.s[p.i:p.i+end+1])
		}
		b := a
		if two {
			if b, err = strconv.Atoi(hi); err != nil {
				return fmt.Errorf("a count %q", p.s[p.i:p.i+end+1])
			}
		}
		it.min, it.max = a, b
		p.i += end + 1
	default:
		return nil
	}
	if it.group != nil && !(it.min == 0 && it.max == 1) {
		return fmt.Errorf("a counted group")
	}
	if p.i < len(p.s) && (p.s[p.i] == '?' || p.s[p.i] == '+') {
		return fmt.Errorf("a lazy or possessive count")
	}
	return nil
}

// atom is one class: a literal, an escape, \p{..}, or […].
func (p *patParser) atom() (*charClass, error) {
	c := &charClass{}
	if p.i < len(p.s) && p.s[p.i] == '[' {
		p.i++
		if p.i < len(p.s) && p.s[p.i] == '^' {
			c.neg = true
			p.i++
		}
		for first := true; ; first = false {
			if p.i >= len(p.s) {
				return nil, fmt.Errorf("an unclosed [")
			}
			if p.s[p.i] == ']' && !first {
				p.i++
				break
			}
			if err := p.classPart(c); err != nil {
				return nil, err
			}
		}
	} else {
		r, set, err := p.char(false)
		if err != nil {
			return nil, err
		}
		if set != nil {
			*c = charClass{neg: set.neg, tables: set.tables, ranges: set.ranges}
		} else {
			c.ranges = [][2]rune{{r, r}}
		}
	}
	c.seal()
	return c, nil
}

// classPart adds one member of a class: a rune, a range, an escape.
func (p *patParser) classPart(c *charClass) error {
	lo, set, err := p.char(true)
	if err != nil {
		return err
	}
	if set != nil {
		if set.neg {
			return fmt.Errorf("a negated set inside a class")
		}
		c.tables = append(c.tables, set.tables...)
		c.ranges = append(c.ranges, set.ranges...)
		return nil
	}
	hi := lo
	if p.i+1 < len(p.s) && p.s[p.i] == '-' && p.s[p.i+1] != ']' {
		p.i++
		if hi, set, err = p.char(true); err != nil || set != nil {
			return fmt.Errorf("a range to a set")
		}
	}
	c.ranges = append(c.ranges, [2]rune{lo, hi})
	return nil
}

// char is one rune (escapes included) or a set escape (\s, \p{..});
// in a class, metacharacters other than [ are literals.
func (p *patParser) char(inClass bool) (rune, *charClass, error) {
	r, size := utf8.DecodeRuneInString(p.s[p.i:])
	switch r {
	case '.', '(', ')', '*', '+', '?', '{', '}', '|', '^', '$', ']':
		if !inClass {
			return 0, nil, fmt.Errorf("the metacharacter %q", r)
		}
	case '[':
		return 0, nil, fmt.Errorf("a [ inside a class")
	case '\\':
		if p.i+1 >= len(p.s) {
			return 0, nil, fmt.Errorf("a trailing \\")
		}
		p.i++
		e := p.s[p.i]
		p.i++
		switch e {
		case 'r':
			return '\r', nil, nil
		case 'n':
			return '\n', nil, nil
		case 't':
			return '\t', nil, nil
		case 'f':
			return '\f', nil, nil
		case 'v':
			return '\v', nil, nil
		case 's':
			return 0, dotnetSpace, nil
		case 'S':
			return 0, &charClass{neg: true, tables: dotnetSpace.tables, ranges: dotnetSpace.ranges}, nil
		case 'p', 'P':
			end := strings.IndexByte(p.s[p.i:], '}')
			if p.i >= len(p.s) || p.s[p.i] != '{' || end < 0 {
				return 0, nil, fmt.Errorf("a \\p without {name}")
			}
			name := p.s[p.i+1 : p.i+end]
			p.i += end + 1
			t, ok := unicode.Categories[name]
			if !ok {
				return 0, nil, fmt.Errorf("the category %q", name)
			}
			return 0, &charClass{neg: e == 'P', tables: []*unicode.RangeTable{t}}, nil
		}
		if e < 128 && !('a' <= e && e <= 'z' || 'A' <= e && e <= 'Z' || '0' <= e && e <= '9') {
			return rune(e), nil, nil
		}
		return 0, nil, fmt.Errorf("the escape \\%c", e)
	}
	p.i += size
	return r, nil, nil
}

// findAll is every match in s, leftmost-first, as byte offsets.
func (pt *pattern) findAll(s string) [][]int {
	rs := make([]rune, 0, len(s))
	off := make([]int, 0, len(s)+1)
	for i, r := range s {
		rs = append(rs, r)
		off = append(off, i)
	}
	off = append(off, len(s))
	var out [][]int
	for at := 0; at < len(rs); {
		end := -1
		for k, alt := range pt.alts {
			if !canStart(pt.first[k], rs[at]) {
				continue
			}
			if end = matchSeq(alt, rs, at); end >= 0 {
				break
			}
		}
		if end < 0 {
			at++
			continue
		}
		out = append(out, []int{off[at], off[end]})
		at = end
	}
	return out
}

// matchSeq matches seq at rs[at:], backtracking over the greedy counts;
// the end of the first match found, or -1.
func matchSeq(seq []classItem, rs []rune, at int) int {
	if len(seq) == 0 {
		return at
	}
	it := seq[0]
	switch {
	case it.notAhead:
		if at < len(rs) && it.class.has(rs[at]) {
			return -1
		}
		return matchSeq(seq[1:], rs, at)
	case it.group != nil:
		for _, lit := range it.group {
			if hasLiteral(rs, at, lit, it.fold) {
				if end := matchSeq(seq[1:], rs, at+len(lit)); end >= 0 {
					return end
				}
			}
		}
		if it.min == 0 {
			return matchSeq(seq[1:], rs, at)
		}
		return -1
	}
	n := 0
	for (it.max < 0 || n < it.max) && at+n < len(rs) && it.class.has(rs[at+n]) {
		n++
	}
	for ; n >= it.min; n-- {
		if end := matchSeq(seq[1:], rs, at+n); end >= 0 {
			return end
		}
	}
	return -1
}

func hasLiteral(rs []rune, at int, lit []rune, fold bool) bool {
	if at+len(lit) > len(rs) {
		return false
	}
	for i, r := range lit {
		if q := rs[at+i]; q != r && !(fold && unicode.ToLower(q) == unicode.ToLower(r)) {
			return false
		}
	}
	return true
}
