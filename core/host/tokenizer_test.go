package host

import (
	"encoding/json"
	"testing"

	"github.com/lmbench/lmbench/core/record"
)

func TestRunTokenizer(t *testing.T) {
	t.Parallel()
	for cfg, want := range map[string]string{
		`{"tokenizer":"engine","seed":1}`: "engine",
		`{"tokenizer":"words"}`:           "words",
		`{"seed":1}`:                      "", // a journal from before --tokenizer
		``:                                "",
	} {
		if got := runTokenizer(record.Run{Config: json.RawMessage(cfg)}); got != want {
			t.Errorf("config %s: %q, want %q", cfg, got, want)
		}
	}
}
