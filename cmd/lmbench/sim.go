package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"strconv"
	"syscall"

	"github.com/spf13/pflag"

	"github.com/lmbench/lmbench/core/config"
	"github.com/lmbench/lmbench/core/sim"
)

// cmdSim is `lmbench sim`: the built-in engine, served alone.
func cmdSim(args []string, stdout, stderr io.Writer) error {
	reg := simRegistry()
	fs := pflag.NewFlagSet("lmbench sim", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	host := fs.String("host", "127.0.0.1", "Address to listen on (loopback only).")
	port := fs.Int("port", 8000, "Port to listen on (0 = any free port).")
	logLevel := fs.String("log-level", "info", "Log level.")
	help := fs.BoolP("help", "h", false, "Show help.")
	reg.RegisterFlags(fs, nil)
	if err := fs.Parse(args); err != nil {
		return usageError{err}
	}
	if *help {
		fmt.Fprintf(stdout, "Usage: lmbench sim [flags]\n\n"+
			"Serve the built-in simulated engine: vLLM's OpenAI-compatible API (/v1/models, /v1/chat/completions,\n"+
			"/v1/completions, /tokenize, /detokenize, /metrics, /reset_prefix_cache, /health) and LMCache's /status,\n"+
			"over a tiered KV cache. It listens on loopback only. The same flags, prefixed --sim-, configure\n"+
			"lmbench run --engine-url builtin; both read the LMBENCH_SIM_* variables.\n\n%s\nFlags:\n%s", sim.CostModel, fs.FlagUsagesWrapped(100))
		return nil
	}
	// The environment too (LMBENCH_SIM_GPU_GB), as lmbench run reads it;
	// other LMBENCH_* variables are lmbench run's business.
	v, err := reg.Load(config.Sources{Flags: fs})
	if err != nil {
		return usageError{err}
	}
	cfg, err := config.SimConfig(v)
	if err != nil {
		return usageError{err}
	}
	log, err := newLogger(stderr, *logLevel, "auto", isTerminal(stderr))
	if err != nil {
		return err
	}
	srv, err := sim.New(cfg, log)
	if err != nil {
		return err
	}
	base, err := srv.Start(net.JoinHostPort(*host, strconv.Itoa(*port)))
	if err != nil {
		return fmt.Errorf("--port %d: %w", *port, err)
	}
	defer srv.Close()
	fmt.Fprintf(stdout, "lmbench sim serving model %q at %s (Ctrl-C to stop)\n", cfg.Model, base)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	<-ctx.Done()
	return nil
}

// simRegistry holds the built-in engine's settings under lmbench sim's
// flags (--gpu-gb), with the keys and variables lmbench run gives them
// (sim_gpu_gb, LMBENCH_SIM_GPU_GB).
func simRegistry() *config.Registry {
	r := config.NewRegistry()
	for _, o := range config.SimOptions("") {
		if _, err := r.Add(o); err != nil {
			panic(err) // a programming error in the table, caught by every test
		}
	}
	return r
}
