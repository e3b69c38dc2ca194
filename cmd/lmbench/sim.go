package main

import (
	"fmt"
	"net"
	"strconv"

	"github.com/spf13/pflag"

	"github.com/lmbench/lmbench/core/config"
	"github.com/lmbench/lmbench/core/config/simconfig"
	"github.com/lmbench/lmbench/core/sim"
)

// simFlags are lmbench sim's flags: where to listen, and the built-in
// engine's settings (reg's).
type simFlags struct {
	host     string
	port     int
	logLevel string
	reg      *config.Registry
}

func (f *simFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.host, "host", "127.0.0.1", "Address to listen on (loopback only).")
	fs.IntVar(&f.port, "port", 8000, "Port to listen on (0 = any free port).")
	fs.StringVar(&f.logLevel, "log-level", "info", "Log level.")
	fs.BoolP("help", "h", false, "Show help.")
	f.reg = simconfig.NewRegistry()
	f.reg.RegisterFlags(fs, nil)
	fs.SortFlags = true // its help lists them by name
}

// cmdSim is `lmbench sim`: the built-in engine, served alone.
func cmdSim(c *cli, args []string) error {
	var f simFlags
	fs, err := c.parse(args, f.register, false)
	if err != nil {
		return err
	}
	// The environment too (LMBENCH_SIM_GPU_GB), as lmbench run reads it;
	// other LMBENCH_* variables are lmbench run's business.
	v, err := f.reg.Load(config.Sources{Flags: fs})
	if err != nil {
		return usageError{err}
	}
	cfg, err := simconfig.Config(v)
	if err != nil {
		return usageError{err}
	}
	log, err := newLogger(c.stderr, f.logLevel, "auto", isTerminal(c.stderr))
	if err != nil {
		return err
	}
	srv, err := sim.New(cfg, log)
	if err != nil {
		return err
	}
	base, err := srv.Start(net.JoinHostPort(f.host, strconv.Itoa(f.port)))
	if err != nil {
		return fmt.Errorf("--port %d: %w", f.port, err)
	}
	defer srv.Close()
	fmt.Fprintf(c.stdout, "lmbench sim serving model %q at %s (Ctrl-C to stop)\n", cfg.Model, base)
	ctx, stop := untilSignal()
	defer stop()
	<-ctx.Done()
	return nil
}
