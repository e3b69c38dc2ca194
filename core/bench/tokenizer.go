package bench

import (
	"context"

	"github.com/rs/zerolog"

	"github.com/lmbench/lmbench/core/report"
	"github.com/lmbench/lmbench/core/tokenize"
	"github.com/lmbench/lmbench/sdk/protocol"
)

// tokenizer resolves --tokenizer for the workload: none when the workload
// cannot use one (it lacks the capability), else tokenize.Resolve's.
func (p *Prepared) tokenizer(ctx context.Context, s Setup, origin string, log zerolog.Logger) (protocol.TokenCounter, error) {
	if !s.Workload.Caps.Has(protocol.Tokenizer) {
		if s.Tokenizer != "" && s.Tokenizer != tokenize.Words {
			log.Warn().Msgf("%s %s: workload %s does not take a tokenizer (protocol minor %d); its lengths are in whitespace words",
				origin, s.Tokenizer, s.Workload.Name(), s.Workload.Desc.Info.ProtocolMinor)
		}
		p.Tokenizer = tokenize.Words
		return nil, nil
	}
	tok, name, err := tokenize.Resolve(ctx, s.Tokenizer, origin, p.Engine.Base, p.APIKey, p.Served, log)
	if err != nil {
		return nil, err
	}
	p.Tokenizer = name
	return tok, nil
}

// sizing is the summary's sizing phase: nil without a tokenizer.
func (p *Prepared) sizing() *report.Sizing {
	if p.Sizing == nil {
		return nil
	}
	s := p.Sizing.Sizing()
	return &report.Sizing{Seconds: s.Seconds, EngineCalls: s.EngineCalls}
}
