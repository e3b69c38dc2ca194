package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"
	"github.com/spf13/pflag"

	"github.com/lmbench/lmbench/core/config"
	"github.com/lmbench/lmbench/core/plugin"
	pluginv1 "github.com/lmbench/lmbench/sdk/proto/lmbench/plugin/v1"
	workloadv1 "github.com/lmbench/lmbench/sdk/proto/lmbench/workload/v1"
)

// session is one `lmbench run`: its streams, its logger and the plugins
// it launched (reused when the configuration is resolved again after the
// guided setup).
type session struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	logOut         *switchWriter
	log            zerolog.Logger
	hasLog         bool
	launched       map[string]*launched // by kind + name or path
	clients        []*plugin.Client
	closers        []func() // e.g. the built-in engine
	// others are the options of installed plugins the run does not use,
	// described on the first unknown config key (see elsewhere).
	others    *config.Elsewhere
	othersFor string // the plugins in use when others was collected
}

func newSession(stdin io.Reader, stdout, stderr io.Writer) *session {
	return &session{stdin: stdin, stdout: stdout, stderr: stderr, logOut: &switchWriter{w: stderr},
		log: zerolog.Nop(), launched: map[string]*launched{}}
}

// close stops every plugin the session started.
func (s *session) close() {
	for _, c := range slices.Backward(s.closers) {
		c()
	}
	plugin.KillAll(s.clients...)
}

// launched is a started plugin and what it described.
type launched struct {
	client *plugin.Client
	info   *pluginv1.PluginInfo
	specs  []*pluginv1.OptionSpec
	// workload only
	tagKeys   []string
	wantsText bool
}

// resolved is the layered configuration, before anything is contacted.
type resolved struct {
	cli  cliFlags
	fs   *pflag.FlagSet
	reg  *config.Registry
	vals *config.Values
	wl   *launched // nil when no workload was named
	exps []*launched
}

// resolve parses args in two passes. The first learns, from the flags,
// the environment, the config file and answers, which plugins to load;
// their option schemas join the registry, and the second pass parses
// every flag strictly and layers every source. answers are guided-setup
// values (nil when there was no form).
func (s *session) resolve(args []string, answers map[string]string) (*resolved, error) {
	var c1 cliFlags
	reg1 := hostRegistry()
	fs1 := runFlags(reg1, &c1)
	fs1.ParseErrorsAllowlist.UnknownFlags = true
	if err := fs1.Parse(args); err != nil {
		return nil, usageError{err}
	}
	v1, err := reg1.Load(config.Sources{File: c1.config, Flags: fs1, Answers: answers, Partial: true})
	if err != nil {
		return nil, err
	}
	if !s.hasLog {
		if s.log, err = newLogger(s.logOut, v1.String(keyLogLevel), v1.String(keyLogFormat), isTerminal(s.stderr)); err != nil {
			return nil, err
		}
		s.hasLog = true
	}
	r := &resolved{cli: c1, fs: fs1, reg: reg1, vals: v1}
	workload := v1.String(keyWorkload)
	if c1.help && workload == "" && c1.workloadPlugin == "" {
		return r, nil // help for every workload
	}

	if c1.workloadPlugin != "" {
		r.wl, err = s.workload(c1.workloadPlugin, true, "--workload-plugin")
	} else if workload != "" {
		r.wl, err = s.workload(workload, false, v1.Origin(keyWorkload))
	}
	if err != nil {
		return nil, err
	}
	expNames := distinct(c1.exporters)
	if !v1.Bool(keyNoCSV) && !slices.Contains(expNames, "csv") {
		expNames = append([]string{"csv"}, expNames...)
	}
	for _, n := range append(expNames, c1.exporterPlugin...) {
		e, err := s.exporter(n)
		if err != nil {
			return nil, err
		}
		r.exps = append(r.exps, e)
	}

	// Pass 2: every option known, every flag strict.
	r.reg = hostRegistry()
	for _, l := range r.plugins() {
		if _, err := r.reg.AddPlugin(l.info.GetName(), l.info.GetPrefix(), l.specs); err != nil {
			return nil, err
		}
	}
	r.cli = cliFlags{}
	r.fs = runFlags(r.reg, &r.cli)
	if err := r.fs.Parse(args); err != nil {
		hint := ""
		if name, ok := strings.CutPrefix(err.Error(), "unknown flag: --"); ok {
			var names []string
			r.fs.VisitAll(func(f *pflag.Flag) { names = append(names, f.Name) })
			if c := config.Closest(name, names); c != "" {
				hint = fmt.Sprintf(" (did you mean --%s?)", c)
			}
		}
		if hint == "" && r.wl != nil && strings.Contains(err.Error(), "unknown flag") {
			hint = fmt.Sprintf(" (the flags of workload %s start with --%s-; see lmbench run --workload %s --help)",
				r.wl.info.GetName(), r.wl.info.GetPrefix(), r.wl.info.GetName())
		}
		return nil, usageError{fmt.Errorf("%v%s", err, hint)}
	}
	if r.fs.NArg() > 0 {
		return nil, usageError{fmt.Errorf("unexpected argument %q (flags start with --)", r.fs.Arg(0))}
	}
	// Without a workload, file keys and variables may belong to the one
	// the guided setup is about to pick: they are checked once it is known.
	partial := r.wl == nil
	r.vals, err = r.reg.Load(config.Sources{File: r.cli.config, Flags: r.fs, Answers: answers, Partial: partial,
		Elsewhere: func() *config.Elsewhere { return s.elsewhere(r.plugins()) }})
	if r.vals != nil {
		// Warned about even when another key is wrong: both are worth fixing.
		for _, ig := range r.vals.Ignored {
			field := "key"
			if ig.Env {
				field = "variable"
			}
			s.log.Warn().Str(field, ig.Name).Str("plugin", ig.Owner.Plugin).Msg(ignoredMessage(ig, r))
		}
	}
	if err != nil {
		return nil, err
	}
	for _, name := range r.vals.UnknownEnv {
		s.log.Warn().Str("variable", name).Msg("ignoring an LMBENCH_ variable that names no option (see lmbench run --help)")
	}
	return r, nil
}

