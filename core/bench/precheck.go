package bench

import (
	"context"
	"fmt"

	"github.com/lmbench/lmbench/core/config"
	"github.com/lmbench/lmbench/core/pluginset"
	"github.com/lmbench/lmbench/sdk/protocol"
)

// precheck has the workload check its options before anything reaches
// the network (the CheckOptions capability): the schema, its Validate and
// its Precheck (a trace read and linted), so a plan that cannot run is
// refused before the engine is contacted, or the built-in engine started.
// Configure proper, which may need the model and tokens per GB, follows
// in Prepare. A plugin without the capability is checked there alone.
func precheck(ctx context.Context, s Setup) error {
	w := s.Workload
	if w == nil {
		return nil
	}
	if s.Shard.Sharded() && !w.Caps.Has(protocol.Sharding) {
		return config.UsageError{Err: fmt.Errorf("%s %s: workload %s cannot be sharded: it does not split its plan (it lacks the %q capability, protocol minor 4); run it unsharded",
			s.ShardOrigin, s.Shard, w.Name(), protocol.Sharding)}
	}
	if !w.Caps.Has(protocol.CheckOptions) {
		return nil
	}
	common := protocol.Common{Seed: s.Seed, KVCacheVolumeGB: s.KVCacheVolumeGB, Shard: s.Shard}
	if s.HasTokensPerGB {
		common.TokensPerGB = s.TokensPerGB
	}
	cr, err := w.Service().Configure(ctx, protocol.WorkloadConfig{Options: s.Options, Common: common, CheckOnly: true})
	if err != nil {
		return err
	}
	if len(cr.Errors) > 0 { // bad input, refused before anything is contacted: exit 2
		return config.UsageError{Err: pluginset.FieldErrors(cr.Errors, "workload "+w.Name(), s.OptionOrigin)}
	}
	return nil
}
