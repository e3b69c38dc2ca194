package record

import (
	"strings"
	"testing"
)

// A stated prompt length is written only when there is one, so journals
// of workloads that state none keep their exact bytes.
func TestAppendJSONStatedPromptTokens(t *testing.T) {
	t.Parallel()
	r := Record{RunID: "r", Phase: Measure, RequestID: "q", StatedPromptTokens: 2005}
	got := string(AppendJSON(nil, &r))
	if !strings.HasSuffix(got, `"response_model":"","stated_prompt_tokens":2005}`) {
		t.Errorf("record with a stated length: %s", got)
	}
	back, err := decodeRecord(2, []byte(got))
	if err != nil || back.StatedPromptTokens != 2005 {
		t.Errorf("read back: %d, %v", back.StatedPromptTokens, err)
	}
	r.StatedPromptTokens = 0
	if got := string(AppendJSON(nil, &r)); strings.Contains(got, "stated_prompt_tokens") {
		t.Errorf("record without one mentions it: %s", got)
	}
}
