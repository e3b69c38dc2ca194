package workload_test

import (
	"context"
	"fmt"

	"github.com/lmbench/lmbench/sdk/sdktest"
	"github.com/lmbench/lmbench/sdk/workload"
)

// A document of exactly 200 tokens for this model: probe for words that
// cost one token each, then build from them; every text is counted and
// adjusted until it is exact. In New, tok is env.Tokenizer and ctx
// env.Context; here sdktest's fake tokenizer plays the engine.
func ExampleTokenizer_ExactTexts() {
	ctx := context.Background()
	tok := workload.NewTokenizer(&sdktest.FakeTokenizer{})
	words, err := tok.OneTokenWords(ctx, []string{"hi", "extraordinary", "the"})
	if err != nil {
		panic(err)
	}
	docs, err := tok.ExactTexts(ctx, []string{"Document 0:", "Document 1:"}, words, 200)
	if err != nil {
		panic(err)
	}
	counts, _ := tok.Count(ctx, docs...)
	chats, _ := tok.CountChats(ctx, workload.TokenChat{Messages: []workload.TokenMessage{{Role: "user", Content: docs[0]}}})
	fmt.Println(words, counts, chats)
	// Output:
	// [hi the] [200 200] [205]
}
