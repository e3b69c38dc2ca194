package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/spf13/pflag"

	"github.com/lmbench/lmbench/core/bench"
)

const probeHelp = `Usage: lmbench probe --engine-url URL [--engine-kind KIND] [--metrics-url URL] [--json]

Which engine serves URL (vLLM, SGLang, Ollama, llama.cpp, TGI, ...), what it
reports and what lmbench can and cannot measure on it. Sends no completion.
`

// cmdProbe is lmbench probe: flags, one core call, printing.
func cmdProbe(args []string, stdout io.Writer) error {
	var s bench.ProbeSetup
	var asJSON, help bool
	fs := pflag.NewFlagSet("lmbench probe", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&s.EngineURL, "engine-url", "", "The engine's address (http://host:port; a bare port means this machine).")
	fs.StringVar(&s.Kind, "engine-kind", "auto", "The engine's kind, instead of asking it.")
	fs.StringVar(&s.MetricsURL, "metrics-url", "", "Its Prometheus metrics (default: the engine's /metrics).")
	fs.BoolVar(&asJSON, "json", false, "Print the report as JSON.")
	fs.BoolVarP(&help, "help", "h", false, "Show help.")
	if err := fs.Parse(args); err != nil {
		return usageError{err}
	}
	if help {
		_, err := fmt.Fprint(stdout, probeHelp, "\nFlags:\n", fs.FlagUsagesWrapped(100))
		return err
	}
	s.APIKey = os.Getenv("OPENAI_API_KEY")
	p, err := bench.Probe(context.Background(), s)
	if err != nil {
		return cliError(err)
	}
	return p.Write(stdout, asJSON)
}
