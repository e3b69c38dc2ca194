package hftok

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/lmbench/lmbench/sdk/pseudoword"
)

// goldenTextsOf is the goldens' inputs, the same for every run from the
// seed: the workloads' own prompts (pseudo-words, "hi" filler, numbers)
// and the texts tokenizers get wrong (repeated symbols, decomposed
// Unicode, emoji sequences, CJK, code, numbers, whitespace runs, added
// tokens written in a text), alone and mixed.
func goldenTextsOf(seed uint64, n int) []string {
	g := textGen{rng: rand.New(rand.NewPCG(seed, 0x746f6b)), vocab: pseudoword.Vocab(2000, int64(seed))}
	kinds := []func() string{g.repeated, g.decomposed, g.emoji, g.cjk, g.code, g.numbers, g.whitespace, g.workload, g.prose, g.scripts, g.special}
	out := make([]string, n)
	for i := range out {
		if g.rng.IntN(4) != 0 {
			out[i] = kinds[g.rng.IntN(len(kinds))]()
			continue
		}
		var b strings.Builder // a mix of several kinds
		for range 2 + g.rng.IntN(5) {
			b.WriteString(kinds[g.rng.IntN(len(kinds))]())
			b.WriteString(g.pick(" ", "", "\n", "  ", ". ", "\n\n"))
		}
		out[i] = b.String()
	}
	return out
}

type textGen struct {
	rng   *rand.Rand
	vocab []string
}

func (g textGen) pick(s ...string) string { return s[g.rng.IntN(len(s))] }

func (g textGen) repeated() string {
	unit := g.pick("!", " ", "a", "-", "=", "*", ".", "\n", "\t", "0", "1", "é", "中", "😀", "'", "_", "#", "/", "\\", "ab", "..", "<", ">", "\u00a0", "ー", "aa ", "?!", "\r\n", "ñ", "z")
	s := strings.Repeat(unit, 1+g.rng.IntN(70))
	switch g.rng.IntN(4) {
	case 0:
		return g.word() + s
	case 1:
		return s + " " + g.word()
	}
	return s
}

func (g textGen) decomposed() string {
	parts := []string{"e\u0301", "a\u0308", "n\u0303", "A\u030a", "o\u0302", "c\u0327", "u\u0308\u0301", "i\u0307", "\u1112\u1161\u11ab", "\u1100\u1173\u11af", "e\u0301\u0301", "z\u0335\u0327", "\u0915\u094d\u0937", "\u00e9", "\u212b", "\ufb01", "\u2460", "x\u20dd", "Ａ", "ｶ\uff9e"}
	var b strings.Builder
	for range 1 + g.rng.IntN(8) {
		if g.rng.IntN(2) == 0 {
			b.WriteString(g.word()[:1])
		}
		b.WriteString(parts[g.rng.IntN(len(parts))])
		if g.rng.IntN(3) == 0 {
			b.WriteString(" ")
		}
	}
	return b.String()
}

func (g textGen) emoji() string {
	parts := []string{"👍", "👍🏽", "👍🏿", "👨‍👩‍👧‍👦", "👩🏽‍💻", "🏳️‍🌈", "❤️", "❤", "🇫🇷", "🇯🇵", "1️⃣", "🧑‍🤝‍🧑", "🤷‍♀️", "😀", "🫠", "🦜", "☕", "✨", "🙏🏻"}
	var b strings.Builder
	for range 1 + g.rng.IntN(6) {
		b.WriteString(parts[g.rng.IntN(len(parts))])
		b.WriteString(g.pick("", " ", "", g.word(), "!"))
	}
	return b.String()
}