// ignoredMessage explains why a file key or variable was ignored:
// `ignoring config key "mrc_qps": it is an option of workload
// multi-round-chat, not of long-doc-qa`.
func ignoredMessage(ig config.Ignored, r *resolved) string {
	what := fmt.Sprintf("config key %q", ig.Name)
	if ig.Env {
		what = "variable " + ig.Name
	}
	why := fmt.Sprintf("it is an option of %s %s", ig.Owner.Kind, ig.Owner.Plugin)
	switch {
	case ig.Owner.Kind == "workload" && r.wl != nil:
		why += ", not of " + r.wl.info.GetName()
	case ig.Owner.Kind == "exporter":
		why += fmt.Sprintf(", which this run does not use (add --exporter %s to use it)", ig.Owner.Plugin)
	}
	return "ignoring " + what + ": " + why
}

// elsewhereTimeout bounds how long the plugins not in use may take to
// describe themselves; those slower are left out (their keys stay errors).
const elsewhereTimeout = 10 * time.Second

// elsewhere starts every installed workload and exporter plugin that is
// not in use, in parallel and quietly (as `lmbench run --help` does), and
// collects the options they declare, so a config key or variable meant
// for another workload can be told from a typo. It runs only when a key
// is unknown, once per session and set of plugins in use.
func (s *session) elsewhere(inUse []*launched) *config.Elsewhere {
	used := map[string]bool{}
	var names []string
	for _, l := range inUse {
		used[l.info.GetKind()+"/"+l.info.GetName()] = true
		names = append(names, l.info.GetKind()+"/"+l.info.GetName())
	}
	slices.Sort(names)
	id := strings.Join(names, ",")
	if s.others != nil && s.othersFor == id {
		return s.others
	}
	s.othersFor = id
	var found []plugin.Candidate
	for _, c := range plugin.Discover("", plugin.SearchDirs()) {
		if !used[c.Kind+"/"+c.Name] {
			found = append(found, c)
		}
	}
	quiet := s.log.Level(zerolog.WarnLevel)
	// Plugins still starting when the wait ends finish on their own; their
	// clients are collected apart (under mu) and killed when the session
	// closes.
	var mu sync.Mutex // guards descs and col
	col := &session{}
	s.closers = append(s.closers, func() {
		mu.Lock()
		defer mu.Unlock()
		plugin.KillAll(col.clients...)
	})
	descs := make([]*launched, len(found))
	done := make(chan struct{})
	var wg sync.WaitGroup
	for i, c := range found {
		wg.Go(func() {
			l, err := launchQuiet(col, &mu, c.Kind, c.Path, quiet)
			if err != nil {
				s.log.Debug().Err(err).Str("plugin", c.Path).Msg("cannot describe a plugin not in use; its options are not recognised in the config")
				return
			}
			mu.Lock()
			descs[i] = l
			mu.Unlock()
		})
	}
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(elsewhereTimeout):
		s.log.Debug().Dur("timeout", elsewhereTimeout).Msg("some plugins not in use did not describe themselves in time")
	}
	s.others = config.NewElsewhere()
	mu.Lock()
	defer mu.Unlock()
	for i, l := range descs {
		if l == nil || used[found[i].Kind+"/"+l.info.GetName()] {
			continue
		}
		s.others.AddPlugin(found[i].Kind, l.info.GetName(), l.info.GetPrefix(), l.specs)
	}
	return s.others
}

