package main

import (
	"context"
	"os"

	"github.com/spf13/pflag"

	"github.com/lmbench/lmbench/core/probe"
)

// probeFlags are lmbench probe's flags.
type probeFlags struct {
	probe.Setup
	json bool
}

func (f *probeFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.EngineURL, "engine-url", "", "The engine's address (http://host:port; a bare port means this machine).")
	fs.StringVar(&f.Kind, "engine-kind", "auto", "The engine's kind, instead of asking it.")
	fs.StringVar(&f.MetricsURL, "metrics-url", "", "Its Prometheus metrics (default: the engine's /metrics).")
	fs.BoolVar(&f.json, "json", false, "Print the report as JSON.")
	fs.SortFlags = true // its help lists them by name
}

// cmdProbe is lmbench probe (core/probe).
func cmdProbe(c *cli, args []string) error {
	var f probeFlags
	if _, err := c.parse(args, f.register, false); err != nil {
		return err
	}
	f.APIKey = os.Getenv("OPENAI_API_KEY")
	p, err := probe.Engine(context.Background(), f.Setup)
	if err != nil {
		return err
	}
	return p.Write(c.stdout, f.json)
}
