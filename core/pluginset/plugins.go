package pluginset

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/lmbench/lmbench/core/config"
	"github.com/lmbench/lmbench/core/plugin"
	"github.com/lmbench/lmbench/sdk/protocol"
)

// Plugins starts and describes the plugins of one lmbench command, each
// once (a run resolves its configuration again after the guided setup),
// and stops every one of them at Close.
type Plugins struct {
	log     zerolog.Logger
	version string

	mu       sync.Mutex
	launched map[string]any // "workload:"/"exporter:" + name or path
	clients  []*plugin.Client
	// others are the options of installed plugins not in use, collected
	// on the first unknown config key (see Elsewhere).
	others    *config.Elsewhere
	othersFor string
}

// NewPlugins returns an empty set; version is the host's, announced to
// every plugin.
func NewPlugins(log zerolog.Logger, version string) *Plugins {
	return &Plugins{log: log, version: version, launched: map[string]any{}}
}

// Close stops every plugin started.
func (p *Plugins) Close() {
	p.mu.Lock()
	clients := p.clients
	p.clients = nil
	p.mu.Unlock()
	plugin.KillAll(clients...)
}

func (p *Plugins) add(c *plugin.Client) {
	p.mu.Lock()
	p.clients = append(p.clients, c)
	p.mu.Unlock()
}

// Workload is a started, described workload plugin.
type Workload struct {
	Client *plugin.Client
	Path   string
	// ByPath: given with --workload-plugin, not found by name.
	ByPath bool
	Desc   protocol.WorkloadDescription
	// Caps are the capabilities both sides have.
	Caps protocol.Capabilities
}

func (w *Workload) Name() string                   { return w.Desc.Info.Name }
func (w *Workload) Prefix() string                 { return w.Desc.Info.Prefix }
func (w *Workload) Kind() string                   { return protocol.WorkloadKind }
func (w *Workload) Summary() string                { return w.Desc.Info.Summary }
func (w *Workload) Options() []protocol.OptionSpec { return w.Desc.Options }

// Service is the workload's protocol service; its errors name the plugin.
func (w *Workload) Service() protocol.WorkloadService { return w.Client.WorkloadService() }

// ExporterPlugin is a started, described exporter plugin.
type ExporterPlugin struct {
	Client *plugin.Client
	Path   string
	Desc   protocol.ExporterDescription
}

func (e *ExporterPlugin) Name() string                   { return e.Desc.Info.Name }
func (e *ExporterPlugin) Prefix() string                 { return e.Desc.Info.Prefix }
func (e *ExporterPlugin) Kind() string                   { return protocol.ExporterKind }
func (e *ExporterPlugin) Summary() string                { return e.Desc.Info.Summary }
func (e *ExporterPlugin) Options() []protocol.OptionSpec { return e.Desc.Options }

// Plugin is what both kinds of started plugin tell about themselves.
type Plugin interface {
	Name() string
	Prefix() string
	Kind() string
	Summary() string
	Options() []protocol.OptionSpec
}

var _, _ Plugin = (*Workload)(nil), (*ExporterPlugin)(nil)

// Workload finds, starts and describes a workload plugin: by name, or by
// path when byPath. origin names the flag or key it came from, for errors.
func (p *Plugins) Workload(nameOrPath string, byPath bool, origin string) (*Workload, error) {
	key := "workload:" + nameOrPath
	p.mu.Lock()
	l, ok := p.launched[key]
	p.mu.Unlock()
	if ok {
		return l.(*Workload), nil
	}
	w, err := p.startWorkload(nameOrPath, byPath, origin, p.log)
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	p.launched[key] = w
	p.mu.Unlock()
	return w, nil
}

func (p *Plugins) startWorkload(nameOrPath string, byPath bool, origin string, log zerolog.Logger) (*Workload, error) {
	path, err := plugin.Find(protocol.WorkloadKind, nameOrPath, plugin.SearchDirs())
	if err != nil {
		return nil, config.UsageError{Err: fmt.Errorf("%s: %w", origin, err)}
	}
	c, err := plugin.Launch(protocol.WorkloadKind, path, log)
	if err != nil {
		return nil, err
	}
	p.add(c)
	host := plugin.Host(p.version)
	d, err := c.Workload().Describe(context.Background(), host)
	if err != nil {
		if kind := c.OtherKind(err); kind != "" {
			return nil, config.UsageError{Err: fmt.Errorf("%s: %s is an lmbench %s plugin, not a workload (give it with --%s-plugin)", origin, path, kind, kind)}
		}
		return nil, c.Wrap("Describe", err)
	}
	if !byPath && d.Info.Name != nameOrPath {
		return nil, fmt.Errorf("workload plugin %s reports the name %q, expected %q: rename the binary lmbench-workload-%s or pass it with --workload-plugin",
			path, d.Info.Name, nameOrPath, d.Info.Name)
	}
	if d.Info.Prefix == "" {
		return nil, fmt.Errorf("workload plugin %s declares no flag prefix", path)
	}
	c.SetName(d.Info.Name)
	return &Workload{Client: c, Path: path, ByPath: byPath, Desc: d,
		Caps: protocol.Negotiate(host.Capabilities, d.Info.Capabilities)}, nil
}

