package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/signal"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/rs/zerolog"
	"github.com/spf13/pflag"

	"github.com/lmbench/lmbench/core/bench"
	"github.com/lmbench/lmbench/core/engine"
	"github.com/lmbench/lmbench/core/lmcache"
	"github.com/lmbench/lmbench/core/plugin"
	"github.com/lmbench/lmbench/core/report"
	"github.com/lmbench/lmbench/core/sim"
	"github.com/lmbench/lmbench/sdk/option"
	exporterv1 "github.com/lmbench/lmbench/sdk/proto/lmbench/exporter/v1"
	pluginv1 "github.com/lmbench/lmbench/sdk/proto/lmbench/plugin/v1"
	workloadv1 "github.com/lmbench/lmbench/sdk/proto/lmbench/workload/v1"
)

func isTerminal(w any) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

func newLogger(stderr io.Writer, level string) (zerolog.Logger, error) {
	lvl, err := zerolog.ParseLevel(level)
	if err != nil || level == "" {
		return zerolog.Logger{}, usageError{fmt.Errorf("--log-level: expected trace, debug, info, warn or error, got %q", level)}
	}
	zerolog.TimeFieldFormat = time.RFC3339Nano // main owns zerolog's globals
	cw := zerolog.ConsoleWriter{Out: stderr, NoColor: !isTerminal(stderr), TimeFormat: "15:04:05.000"}
	return zerolog.New(cw).Level(lvl).With().Timestamp().Logger(), nil
}

// workloadClient adapts the plugin's gRPC client to the run loop and turns
// RPC failures into errors that name the plugin.
type workloadClient struct{ c *plugin.Client }

func (w workloadClient) Step(ctx context.Context, r *workloadv1.StepRequest) (*workloadv1.StepResponse, error) {
	resp, err := w.c.Workload().Step(ctx, r)
	return resp, w.c.Wrap("Step", err)
}

func (w workloadClient) OnFinished(ctx context.Context, r *workloadv1.OnFinishedRequest) (*workloadv1.OnFinishedResponse, error) {
	resp, err := w.c.Workload().OnFinished(ctx, r)
	return resp, w.c.Wrap("OnFinished", err)
}

type launched struct {
	client *plugin.Client
	info   *pluginv1.PluginInfo
	specs  []*pluginv1.OptionSpec
	flags  []optionFlag
	// workload only
	tagKeys   []string
	wantsText bool
}

func (l *launched) flagOf(opt string) string {
	return "--" + l.info.GetPrefix() + "-" + opt
}

// launchWorkload finds, starts and describes the workload plugin.
func launchWorkload(nameOrPath string, byPath bool, log zerolog.Logger) (*launched, error) {
	path, err := plugin.Find("workload", nameOrPath, plugin.SearchDirs())
	if err != nil {
		return nil, usageError{fmt.Errorf("--workload: %w", err)}
	}
	c, err := plugin.Launch("workload", path, log)
	if err != nil {
		return nil, err
	}
	d, err := c.Workload().Describe(context.Background(), &workloadv1.DescribeRequest{})
	if err != nil {
		c.Kill()
		return nil, c.Wrap("Describe", err)
	}
	if !byPath && d.GetInfo().GetName() != nameOrPath {
		c.Kill()
		return nil, fmt.Errorf("workload plugin %s reports the name %q, expected %q: rename the binary lmbench-workload-%s or pass it with --workload-plugin",
			path, d.GetInfo().GetName(), nameOrPath, d.GetInfo().GetName())
	}
	if d.GetInfo().GetPrefix() == "" {
		c.Kill()
		return nil, fmt.Errorf("workload plugin %s declares no flag prefix", path)
	}
	c.SetName(d.GetInfo().GetName())
	return &launched{client: c, info: d.GetInfo(), specs: d.GetOptions(), tagKeys: d.GetTagKeys(), wantsText: d.GetWantsResponseText()}, nil
}

