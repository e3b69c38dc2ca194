package sdktest

import (
	"hash/fnv"
	"time"
)

// OutOfOrderEngine answers every request successfully after 1 to 7 ms,
// chosen by a hash of its id, so requests sent together finish out of
// order, the same in every run: TTFT half the latency, 10 input tokens,
// max_tokens output tokens, text "answer to <id>".
func OutOfOrderEngine(s Sent) Reply {
	h := fnv.New32a()
	h.Write([]byte(s.ID))
	lat := time.Duration(1+h.Sum32()%7) * time.Millisecond
	return Reply{Success: true, Text: "answer to " + s.ID, TTFT: lat / 2, Latency: lat, InputTokens: 10, OutputTokens: s.MaxTokens}
}

// FixedEngine answers every request successfully after d: TTFT d/2, 10
// input tokens, max_tokens output tokens, text "answer to <id>".
func FixedEngine(d time.Duration) Engine {
	return func(s Sent) Reply {
		return Reply{Success: true, Text: "answer to " + s.ID, TTFT: d / 2, Latency: d, InputTokens: 10, OutputTokens: s.MaxTokens}
	}
}
