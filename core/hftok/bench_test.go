package hftok

import (
	"strings"
	"testing"
)

// documentTokens is the length of the benchmark's document.
const documentTokens = 8000

// document is a text of at least n tokens for tk: golden-style texts
// (prose, code, CJK, numbers, emoji, repeated symbols) joined by
// newlines, as a long-document prompt mixes them.
func document(tb testing.TB, tk *Tokenizer, n int) string {
	var b strings.Builder
	for _, s := range goldenTextsOf(8000, 4000) {
		b.WriteString(s)
		b.WriteString("\n")
		if b.Len()%16 == 0 {
			if c, err := tk.Count(b.String()); err != nil {
				tb.Fatal(err)
			} else if c >= n {
				break
			}
		}
	}
	return b.String()
}

// BenchmarkCount8000 counts an 8,000-token document per family, the
// word cache emptied before each count (the target: 20 ms a count).
func BenchmarkCount8000(b *testing.B) {
	for _, fam := range families {
		b.Run(fam, func(b *testing.B) {
			tk, err := Load(familyFile(b, fam))
			if err != nil {
				b.Fatal(err)
			}
			doc := document(b, tk, documentTokens)
			n, _ := tk.Count(doc)
			b.ResetTimer()
			for range b.N {
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
}
