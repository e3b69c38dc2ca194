// Package simconfig is the built-in engine's settings as options: one
// table of sim.Config's fields, each a flag (--sim-gpu-gb on lmbench run,
// --gpu-gb on lmbench sim), a key (sim_gpu_gb) and a variable
// (LMBENCH_SIM_GPU_GB) in core/config's registry ([Options],
// [NewRegistry]); [Config] reads the resolved values back into a
// validated sim.Config, each error naming its origin, and [Entries]
// exports and records every sim_* key.
package simconfig
