package sdktest

import "testing"

// UserText returns the text of s's one message, a user turn, and fails t
// at once unless s is a chat request of exactly that.
func UserText(t testing.TB, s Sent) string {
	t.Helper()
	if len(s.Messages) != 1 || s.Messages[0].Role != "user" {
		t.Fatalf("%s: want one user message, got %+v", s.ID, s.Messages)
	}
	return s.Messages[0].Content
}