func launchExporter(nameOrPath string, log zerolog.Logger) (*launched, error) {
	path, err := plugin.Find("exporter", nameOrPath, plugin.SearchDirs())
	if err != nil {
		return nil, usageError{fmt.Errorf("--exporter: %w", err)}
	}
	c, err := plugin.Launch("exporter", path, log)
	if err != nil {
		return nil, err
	}
	d, err := c.Exporter().Describe(context.Background(), &exporterDescribeRequest)
	if err != nil {
		c.Kill()
		return nil, c.Wrap("Describe", err)
	}
	c.SetName(d.GetInfo().GetName())
	return &launched{client: c, info: d.GetInfo(), specs: d.GetOptions()}, nil
}

// cmdRun is `lmbench run`.
func cmdRun(args []string, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
	var g general
	// Pass 1: our own flags only, to learn which plugins to load.
	fs1 := pflag.NewFlagSet("lmbench run", pflag.ContinueOnError)
	fs1.ParseErrorsAllowlist.UnknownFlags = true
	fs1.SetOutput(io.Discard)
	g.register(fs1)
	if err := fs1.Parse(args); err != nil {
		return exitUsage, usageError{err}
	}
	log, err := newLogger(stderr, g.logLevel)
	if err != nil {
		return exitUsage, err
	}
	file, err := loadConfigFile(g.config)
	if err != nil {
		return exitFailed, err
	}
	if g.workload == "" && g.workloadPlugin == "" {
		if w, ok := file["workload"].(string); ok {
			g.workload = w
		}
	}
	if g.help && g.workload == "" && g.workloadPlugin == "" {
		return exitOK, helpAll(stdout, log)
	}

	var plugins []*plugin.Client
	defer func() { plugin.KillAll(plugins...) }()

	// The workload plugin: its Describe schema becomes flags.
	var wl *launched
	if g.workload != "" || g.workloadPlugin != "" {
		name, byPath := g.workload, false
		if g.workloadPlugin != "" {
			name, byPath = g.workloadPlugin, true
		}
		if wl, err = launchWorkload(name, byPath, log); err != nil {
			return exitFailed, err
		}
		plugins = append(plugins, wl.client)
	}
	var exps []*launched
	expNames := append([]string(nil), g.exporters...)
	if !g.noCSV && !slices.Contains(expNames, "csv") {
		expNames = append([]string{"csv"}, expNames...)
	}
	for _, n := range append(expNames, g.exporterPlugin...) {
		e, err := launchExporter(n, log)
		if err != nil {
			return exitFailed, err
		}
		plugins = append(plugins, e.client)
		exps = append(exps, e)
	}

	// Pass 2: every flag, strictly.
	fs := pflag.NewFlagSet("lmbench run", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	g = general{}
	g.register(fs)
	prefixes := map[string]string{}
	addPlugin := func(l *launched) error {
		p := l.info.GetPrefix()
		if p == "" {
			return nil
		}
		if other, ok := prefixes[p]; ok {
			return fmt.Errorf("plugins %s and %s both claim the flag prefix --%s-", other, l.info.GetName(), p)
		}
		prefixes[p] = l.info.GetName()
		l.flags = pluginFlags(fs, p, l.specs)
		return nil
	}
	if wl != nil {
		if err := addPlugin(wl); err != nil {
			return exitFailed, err
		}
	}
	for _, e := range exps {
		if err := addPlugin(e); err != nil {
			return exitFailed, err
		}
	}
	if err := fs.Parse(args); err != nil {
		hint := ""
		if wl != nil && strings.Contains(err.Error(), "unknown flag") {
			hint = fmt.Sprintf(" (the flags of workload %s start with --%s-; see lmbench run --workload %s --help)",
				wl.info.GetName(), wl.info.GetPrefix(), wl.info.GetName())
		}
		return exitUsage, usageError{fmt.Errorf("%v%s", err, hint)}
	}
	if g.help {
		printRunHelp(stdout, fs, wl, exps)
		return exitOK, nil
	}
	if fs.NArg() > 0 {
		return exitUsage, usageError{fmt.Errorf("unexpected argument %q (flags start with --)", fs.Arg(0))}
	}
	if err := applyConfigFile(fs, g.config, file, wl, exps); err != nil {
		return exitFailed, err
	}

	// Required arguments (spec §1.3).
	var missing []string
	if g.engineURL == "" {
		missing = append(missing, "--engine-url")
	}
	if wl == nil {
		missing = append(missing, "--workload")
	}
	if !fs.Changed("tokens-per-gb-kvcache") && g.tokensPerGB == 0 && g.lmcacheURL == "" {
		missing = append(missing, "--tokens-per-gb-kvcache or --lmcache-url")
	}
	if len(missing) > 0 {
		how := "remove --no-interactive for guided setup"
		switch {
		case g.exportConfig != "":
			how = "remove --export-config for guided setup"
		case !g.noInteractive:
			how = "guided setup is not available in this version"
		}
		return exitFailed, fmt.Errorf("Missing required arguments: %s. Provide them or %s.", strings.Join(missing, ", "), how)
	}
	if g.kvCacheVolume <= 0 {
		return exitFailed, fmt.Errorf("--kv-cache-volume: must be positive, got %s", strconv.FormatFloat(g.kvCacheVolume, 'g', -1, 64))
	}

	ctx, stop := interruptible(log)
	defer stop()

	// The engine.
	engineURL := g.engineURL
	reportURL := ""
	if g.engineURL == "builtin" {
		srv, err := sim.New(g.sim, log.With().Str("component", "sim").Logger())
		if err != nil {
			return exitUsage, usageError{err}
		}
		base, err := srv.Start("127.0.0.1:0")
		if err != nil {
			return exitFailed, fmt.Errorf("built-in engine: %w", err)
		}
		defer srv.Close()
		engineURL = base
		reportURL = "builtin (" + base + ")"
		log.Info().Str("url", base).Msg("built-in simulated engine started (a test double: not a real engine's numbers)")
	} else {
		var simFlags []string
		fs.Visit(func(f *pflag.Flag) {
			if strings.HasPrefix(f.Name, "sim-") {
				simFlags = append(simFlags, "--"+f.Name)
			}
		})
		if len(simFlags) > 0 {
			return exitUsage, usageError{fmt.Errorf("%s: the built-in engine's flags need --engine-url builtin, got %q", strings.Join(simFlags, ", "), g.engineURL)}
		}
		if _, err := url.Parse(engine.NormalizeURL(g.engineURL)); err != nil {
			return exitFailed, fmt.Errorf("--engine-url: %q is not a URL: %v", g.engineURL, err)
		}
		reportURL = redactURL(engine.NormalizeURL(g.engineURL))
	}
	base := engine.NormalizeURL(engineURL)
	apiKey := os.Getenv("OPENAI_API_KEY")

	model := g.model
	if model == "" {
		dctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		model, err = engine.DetectModel(dctx, base, apiKey, nil)
		cancel()
		if err != nil {
			return exitFailed, err
		}
		log.Info().Str("model", model).Msg("model auto-detected")
	}
	tokensPerGB := g.tokensPerGB
	if !fs.Changed("tokens-per-gb-kvcache") && tokensPerGB == 0 {
		tctx, cancel := context.WithTimeout(ctx, 15*time.Second)
		tpg, layout, err := lmcache.TokensPerGB(tctx, g.lmcacheURL, model, nil)
		cancel()
		if err != nil {
			return exitFailed, err
		}
		log.Info().Int64("cache_size_per_token", layout.CacheSizePerToken).Int64("world_size", layout.WorldSize).
			Int64("tokens_per_gb", tpg).Msg("tokens per GB from LMCache")
		tokensPerGB = tpg
	}
	if tokensPerGB <= 0 {
		return exitFailed, fmt.Errorf("--tokens-per-gb-kvcache: must be positive, got %d", tokensPerGB)
	}

	// Configure the workload.
	opts, err := optionValues(fs, wl.flags)
	if err != nil {
		return exitUsage, err
	}
	cr, err := wl.client.Workload().Configure(ctx, &workloadv1.ConfigureRequest{Options: opts, Common: &workloadv1.Common{
		Seed: g.seed, Model: model, KvCacheVolumeGb: g.kvCacheVolume, TokensPerGb: tokensPerGB,
	}})
	if err != nil {
		return exitFailed, wl.client.Wrap("Configure", err)
	}
	if errs := cr.GetErrors(); len(errs) > 0 {
		return exitFailed, bench.FieldErrors(errs, wl.flagOf)
	}

	resolved := resolvedConfig(model, wl, g, tokensPerGB, cr.GetResolved())
	if g.exportConfig != "" {
		b, _ := json.MarshalIndent(orderedJSON(resolved), "", "  ")
		if err := os.WriteFile(g.exportConfig, append(b, '\n'), 0o644); err != nil {
			return exitFailed, fmt.Errorf("--export-config: %w", err)
		}
		fmt.Fprintf(stdout, "Configuration exported to %s\n", g.exportConfig)
		fmt.Fprintf(stdout, "Replay with: lmbench run --engine-url %s --config %s\n", g.engineURL, g.exportConfig)
		return exitOK, nil
	}

	printBanner(stdout, cr, isTerminal(stdout))
	log.Info().Msgf("Benchmark config: workload=%s, model=%s, kv_cache=%.1f GB, tokens_per_gb=%d",
		wl.info.GetName(), model, g.kvCacheVolume, tokensPerGB)

	sender, err := engine.New(engine.Config{BaseURL: engineURL, Model: model, APIKey: apiKey})
	if err != nil {
		return exitFailed, err
	}
	defer sender.Close()

	var bexps []bench.Exporter
	for _, e := range exps {
		o, err := optionValues(fs, e.flags)
		if err != nil {
			return exitUsage, err
		}
		bexps = append(bexps, bench.Exporter{Name: e.info.GetName(), Client: exporterClient{e.client}, Options: o, Flag: e.flagOf, Wrap: e.client.Wrap})
	}
	cfgJSON, _ := json.Marshal(orderedJSON(resolved))
	var progress bench.ProgressSink
	if !g.quiet {
		progress = bench.PlainProgress(stderr)
	}
	res, err := bench.Execute(ctx, bench.Plan{
		Workload: workloadClient{wl.client}, WantsText: wl.wantsText, TagKeys: wl.tagKeys,
		Sender: sender, Exporters: bexps,
		Report: report.Config{
			EngineURL: reportURL, Model: model, Workload: wl.info.GetName(),
			KVCacheVolumeGB: g.kvCacheVolume, TokensPerGB: tokensPerGB, Seed: g.seed,
			OutputDir: g.outputDir, ExportCSV: !g.noCSV, ExportJSON: g.json, Quiet: g.quiet,
		},
		ConfigJSON: string(cfgJSON), Version: version, Planned: int(cr.GetPlannedRequests()),
		Log: log, Stdout: stdout, Progress: progress, ProgressEvery: 2 * time.Second, DrainTimeout: g.drainTimeout,
	})
	if err != nil {
		return exitFailed, err
	}
	switch {
	case res.Interrupted:
		if res.Err != nil {
			fmt.Fprintf(stderr, "lmbench: %v\n", res.Err)
		}
		fmt.Fprintln(stderr, "lmbench: interrupted; the results so far are written")
		return exitInterrupted, nil
	case res.Err != nil:
		return exitFailed, res.Err
	case res.Final.FailedRequests > 0:
		fmt.Fprintf(stderr, "lmbench: %d of %d measured requests failed (see the error column of the results)\n",
			res.Final.FailedRequests, res.Final.TotalRequests)
		return exitFailed, nil
	}
	return exitOK, nil
}

// redactURL drops credentials from a URL before it is printed or exported.
func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.User == nil {
		return s
	}
	u.User = nil
	return u.String()
}

