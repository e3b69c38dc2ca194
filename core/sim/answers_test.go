package sim

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestNeedleAnswer(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, prompt, want string }{
		{"stated", "filler The access code of vault 17 is 4832. more\n\nQuestion: What is the access code of vault 17? Answer.", "4832"},
		{"the last question counts", "The colour of box 2 is red. The colour of box 3 is blue. What is the colour of box 2? What is the colour of box 3?", "blue"},
		{"another vault's fact", "The access code of vault 1 is 1111. What is the access code of vault 17?", dontKnow},
		{"no question", "The access code of vault 17 is 4832.", dontKnow},
		{"at the very end", "What is the access code of vault 17? The access code of vault 17 is 4832.", "4832"},
	} {
		if got := needleAnswer(tc.prompt); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
}

// answerOf posts one chat message to a server and returns the whole
// answer's text and finish reason.
func answerOf(t *testing.T, url, content string) (text, finish string) {
	t.Helper()
	status, body := postRead(t, url+"/v1/chat/completions", chatBody(content, `"max_tokens":8`))
	if status != 200 {
		t.Fatalf("status %d: %s", status, body)
	}
	var r struct {
		Choices []struct {
			Message      struct{ Content string } `json:"message"`
			FinishReason string                   `json:"finish_reason"`
		} `json:"choices"`
	}
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		t.Fatal(err)
	}
	return r.Choices[0].Message.Content, r.Choices[0].FinishReason
}

// With answers on, the engine answers from the prompt and stops; with
// every blended chunk corrupted, a fact that was reused away from the
// prompt's start is lost, while one in the cached prefix is not.
func TestAnswersAndBlendCorrupt(t *testing.T) {
	t.Parallel()
	docA := "Document A: " + words("a", 40) + " The access code of vault 1 is 1111. " + words("b", 40)
	docB := "Document B: " + words("c", 40) + " The access code of vault 2 is 2222. " + words("d", 40)
	ask := func(n string) string {
		return "\n\nQuestion: What is the access code of vault " + n + "? Answer with the code only."
	}

	cfg := fastConfig()
	cfg.Answers, cfg.Blend = true, true
	_, url := startServer(t, cfg)
	if text, finish := answerOf(t, url, docA+ask("1")); text != "1111" || finish != "stop" {
		t.Errorf("answer %q (%s), want 1111 (stop)", text, finish)
	}

	cfg.Faults.BlendCorrupt = 1
	_, url = startServer(t, cfg)
	answerOf(t, url, docA) // warm both documents
	answerOf(t, url, docB)
	// docB's chunks are blended (docA is the cached prefix) and lost;
	// docA's fact, in the prefix, is not.
	prompt := docA + "\n\n" + docB
	if text, _ := answerOf(t, url, prompt+ask("2")); text != dontKnow {
		t.Errorf("a fact in a corrupted blended chunk: %q, want %q", text, dontKnow)
	}
	answerOf(t, url, docB) // warm again (the prompt above cached docB after docA only)
	if text, _ := answerOf(t, url, docB+"\n\n"+docA+ask("2")); text != "2222" {
		t.Errorf("a fact in the cached prefix: %q, want 2222", text)
	}
}

func TestBlendCorruptNeedsBlendAndAnswers(t *testing.T) {
	t.Parallel()
	cfg := fastConfig()
	cfg.Faults.BlendCorrupt = 0.5
	err := cfg.Validate()
	if err == nil || !strings.HasSuffix(err.Error(), "BlendCorrupt: 0.5 needs blend and answers on (only a blended chunk can be corrupted, and only an answer shows it)") {
		t.Errorf("Validate: %v", err)
	}
}