// Exporter finds, starts and describes an exporter plugin by name or path;
// origin names the flag it came from, for errors.
func (p *Plugins) Exporter(nameOrPath, origin string) (*ExporterPlugin, error) {
	key := "exporter:" + nameOrPath
	p.mu.Lock()
	l, ok := p.launched[key]
	p.mu.Unlock()
	if ok {
		return l.(*ExporterPlugin), nil
	}
	e, err := p.startExporter(nameOrPath, origin, p.log)
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	p.launched[key] = e
	p.mu.Unlock()
	return e, nil
}

func (p *Plugins) startExporter(nameOrPath, origin string, log zerolog.Logger) (*ExporterPlugin, error) {
	path, err := plugin.Find(protocol.ExporterKind, nameOrPath, plugin.SearchDirs())
	if err != nil {
		return nil, config.UsageError{Err: fmt.Errorf("%s: %w", origin, err)}
	}
	c, err := plugin.Launch(protocol.ExporterKind, path, log)
	if err != nil {
		return nil, err
	}
	p.add(c)
	d, err := c.Exporter().Describe(context.Background(), plugin.Host(p.version))
	if err != nil {
		if kind := c.OtherKind(err); kind != "" {
			return nil, config.UsageError{Err: fmt.Errorf("%s: %s is an lmbench %s plugin, not an exporter (give it with --%s-plugin)", origin, path, kind, kind)}
		}
		return nil, c.Wrap("Describe", err)
	}
	c.SetName(d.Info.Name)
	return &ExporterPlugin{Client: c, Path: path, Desc: d}, nil
}

// Described is a plugin started only to describe itself.
type Described struct {
	Path                        string
	Kind, Name, Prefix, Summary string
	Options                     []protocol.OptionSpec
}

// DescribeAll starts every plugin in cands in parallel, quietly (warnings
// only), describes and stops it. Those that fail, or do not answer within
// timeout, are left out (their errors are logged at debug level); the
// rest come back in the order of cands.
func (p *Plugins) DescribeAll(cands []plugin.Candidate, timeout time.Duration) []Described {
	quiet := p.log.Level(max(p.log.GetLevel(), zerolog.WarnLevel))
	out := make([]*Described, len(cands))
	var mu sync.Mutex // guards out
	var wg sync.WaitGroup
	for i, c := range cands {
		wg.Go(func() {
			d, err := p.describeOne(c, quiet)
			if err != nil {
				p.log.Debug().Err(err).Str("plugin", c.Path).Msg("cannot describe a plugin")
				return
			}
			mu.Lock()
			out[i] = d
			mu.Unlock()
		})
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(timeout):
		p.log.Debug().Dur("timeout", timeout).Msg("some plugins did not describe themselves in time")
	}
	// Plugins still starting finish on their own; Close kills them.
	mu.Lock()
	defer mu.Unlock()
	var res []Described
	for _, d := range out {
		if d != nil {
			res = append(res, *d)
		}
	}
	return res
}

// DescribeWorkloads describes every workload plugin found (DescribeAll);
// a binary refused is logged and passed over. found is how many could be
// run.
func (p *Plugins) DescribeWorkloads(timeout time.Duration) (_ []Described, found int) {
	var cands []plugin.Candidate
	for _, c := range plugin.Discover(protocol.WorkloadKind, plugin.SearchDirs()) {
		if c.Refused != "" {
			p.log.Warn().Str("plugin", c.Path).Msg("not run: " + c.Refused)
			continue
		}
		cands = append(cands, c)
	}
	return p.DescribeAll(cands, timeout), len(cands)
}

func (p *Plugins) describeOne(c plugin.Candidate, log zerolog.Logger) (*Described, error) {
	if c.Kind == protocol.ExporterKind {
		e, err := p.startExporter(c.Path, "--exporter-plugin", log)
		if err != nil {
			return nil, err
		}
		e.Client.Kill()
		return &Described{Path: c.Path, Kind: c.Kind, Name: e.Name(), Prefix: e.Prefix(), Summary: e.Summary(), Options: e.Options()}, nil
	}
	w, err := p.startWorkload(c.Path, true, "--workload-plugin", log)
	if err != nil {
		return nil, err
	}
	w.Client.Kill()
	return &Described{Path: c.Path, Kind: c.Kind, Name: w.Name(), Prefix: w.Prefix(), Summary: w.Summary(), Options: w.Options()}, nil
}

// elsewhereTimeout bounds how long the plugins not in use may take to
// describe themselves; those slower are left out (their keys stay errors).
const elsewhereTimeout = 10 * time.Second

// Elsewhere collects the options of every installed plugin not in use
// (named kind/name in inUse), so a config key or variable meant for
// another workload can be told from a typo. It runs once per set of
// plugins in use.
func (p *Plugins) Elsewhere(inUse []string) *config.Elsewhere {
	ids := slices.Sorted(slices.Values(inUse))
	id := strings.Join(ids, ",")
	p.mu.Lock()
	if p.others != nil && p.othersFor == id {
		defer p.mu.Unlock()
		return p.others
	}
	p.mu.Unlock()
	var found []plugin.Candidate
	for _, c := range plugin.Discover("", plugin.SearchDirs()) {
		if c.Refused == "" && !slices.Contains(ids, c.Kind+"/"+c.Name) {
			found = append(found, c)
		}
	}
	others := config.NewElsewhere()
	for _, d := range p.DescribeAll(found, elsewhereTimeout) {
		if !slices.Contains(ids, d.Kind+"/"+d.Name) {
			others.AddPlugin(d.Kind, d.Name, d.Prefix, d.Options)
		}
	}
	p.mu.Lock()
	p.others, p.othersFor = others, id
	p.mu.Unlock()
	return others
}