// kvPair keeps key order in exported JSON.
type kvPair struct {
	k string
	v any
}

type orderedJSON []kvPair

func (o orderedJSON) MarshalJSON() ([]byte, error) {
	var b strings.Builder
	b.WriteByte('{')
	for i, p := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(p.k)
		v, err := json.Marshal(p.v)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return []byte(b.String()), nil
}

// floatJSON keeps a float's ".0" like Python's json (100.0, not 100).
type floatJSON float64

func (f floatJSON) MarshalJSON() ([]byte, error) {
	s := strconv.FormatFloat(float64(f), 'f', -1, 64)
	if !strings.ContainsAny(s, ".eE") {
		s += ".0"
	}
	return []byte(s), nil
}

// resolvedConfig is the exported configuration (spec §6.5): portable, so
// no engine URL, no LMCache URL and no secrets.
func resolvedConfig(model string, wl *launched, g general, tpg int64, resolved map[string]*pluginv1.OptionValue) orderedJSON {
	out := orderedJSON{
		{"model", model},
		{"workload", wl.info.GetName()},
		{"kv_cache_volume", floatJSON(g.kvCacheVolume)},
		{"tokens_per_gb_kvcache", tpg},
	}
	seen := map[string]bool{}
	for _, sp := range wl.specs {
		v := resolved[sp.GetName()]
		seen[sp.GetName()] = true
		out = append(out, kvPair{wl.info.GetPrefix() + "_" + strings.ReplaceAll(sp.GetName(), "-", "_"), jsonValue(v, sp)})
	}
	return append(out, kvPair{"seed", g.seed})
}

