package bench

import (
	"context"
	"time"

	"github.com/rs/zerolog"
	"go.opentelemetry.io/otel"

	"github.com/lmbench/lmbench/core/telemetry"
)

// traceFlushTimeout bounds the wait for the last spans at exit, so an
// unreachable collector cannot hold lmbench (or a Ctrl-C) for long.
const traceFlushTimeout = 5 * time.Second

// startTracing builds the trace provider from the standard OTEL_*
// environment variables (core/telemetry documents them). The provider is
// nil when nothing asks for traces; stop flushes what was recorded and is
// deferred by Run, so it runs after an interrupted run too.
func startTracing(version string, log zerolog.Logger) (p *telemetry.Provider, stop func(), err error) {
	p, err = telemetry.FromEnv(context.Background(), telemetry.Options{ServiceVersion: version})
	if err != nil || p == nil {
		return nil, func() {}, err
	}
	tlog := log.With().Str("component", "traces").Logger()
	// The SDK reports export failures through the global handler; by
	// default it prints with the standard logger.
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
		tlog.Warn().Err(err).Msg("exporting spans failed")
	}))
	tlog.Info().Strs("exporters", p.Exporters()).Msg("recording traces (run, phase and request spans; traceparent sent to the engine)")
	return p, func() {
		ctx, cancel := context.WithTimeout(context.Background(), traceFlushTimeout)
		defer cancel()
		if err := p.Shutdown(ctx); err != nil {
			tlog.Warn().Err(err).Msg("flushing spans at exit failed: some may be lost")
		}
	}, nil
}
