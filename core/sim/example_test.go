package sim_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/rs/zerolog"

	"github.com/lmbench/lmbench/core/sim"
)

func Example() {
	cfg := sim.DefaultConfig()
	cfg.TimeScale = 0 // no delays: an example should not wait
	srv, err := sim.New(cfg, zerolog.Nop())
	if err != nil {
		panic(err)
	}
	defer srv.Close()
	baseURL, err := srv.Start("127.0.0.1:0")
	if err != nil {
		panic(err)
	}

	resp, err := http.Post(baseURL+"/v1/completions", "application/json",
		strings.NewReader(`{"model":"lmbench-sim","prompt":"four words of prompt","max_tokens":3}`))
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	var out struct {
		Choices []struct{ Text string }
		Usage   struct {
			PromptTokens     int `json:"prompt_tokens"`
			CompletionTokens int `json:"completion_tokens"`
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		panic(err)
	}
	fmt.Printf("%q: %d prompt tokens, %d completion tokens\n",
		out.Choices[0].Text, out.Usage.PromptTokens, out.Usage.CompletionTokens)
	// Output: "the quick brown": 4 prompt tokens, 3 completion tokens
}