func jsonValue(v *pluginv1.OptionValue, sp *pluginv1.OptionSpec) any {
	if sp.GetType() == pluginv1.OptionType_OPTION_TYPE_FLOAT {
		return floatJSON(v.GetFloatValue())
	}
	return option.Interface(v)
}

// printBanner prints the workload's configuration banner (spec §2.6).
func printBanner(w io.Writer, cr *workloadv1.ConfigureResponse, color bool) {
	bold, cyan, yellow, reset := "\033[1m", "\033[96m", "\033[93m", "\033[0m"
	if !color {
		bold, cyan, yellow, reset = "", "", "", ""
	}
	var b strings.Builder
	b.WriteString(bold + strings.Repeat("═", 50) + reset + "\n")
	b.WriteString(" Workload: " + cyan + cr.GetTitle() + reset + "\n")
	b.WriteString(bold + strings.Repeat("─", 50) + reset + "\n")
	width := 0
	for _, f := range cr.GetBanner() {
		width = max(width, len(f.GetLabel())+1)
	}
	for _, f := range cr.GetBanner() {
		fmt.Fprintf(&b, "  %-*s %s%s%s\n", width, f.GetLabel()+":", yellow, f.GetValue(), reset)
	}
	b.WriteString(bold + strings.Repeat("═", 50) + reset + "\n")
	io.WriteString(w, b.String())
}

