package hftok

import (
	"unicode"
	"unicode/utf8"
)

// addedToken is a tokenizer.json added token.
type addedToken struct {
	ID         uint32 `json:"id"`
	Content    string `json:"content"`
	SingleWord bool   `json:"single_word"`
	LStrip     bool   `json:"lstrip"`
	RStrip     bool   `json:"rstrip"`
	Normalized bool   `json:"normalized"`
	Special    bool   `json:"special"`
}

// trie finds added tokens in a text leftmost-longest, as the crate's
// Aho-Corasick automaton (MatchKind::LeftmostLongest) does.
type trie struct {
	nodes []trieNode
	first [256]bool // bytes some token starts with
}

type trieNode struct {
	next  map[byte]int32
	token int32 // index into the tokens, -1: none ends here
}

func newTrie() *trie { return &trie{nodes: []trieNode{{token: -1}}} }

func (t *trie) add(s string, token int) {
	if s == "" {
		return
	}
	n := int32(0)
	for i := 0; i < len(s); i++ {
		c := s[i]
		nx, ok := t.nodes[n].next[c]
		if !ok {
			if t.nodes[n].next == nil {
				t.nodes[n].next = map[byte]int32{}
			}
			nx = int32(len(t.nodes))
			t.nodes = append(t.nodes, trieNode{token: -1})
			t.nodes[n].next[c] = nx
		}
		n = nx
	}
	if t.nodes[n].token < 0 { // the first of equal contents wins
		t.nodes[n].token = int32(token)
	}
	t.first[s[0]] = true
}

func (t *trie) empty() bool { return len(t.nodes) == 1 }

// longestAt is the longest token starting at s[i:], and its end.
func (t *trie) longestAt(s string, i int) (token, end int) {
	token, end = -1, -1
	n := int32(0)
	for j := i; j < len(s); j++ {
		nx, ok := t.nodes[n].next[s[j]]
		if !ok {
			break
		}
		n = nx
		if t.nodes[n].token >= 0 {
			token, end = int(t.nodes[n].token), j+1
		}
	}
	return token, end
}

// added is a tokenizer's added vocabulary: tokens matched on the raw
// text (normalized false) and on the normalized text (normalized true).
type added struct {
	tokens        []addedToken
	raw, onNormal *trie
}

// match is one added token found in a text.
type match struct {
	token      int
	start, end int
}

// find is the added tokens in s, as AddedVocabulary::find_matches finds
// them: leftmost-longest, a single_word token only between non-word
// characters, lstrip and rstrip taking the whitespace beside it.
func (a *added) find(t *trie, s string) []match {
	if t.empty() {
		return nil
	}
	var out []match
	from := 0 // end of the previous match
	for i := 0; i < len(s); {
		if !t.first[s[i]] {
			i++
			continue
		}
		k, end := t.longestAt(s, i)
		if k < 0 {
			i++
			continue
		}
		tok := a.tokens[k]
		start, stop := i, end
		i = end
		if tok.SingleWord && !(start == 0 || !endsWithWord(s[:start])) || tok.SingleWord && !(stop == len(s) || !startsWithWord(s[stop:])) {
			continue
		}
		if tok.LStrip {
			start = max(spaceLeftmostAtEnd(s[:start]), from)
		}
		if tok.RStrip {
			stop += spaceRightmostAtStart(s[stop:])
		}
		out = append(out, match{k, start, stop})
		from = stop
	}
	return out
}

// isWordChar is Rust's char::is_alphanumeric or '_', the crate's test.
func isWordChar(r rune) bool { return r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r) }

func endsWithWord(s string) bool {
	r, _ := utf8.DecodeLastRuneInString(s)
	return s != "" && isWordChar(r)
}

func startsWithWord(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return s != "" && isWordChar(r)
}

// spaceLeftmostAtEnd is where the whitespace ending s starts.
func spaceLeftmostAtEnd(s string) int {
	i := len(s)
	for i > 0 {
		r, size := utf8.DecodeLastRuneInString(s[:i])
		if !unicode.IsSpace(r) {
			break
		}
		i -= size
	}
	return i
}

// spaceRightmostAtStart is the length of the whitespace starting s.
func spaceRightmostAtStart(s string) int {
	i := 0
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		if !unicode.IsSpace(r) {
			break
		}
		i += size
	}
	return i
}
