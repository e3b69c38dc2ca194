package bench

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/lmbench/lmbench/core/config"
	"github.com/lmbench/lmbench/core/pluginset"
	"github.com/lmbench/lmbench/sdk/protocol"
)

// A workload without the tokenizer capability: --tokenizer auto (the
// default) is silent, since it does what it can; a tokenizer asked for by
// name is said not to be used, in plain words.
func TestTokenizerOfAWorkloadThatTakesNone(t *testing.T) {
	t.Parallel()
	for tok, want := range map[string]string{
		"auto":   "",
		"words":  "",
		"engine": "--tokenizer engine is not used: workload old counts its prompt lengths itself, in whitespace words",
	} {
		var logs bytes.Buffer
		p := &Prepared{}
		s := Setup{Spec: &config.Spec{Tokenizer: tok},
			Workload: &pluginset.Workload{Desc: protocol.WorkloadDescription{Info: protocol.PluginInfo{Name: "old", ProtocolMinor: 1}}}}
		counter, err := p.tokenizer(context.Background(), s, "--tokenizer", zerolog.New(&logs).Level(zerolog.InfoLevel))
		if err != nil || counter != nil || p.Tokenizer != "words" {
			t.Fatalf("%s: counter %v, tokenizer %q, err %v; want none, words", tok, counter, p.Tokenizer, err)
		}
		got := logs.String()
		if want == "" && got != "" {
			t.Errorf("--tokenizer %s logged %s, want nothing", tok, got)
		}
		if want != "" && (!strings.Contains(got, want) || strings.Contains(got, "protocol minor")) {
			t.Errorf("--tokenizer %s logged %q, want %q", tok, got, want)
		}
	}
}