// loadConfigFile reads a --config JSON object ("" = none).
func loadConfigFile(path string) (map[string]any, error) {
	if path == "" {
		return nil, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--config: %w", err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("--config %s: expected a JSON object: %v", path, err)
	}
	return m, nil
}

// applyConfigFile sets every flag the command line left unset from the
// file. Command-line values always win. Unknown keys are errors.
func applyConfigFile(fs *pflag.FlagSet, path string, file map[string]any, wl *launched, exps []*launched) error {
	if file == nil {
		return nil
	}
	keys := map[string]string{}
	for k, f := range configKeys {
		keys[k] = f
	}
	for _, l := range append([]*launched{wl}, exps...) {
		if l == nil {
			continue
		}
		for _, f := range l.flags {
			keys[f.key] = f.flag
		}
	}
	names := make([]string, 0, len(file))
	for k := range file {
		names = append(names, k)
	}
	sort.Strings(names)
	var errs []error
	for _, k := range names {
		flag, ok := keys[k]
		if !ok {
			errs = append(errs, fmt.Errorf("--config %s: unknown key %q", path, k))
			continue
		}
		if fs.Changed(flag) || k == "workload" {
			continue
		}
		var s string
		switch v := file[k].(type) {
		case string:
			s = v
		case bool:
			s = strconv.FormatBool(v)
		case float64:
			s = strconv.FormatFloat(v, 'f', -1, 64)
		case nil:
			continue
		default:
			errs = append(errs, fmt.Errorf("--config %s: key %q: expected a string, number or boolean, got %v", path, k, v))
			continue
		}
		if err := fs.Set(flag, s); err != nil {
			errs = append(errs, fmt.Errorf("--config %s: key %q: %v", path, k, err))
		}
	}
	return errors.Join(errs...)
}

