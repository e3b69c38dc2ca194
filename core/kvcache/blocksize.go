package kvcache

import (
	"context"
	"time"

	"github.com/rs/zerolog"

	"github.com/lmbench/lmbench/core/lmcache"
)

// StatusBlockSize reads the engine's KV block size from /status when
// tokens per GB were given (so /status is not otherwise read); 0 when it
// cannot: the block size only sets the ledger's tolerance, so a /status
// that does not answer is noted, never fatal.
func StatusBlockSize(ctx context.Context, url, model string, log zerolog.Logger) int {
	tctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	_, layout, err := lmcache.TokensPerGB(tctx, url, model, nil)
	if err != nil {
		log.Debug().Err(err).Msg("no KV block size from /status")
		return 0
	}
	return layout.BlockSize
}
