package wire

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	workloadv1 "github.com/lmbench/lmbench/sdk/proto/lmbench/workload/v1"
	"github.com/lmbench/lmbench/sdk/protocol"
)

func TestTokenizeQueryRoundTrip(t *testing.T) {
	t.Parallel()
	roundTrip(t, map[string]protocol.TokenQuery{
		"texts": {Texts: []string{"hello world", "", "日本語"}},
		"chats": {Chats: []protocol.Chat{
			{Messages: []protocol.ChatMessage{{Role: "system", Content: "be brief"}, {Role: "user", Content: "hi"}}},
			{Messages: []protocol.ChatMessage{{Role: "user", Content: ""}}},
		}},
		"tools and calls": {Chats: []protocol.Chat{{
			Messages: []protocol.ChatMessage{
				{Role: "user", Content: "weather?"},
				{Role: "assistant", ToolCalls: []protocol.ToolCall{{ID: "c1", Name: "get_weather", Arguments: `{"city":"Oslo"}`}}},
				{Role: "tool", Content: "rain", ToolCallID: "c1"},
			},
			Tools: []protocol.Tool{{Name: "get_weather", Description: "Weather by city", Parameters: `{"type":"object"}`}},
		}}},
		"both": {Texts: []string{"a"}, Chats: []protocol.Chat{{Messages: []protocol.ChatMessage{{Role: "user", Content: "b"}}}}},
	}, func(q protocol.TokenQuery) *workloadv1.TokenizeQuery { return toTokenizeQuery(7, q) },
		fromTokenizeQuery)
}

func TestTokenizeAnswerRoundTrip(t *testing.T) {
	t.Parallel()
	q := protocol.TokenQuery{Texts: []string{"a", "b"}, Chats: []protocol.Chat{{}}}
	roundTrip(t, map[string]protocol.TokenCounts{
		"counts": {Texts: []int{1, 2000000}, Chats: []int{0}},
	}, func(c protocol.TokenCounts) *workloadv1.TokenizeAnswer { return toTokenizeAnswer(3, c, nil) },
		func(a *workloadv1.TokenizeAnswer) protocol.TokenCounts {
			c, err := fromTokenizeAnswer(a, q)
			if err != nil {
				t.Fatal(err)
			}
			return c
		})
}

func TestTokenizeAnswerErrors(t *testing.T) {
	t.Parallel()
	q := protocol.TokenQuery{Texts: []string{"a", "b"}}
	for name, tc := range map[string]struct {
		a    *workloadv1.TokenizeAnswer
		want string
	}{
		"host error":  {toTokenizeAnswer(1, protocol.TokenCounts{}, errors.New("engine /tokenize: 500")), "engine /tokenize: 500"},
		"short":       {toTokenizeAnswer(1, protocol.TokenCounts{Texts: []int{1}}, nil), "the host answered 1 text and 0 chat counts for 2 texts and 0 chats"},
		"extra chats": {toTokenizeAnswer(1, protocol.TokenCounts{Texts: []int{1, 1}, Chats: []int{4}}, nil), "the host answered 2 text and 1 chat counts for 2 texts and 0 chats"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, err := fromTokenizeAnswer(tc.a, q)
			if err == nil {
				t.Fatal("no error")
			}
			if d := cmp.Diff(tc.want, err.Error()); d != "" {
				t.Errorf("error (-want +got):\n%s", d)
			}
		})
	}
}