func (g textGen) cjk() string {
	var b strings.Builder
	for range 1 + g.rng.IntN(40) {
		switch g.rng.IntN(10) {
		case 0, 1, 2, 3:
			b.WriteRune(rune(0x4e00 + g.rng.IntN(0x5200))) // Han
		case 4, 5:
			b.WriteRune(rune(0x3041 + g.rng.IntN(0x56))) // Hiragana
		case 6:
			b.WriteRune(rune(0x30a1 + g.rng.IntN(0x5a))) // Katakana
		case 7:
			b.WriteRune(rune(0xac00 + g.rng.IntN(11172))) // Hangul
		case 8:
			b.WriteString(g.pick("。", "、", "，", "！", "？", "「", "」", "（", "）", "\u3000", " "))
		default:
			b.WriteString(g.pick("的", "是", "日本", "中文", "한국어", "テスト", "東京", "年", "月"))
		}
	}
	return b.String()
}

func (g textGen) code() string {
	id := func() string { return g.word() + g.pick("", "_"+g.word(), "2", "ID", "Count") }
	ind := strings.Repeat(g.pick(" ", "\t", "  ", "    "), g.rng.IntN(4))
	switch g.rng.IntN(6) {
	case 0:
		return fmt.Sprintf("def %s(%s, %s=None):\n%sreturn %s ** 2 + %d\n", id(), id(), id(), ind+"    ", id(), g.rng.IntN(1000))
	case 1:
		return fmt.Sprintf("func (s *%s) %s(ctx context.Context) error {\n%sif err := s.%s(); err != nil {\n%s\treturn fmt.Errorf(\"%s: %%w\", err)\n%s}\n}\n", id(), id(), ind, id(), ind, g.word(), ind)
	case 2:
		return fmt.Sprintf("const %s = [%d, %d, %d].map((x) => x*%d); // %s\n", id(), g.rng.IntN(99), g.rng.IntN(99), g.rng.IntN(999), g.rng.IntN(9), g.word())
	case 3:
		return fmt.Sprintf("{\"%s\": {\"%s\": [%d, %.3f, null, true]}, \"%s\": \"%s\"}", id(), id(), g.rng.IntN(1e6), g.rng.Float64()*100, id(), g.word())
	case 4:
		return fmt.Sprintf("SELECT %s, COUNT(*) FROM %s WHERE %s >= %d GROUP BY 1;\n", id(), id(), id(), g.rng.IntN(500))
	}
	return fmt.Sprintf("<div class=\"%s\">%s&nbsp;<b>%s</b></div>\r\n%s#include <%s.h>\n", id(), g.word(), g.word(), ind, id())
}

func (g textGen) numbers() string {
	switch g.rng.IntN(6) {
	case 0:
		return fmt.Sprint(g.rng.Int64())
	case 1:
		return fmt.Sprintf("%.*f", g.rng.IntN(8), g.rng.NormFloat64()*1e4)
	case 2:
		return fmt.Sprintf("%d,%03d,%03d", g.rng.IntN(1000), g.rng.IntN(1000), g.rng.IntN(1000))
	case 3:
		return strings.Repeat(fmt.Sprint(g.rng.IntN(10)), 1+g.rng.IntN(40))
	case 4:
		return fmt.Sprintf("%d-%02d-%02dT%02d:%02d:%02dZ", 1990+g.rng.IntN(50), 1+g.rng.IntN(12), 1+g.rng.IntN(28), g.rng.IntN(24), g.rng.IntN(60), g.rng.IntN(60))
	}
	return fmt.Sprintf("%d%% of %de%d, v%d.%d.%d, 0x%X, ٣٤٥, ४२", g.rng.IntN(101), g.rng.IntN(10), g.rng.IntN(30), g.rng.IntN(3), g.rng.IntN(30), g.rng.IntN(300), g.rng.Uint32())
}

func (g textGen) whitespace() string {
	var b strings.Builder
	for range 1 + g.rng.IntN(8) {
		b.WriteString(strings.Repeat(g.pick(" ", "\t", "\n", "\r\n", "\u00a0", "\u3000", "\u2009", "\v", "\f"), 1+g.rng.IntN(12)))
		if g.rng.IntN(2) == 0 {
			b.WriteString(g.word())
		}
	}
	return b.String()
}