// plugins returns the workload (if any) and the exporters.
func (r *resolved) plugins() []*launched {
	var out []*launched
	if r.wl != nil {
		out = append(out, r.wl)
	}
	return append(out, r.exps...)
}

// missing lists the required arguments still unset, as flag labels (for
// messages) and config keys (for the guided setup), in the original's
// order (spec §1.3).
func (r *resolved) missing() (labels, keys []string) {
	if r.vals.String(keyEngineURL) == "" {
		labels, keys = append(labels, "--engine-url"), append(keys, keyEngineURL)
	}
	if r.wl == nil {
		labels, keys = append(labels, "--workload"), append(keys, keyWorkload)
	}
	if !r.vals.Has(keyTokensPerGB) && !hasStatusSource(r.vals.String(keyLMCacheURL), portOnly(r.vals.String(keyEngineURL))) {
		labels, keys = append(labels, "--tokens-per-gb-kvcache or --lmcache-url"), append(keys, keyLMCacheURL, keyTokensPerGB)
	}
	return labels, keys
}

// pluginOptions returns the values set for a plugin's options above its
// own defaults (the plugin applies those itself), in wire form.
func (r *resolved) pluginOptions(l *launched) map[string]*pluginv1.OptionValue {
	out := map[string]*pluginv1.OptionValue{}
	for _, o := range r.reg.Owned(l.info.GetName()) {
		if r.vals.UserSet(o.Key) {
			out[o.Name] = config.OptionValue(o, r.vals.Get(o.Key))
		}
	}
	return out
}

// origin names where a plugin option's value came from, for its errors.
func (r *resolved) origin(l *launched) func(string) string {
	return func(name string) string {
		return r.vals.Origin(strings.ReplaceAll(l.info.GetPrefix()+"_"+name, "-", "_"))
	}
}

// workload finds, starts and describes a workload plugin (once per session).
func (s *session) workload(nameOrPath string, byPath bool, origin string) (*launched, error) {
	if l, ok := s.launched["workload:"+nameOrPath]; ok {
		return l, nil
	}
	path, err := plugin.Find("workload", nameOrPath, plugin.SearchDirs())
	if err != nil {
		return nil, usageError{fmt.Errorf("%s: %w", origin, err)}
	}
	c, err := plugin.Launch("workload", path, s.log)
	if err != nil {
		return nil, err
	}
	s.clients = append(s.clients, c)
	d, err := c.Workload().Describe(context.Background(), &workloadv1.DescribeRequest{})
	if err != nil {
		return nil, c.Wrap("Describe", err)
	}
	if !byPath && d.GetInfo().GetName() != nameOrPath {
		return nil, fmt.Errorf("workload plugin %s reports the name %q, expected %q: rename the binary lmbench-workload-%s or pass it with --workload-plugin",
			path, d.GetInfo().GetName(), nameOrPath, d.GetInfo().GetName())
	}
	if d.GetInfo().GetPrefix() == "" {
		return nil, fmt.Errorf("workload plugin %s declares no flag prefix", path)
	}
	c.SetName(d.GetInfo().GetName())
	l := &launched{client: c, info: d.GetInfo(), specs: d.GetOptions(), tagKeys: d.GetTagKeys(), wantsText: d.GetWantsResponseText()}
	s.launched["workload:"+nameOrPath] = l
	return l, nil
}

// exporter finds, starts and describes an exporter plugin (once per session).
func (s *session) exporter(nameOrPath string) (*launched, error) {
	if l, ok := s.launched["exporter:"+nameOrPath]; ok {
		return l, nil
	}
	path, err := plugin.Find("exporter", nameOrPath, plugin.SearchDirs())
	if err != nil {
		return nil, usageError{fmt.Errorf("--exporter: %w", err)}
	}
	c, err := plugin.Launch("exporter", path, s.log)
	if err != nil {
		return nil, err
	}
	s.clients = append(s.clients, c)
	d, err := c.Exporter().Describe(context.Background(), &exporterDescribeRequest)
	if err != nil {
		return nil, c.Wrap("Describe", err)
	}
	c.SetName(d.GetInfo().GetName())
	l := &launched{client: c, info: d.GetInfo(), specs: d.GetOptions()}
	s.launched["exporter:"+nameOrPath] = l
	return l, nil
}
