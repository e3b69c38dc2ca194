package hftok

import (
	"strings"
	"testing"

	"github.com/lmbench/lmbench/sdk/pseudoword"
)

// documentTokens is the length of the benchmark's documents.
const documentTokens = 8000

// mixedDocument is a text of at least n tokens for tk: golden texts
// (prose, code, CJK, numbers, emoji, repeated symbols) joined by
// newlines.
func mixedDocument(tb testing.TB, tk *Tokenizer, n int) string {
	var b strings.Builder
	for i, s := range goldenTextsOf(8000, 4000) {
		b.WriteString(s)
		b.WriteString("\n")
		if i%16 == 0 && count(tb, tk, b.String()) >= n {
			break
		}
	}
	return b.String()
}

// wordsDocument is a long-doc-qa document of at least n tokens for tk:
// pseudo-words joined by spaces.
func wordsDocument(tb testing.TB, tk *Tokenizer, n int) string {
	vocab := pseudoword.Vocab(5000, 1)
	idx := make([]int, 0, n)
	for i := 0; ; i++ {
		idx = append(idx, (i*7919)%len(vocab))
		if i%64 == 0 && count(tb, tk, pseudoword.Join(vocab, idx)) >= n {
			return pseudoword.Join(vocab, idx)
		}
	}
}

func count(tb testing.TB, tk *Tokenizer, s string) int {
	n, err := tk.Count(s)
	if err != nil {
		tb.Fatal(err)
	}
	return n
}

// BenchmarkCount8000 counts an 8,000-token document per family, a mixed
// one and one of pseudo-words, the word cache emptied before each count
// (the target: 20 ms a count).
func BenchmarkCount8000(b *testing.B) {
	for _, fam := range families {
		b.Run(fam, func(b *testing.B) {
			tk, err := Load(familyFile(b, fam))
			if err != nil {
				b.Fatal(err)
			}
			for name, doc := range map[string]string{"mixed": mixedDocument(b, tk, documentTokens), "words": wordsDocument(b, tk, documentTokens)} {
				b.Run(name, func(b *testing.B) {
					n := count(b, tk, doc)
					for b.Loop() {
						b.StopTimer()
						clear(tk.cache)
						b.StartTimer()
						if _, err := tk.Count(doc); err != nil {
							b.Fatal(err)
						}
					}
					b.ReportMetric(float64(n), "tokens")
				})
			}
		})
	}
}