// workload is what the workloads send: pseudo-words, "hi" filler,
// numbers joined by spaces.
func (g textGen) workload() string {
	n := 1 + g.rng.IntN(60)
	switch g.rng.IntN(3) {
	case 0:
		idx := make([]int, n)
		for i := range idx {
			idx[i] = g.rng.IntN(len(g.vocab))
		}
		return pseudoword.Join(g.vocab, idx)
	case 1:
		return strings.TrimSpace(strings.Repeat("hi ", n))
	}
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprint(&b, g.rng.IntN(100000))
	}
	return b.String()
}

var proseWords = strings.Fields("the of and to in is was that for it with as his on be at by I had not are but from or have an they which one you were her all she there would their we him been has when who will more no if out so said what up its about into than them can only other new some could time these two may then do first any my now such like our over man me even most made after also did many before must through back years where much your way well down should because each just those people how too little state good very make world still own see men work long get here between both life being under never day same another know while last might us great old year off come since against go came right used take three Michael Paris OpenAI Kubernetes don't it's we're they've I'll she'd O'Neil")

func (g textGen) prose() string {
	var b strings.Builder
	for i := range 3 + g.rng.IntN(40) {
		w := proseWords[g.rng.IntN(len(proseWords))]
		if i == 0 || g.rng.IntN(12) == 0 {
			w = strings.ToUpper(w[:1]) + w[1:]
		}
		if g.rng.IntN(40) == 0 {
			w = strings.ToUpper(w)
		}
		if i > 0 {
			b.WriteString(" ")
		}
		b.WriteString(w)
		b.WriteString(g.pick("", "", "", "", "", ",", ".", ";", ":", "?", "!", "...", " -", "'s", "\n"))
	}
	return b.String()
}

// scripts is text in other alphabets, and rare characters a vocabulary
// lacks (byte fallback).
func (g textGen) scripts() string {
	blocks := [][2]int{{0x00c0, 0x24f}, {0x0391, 0x3c9}, {0x0410, 0x44f}, {0x05d0, 0x5ea}, {0x0627, 0x64a}, {0x0905, 0x939}, {0x0e01, 0xe2e}, {0x10a0, 0x10ff}, {0x1f300, 0x1f5ff}, {0x20000, 0x2a6df}, {0xe000, 0xe0ff}, {0x2200, 0x22ff}, {0x0021, 0x007e}, {0x0001, 0x001f}}
	bl := blocks[g.rng.IntN(len(blocks))]
	var b strings.Builder
	for range 1 + g.rng.IntN(30) {
		b.WriteRune(rune(bl[0] + g.rng.IntN(bl[1]-bl[0]+1)))
		if g.rng.IntN(6) == 0 {
			b.WriteByte(' ')
		}
	}
	return b.String()
}

// special is text holding the added tokens of the families, whole and
// cut, beside spaces and newlines.
func (g textGen) special() string {
	toks := []string{"<|im_start|>", "<|im_end|>", "<|endoftext|>", "<s>", "</s>", "<unk>", "[INST]", "[/INST]", "<bos>", "<eos>", "<start_of_turn>", "<end_of_turn>", "<|begin_of_text|>", "<|eot_id|>", "<|start_header_id|>", "<|end_header_id|>", "<｜User｜>", "<｜Assistant｜>", "<｜begin▁of▁sentence｜>", "<think>", "</think>", "<tool_call>", "<|start|>", "<|message|>", "<|channel|>", "<|return|>", "<mask>", "<unused7>", "<|fim_prefix|>", "<0x41>", "<|im_", "<start_of"}
	var b strings.Builder
	for range 1 + g.rng.IntN(6) {
		b.WriteString(g.pick("", " ", "\n", "  ", "\n\n"))
		b.WriteString(toks[g.rng.IntN(len(toks))])
		b.WriteString(g.pick("", " ", "\n", "user\n", g.word(), " "+g.word()+" "))
	}
	return b.String()
}

func (g textGen) word() string {
	if g.rng.IntN(2) == 0 {
		return g.vocab[g.rng.IntN(len(g.vocab))]
	}
	return proseWords[g.rng.IntN(len(proseWords))]
}
