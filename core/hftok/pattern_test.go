package hftok

import (
	"strings"
	"testing"

	"github.com/dlclark/regexp2/v2"
	"github.com/google/go-cmp/cmp"
)

// familyPatterns are the Split patterns of the families' tokenizer.json
// files (GPT-2's is ByteLevel's own).
var familyPatterns = map[string]string{
	"gpt2":            gpt2Pattern,
	"llama3":          `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`,
	"qwen":            `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`,
	"deepseek":        "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+",
	"deepseek-digits": `\p{N}{1,3}`,
	"deepseek-cjk":    "[\u4e00-\u9fa5\u3040-\u309f\u30a0-\u30ff]+",
	"gptoss":          `[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`,
}

// TestPatternMatchesRegexp2: the families' patterns parse, and match
// exactly where regexp2 does on the golden texts and on the hard cases.
func TestPatternMatchesRegexp2(t *testing.T) {
	texts := append(goldenTextsOf(7, 1500),
		"", " ", "  a", "a  ", "\n \n", " \r\n\r\n x", "I'M HE'S we'Re 'T", "x\u00a0\u00a0y", "\u2028\u3000z",
		"a\u0301b\u0301", "ÅÅǅǅ ǅa", "!!!!abc", "[abc] {x} ^y |z", strings.Repeat(" ", 40)+"w")
	for name, expr := range familyPatterns {
		t.Run(name, func(t *testing.T) {
			pt, err := parsePattern(expr)
			if err != nil {
				t.Fatalf("not parsed: %v", err)
			}
			re := regexp2.MustCompile(expr)
			for _, s := range texts {
				want, err := re.FindAllStringIndex(s, -1)
				if err != nil {
					t.Fatal(err)
				}
				if d := cmp.Diff(want, pt.findAll(s)); d != "" {
					t.Fatalf("%q (-regexp2 +ours):\n%s", s, d)
				}
			}
		})
	}
}

// TestPatternFallback: what the matcher does not parse goes to regexp2.
func TestPatternFallback(t *testing.T) {
	t.Parallel()
	for _, expr := range []string{`a*`, `(ab)+`, `a+?`, `\w+`, `[[:alpha:]]`, `.`, `a|`, `(?=x)y`, `\bx`} {
		if _, err := parsePattern(expr); err == nil {
			t.Errorf("%q parsed; want it left to regexp2", expr)
		}
	}
}