// helpAll prints run's help with every discovered workload's flags.
func helpAll(w io.Writer, log zerolog.Logger) error {
	fs := pflag.NewFlagSet("lmbench run", pflag.ContinueOnError)
	var g general
	g.register(fs)
	fmt.Fprintln(w, "Usage: lmbench run --engine-url URL --workload NAME [flags]\n\nGeneral flags:")
	fmt.Fprint(w, fs.FlagUsagesWrapped(100))
	found := plugin.Discover("workload", plugin.SearchDirs())
	descs := make([]*launched, len(found))
	var wg sync.WaitGroup
	for i, c := range found {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l, err := launchWorkload(c.Path, true, log.Level(zerolog.WarnLevel))
			if err != nil {
				log.Warn().Err(err).Msg("skipping plugin")
				return
			}
			l.client.Kill()
			descs[i] = l
		}()
	}
	wg.Wait()
	for _, l := range descs {
		if l == nil {
			continue
		}
		wfs := pflag.NewFlagSet(l.info.GetName(), pflag.ContinueOnError)
		pluginFlags(wfs, l.info.GetPrefix(), l.specs)
		wfs.SortFlags = false
		fmt.Fprintf(w, "\nWorkload %s — %s:\n", l.info.GetName(), l.info.GetSummary())
		fmt.Fprint(w, wfs.FlagUsagesWrapped(100))
	}
	if len(found) == 0 {
		fmt.Fprintf(w, "\nNo workload plugins found (searched %s).\n", strings.Join(plugin.SearchDirs(), ", "))
	}
	return nil
}

func printRunHelp(w io.Writer, fs *pflag.FlagSet, wl *launched, exps []*launched) {
	fmt.Fprintln(w, "Usage: lmbench run --engine-url URL --workload NAME [flags]")
	general := pflag.NewFlagSet("general", pflag.ContinueOnError)
	general.SortFlags = false
	fs.VisitAll(func(f *pflag.Flag) {
		if pluginFlag(f.Name, wl, exps) == nil {
			general.AddFlag(f)
		}
	})
	fmt.Fprintln(w, "\nGeneral flags:")
	fmt.Fprint(w, general.FlagUsagesWrapped(100))
	for _, l := range append([]*launched{wl}, exps...) {
		if l == nil || len(l.flags) == 0 {
			continue
		}
		sub := pflag.NewFlagSet(l.info.GetName(), pflag.ContinueOnError)
		sub.SortFlags = false
		for _, f := range l.flags {
			sub.AddFlag(fs.Lookup(f.flag))
		}
		fmt.Fprintf(w, "\n%s %s — %s:\n", capitalize(l.info.GetKind()), l.info.GetName(), l.info.GetSummary())
		fmt.Fprint(w, sub.FlagUsagesWrapped(100))
	}
}

func pluginFlag(name string, wl *launched, exps []*launched) *optionFlag {
	for _, l := range append([]*launched{wl}, exps...) {
		if l == nil {
			continue
		}
		for i := range l.flags {
			if l.flags[i].flag == name {
				return &l.flags[i]
			}
		}
	}
	return nil
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// exporterClient adapts an exporter plugin's gRPC client to the fan-out.
type exporterClient struct{ c *plugin.Client }

func (e exporterClient) Configure(ctx context.Context, r *exporterv1.ConfigureRequest) (*exporterv1.ConfigureResponse, error) {
	return e.c.Exporter().Configure(ctx, r)
}

func (e exporterClient) Write(ctx context.Context, r *exporterv1.WriteRequest) (*exporterv1.WriteResponse, error) {
	return e.c.Exporter().Write(ctx, r)
}

func (e exporterClient) Finish(ctx context.Context, r *exporterv1.FinishRequest) (*exporterv1.FinishResponse, error) {
	return e.c.Exporter().Finish(ctx, r)
}

// interruptible returns a context cancelled by the first SIGINT or SIGTERM
// (the run then drains its in-flight requests); after that, signals get
// their default action again, so a second Ctrl-C quits at once. The
// journal keeps what finished, and the plugins exit when they lose us.
func interruptible(log zerolog.Logger) (context.Context, func()) {
	ctx, cancel := context.WithCancel(context.Background())
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case s := <-sig:
			signal.Reset(os.Interrupt, syscall.SIGTERM)
			log.Warn().Str("signal", s.String()).Msg("stopping: no new requests; waiting for those in flight (Ctrl-C again to quit now)")
			cancel()
		case <-done:
		}
	}()
	return ctx, func() {
		signal.Stop(sig)
		close(done)
		cancel()
	}
}
