package exporter

import (
	"context"
	"fmt"
	"os"
	"sync"

	"github.com/rs/zerolog"

	"github.com/lmbench/lmbench/sdk/internal/serve"
	"github.com/lmbench/lmbench/sdk/option"
	"github.com/lmbench/lmbench/sdk/protocol"
	"github.com/lmbench/lmbench/sdk/wire"
)

// Serve runs def as a plugin process and exits.
func Serve[O any](def Definition[O]) {
	stdout, stderr := os.Stdout, os.Stderr
	srv := NewServer(def, serve.Logger(stderr))
	os.Exit(serve.Main(serve.Params{
		Kind:    protocol.ExporterKind,
		Name:    def.Name,
		Version: def.Version,
		Describe: func() (any, error) {
			return srv.Describe(context.Background(), protocol.HostInfo{})
		},
		Plugin: &wire.ExporterPlugin{Impl: srv},
	}, os.Args[1:], stdout, stderr))
}

// NewServer returns def as a protocol service (what Serve answers gRPC
// with; sdktest drives it in-process).
func NewServer[O any](def Definition[O], log zerolog.Logger) protocol.ExporterService {
	return &server[O]{def: def, log: log}
}

type server[O any] struct {
	def Definition[O]
	log zerolog.Logger

	mu       sync.Mutex
	host     protocol.HostInfo
	exp      Exporter
	finished bool
}

func (s *server[O]) Describe(_ context.Context, host protocol.HostInfo) (protocol.ExporterDescription, error) {
	specs, err := option.Specs(s.def.Defaults)
	if err != nil {
		return protocol.ExporterDescription{}, fmt.Errorf("exporter %s: invalid options struct: %v", s.def.Name, err)
	}
	s.mu.Lock()
	s.host = host
	s.mu.Unlock()
	return protocol.ExporterDescription{
		Info:    serve.Info(protocol.ExporterKind, s.def.Name, s.def.Version, s.def.Summary, s.def.Prefix, nil),
		Options: specs,
	}, nil
}

func (s *server[O]) Configure(_ context.Context, cfg protocol.ExporterConfig) (protocol.Configured, error) {
	opts, err := option.Decode(s.def.Defaults, cfg.Options)
	if err != nil {
		return protocol.Configured{Errors: option.Errors(err)}, nil
	}
	s.mu.Lock()
	host := s.host
	s.mu.Unlock()
	exp, err := s.def.New(opts, Env{Run: cfg.Run, Logger: s.log, Host: host})
	if err != nil {
		return protocol.Configured{Errors: option.Errors(err)}, nil
	}
	s.mu.Lock()
	s.exp, s.finished = exp, false // a new exporter starts a new lifecycle
	s.mu.Unlock()
	out := protocol.Configured{Resolved: protocol.Values{}}
	specs, _ := option.Specs(opts)
	for _, sp := range specs {
		out.Resolved[sp.Name] = sp.Default
	}
	return out, nil
}

// state returns the exporter if it may still be used; finish marks it
// finished in the same critical section, so two Finish calls cannot both
// reach the exporter.
func (s *server[O]) state(finish bool) (Exporter, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.exp == nil:
		return nil, fmt.Errorf("exporter used before a successful Configure: %w", protocol.ErrOutOfOrder)
	case s.finished:
		return nil, fmt.Errorf("exporter used after Finish: %w", protocol.ErrOutOfOrder)
	}
	s.finished = finish
	return s.exp, nil
}

func (s *server[O]) Write(ctx context.Context, records []protocol.Record) error {
	exp, err := s.state(false)
	if err != nil {
		return err
	}
	if err := exp.Write(ctx, records); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	return nil
}

func (s *server[O]) Finish(ctx context.Context, summary protocol.Summary) ([]protocol.File, error) {
	exp, err := s.state(true)
	if err != nil {
		return nil, err
	}
	files, err := exp.Finish(ctx, summary)
	if err != nil {
		return nil, fmt.Errorf("finish: %w", err)
	}
	return files, nil
}
