package bench

import (
	"context"

	"github.com/rs/zerolog"

	"github.com/lmbench/lmbench/core/engine/profile"
	"github.com/lmbench/lmbench/core/report"
	"github.com/lmbench/lmbench/core/tokenize"
	"github.com/lmbench/lmbench/sdk/protocol"
)

// tokenizer resolves --tokenizer for the workload: none when the workload
// cannot use one (it lacks the capability), else tokenize.Resolve's.
func (p *Prepared) tokenizer(ctx context.Context, s Setup, origin string, log zerolog.Logger) (protocol.TokenCounter, error) {
	if !s.Workload.Caps.Has(protocol.Tokenizer) {
		// auto does what it can: silent. A tokenizer asked for by name
		// is not used, which the person who asked should hear, plainly.
		switch s.Tokenizer {
		case "", tokenize.Auto, tokenize.Words:
			log.Debug().Msgf("workload %s counts its prompt lengths itself, in whitespace words (it takes no tokenizer)", s.Workload.Name())
		default:
			log.Warn().Msgf("%s %s is not used: workload %s counts its prompt lengths itself, in whitespace words, not in the model's tokens",
				origin, s.Tokenizer, s.Workload.Name())
		}
		p.Tokenizer = tokenize.Words
		return nil, nil
	}
	tok, name, err := tokenize.Resolve(ctx, s.Tokenizer, origin, p.tokenizerTarget(), log)
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

// tokenizerTarget is the engine's tokenizer as its profile has it; an
// engine lmbench does not recognise is asked in vLLM's shape.
func (p *Prepared) tokenizerTarget() tokenize.Target {
	t := tokenize.Target{Base: p.Engine.Base, APIKey: p.APIKey, Model: p.Served}
	if k := p.Profile.Kind; k != "" && k != profile.Unknown {
		tok := p.Profile.Tokenizer
		t.Tokenizer = &tok
	}
	return t
}
