package htmlreport

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/lmbench/lmbench/core/analysis"
	"github.com/lmbench/lmbench/core/record"
	"github.com/lmbench/lmbench/core/stats"
)

// Kind is how a panel draws its series.
type Kind string

const (
	CDF     Kind = "cdf"     // step lines of cumulative shares
	Hist    Kind = "hist"    // bins
	Scatter Kind = "scatter" // points
	Lines   Kind = "lines"   // step lines over time
	Box     Kind = "box"     // a box and its points per category
	Bars    Kind = "bars"    // grouped bars per category
	Forest  Kind = "forest"  // a point and its interval per category
	Curve   Kind = "curve"   // points joined in order (a sweep's)
)

// Panel is one chart: what it shows (the data goldens pin) and how to
// label it. A panel without data says why in Empty.
type Panel struct {
	ID      string   `json:"id"`
	Title   string   `json:"title"`
	Caption string   `json:"caption"`
	Kind    Kind     `json:"kind"`
	X       Axis     `json:"x"`
	Y       Axis     `json:"y"`
	Series  []Series `json:"series,omitempty"`
	// Marks are reference lines across the plot at these X values
	// ("measured phase starts", a ratio of 1), drawn grey.
	Marks []Mark `json:"marks,omitempty"`
	Empty string `json:"empty,omitempty"`
}

// Axis is an axis's label (with its unit), scale and, for categories,
// their names in order.
type Axis struct {
	Label      string   `json:"label"`
	Log        bool     `json:"log,omitempty"`
	Categories []string `json:"categories,omitempty"`
}

// Mark is a labelled reference line at X.
type Mark struct {
	X     float64 `json:"x"`
	Label string  `json:"label"`
}

// Series is one colour of a panel. Which fields are set depends on the
// panel's Kind: XY for CDF, Scatter and Lines; Bins for Hist; Groups for
// Box (one per category, in order); Values for Bars (one per category);
// Intervals for Forest.
type Series struct {
	Name      string      `json:"name"`
	XY        []Point     `json:"xy,omitempty"`
	Bins      []Bin       `json:"bins,omitempty"`
	Groups    [][]float64 `json:"groups,omitempty"`
	Values    []float64   `json:"values,omitempty"`
	Intervals []Interval  `json:"intervals,omitempty"`
}

// Point is one data point; in JSON, [x, y], null where a coordinate is
// not defined (a line's break, a figure a sweep point lacks).
type Point struct{ X, Y float64 }

func (p Point) MarshalJSON() ([]byte, error) {
	var xy [2]any
	for i, v := range []float64{p.X, p.Y} {
		if !math.IsNaN(v) {
			xy[i] = v
		}
	}
	return json.Marshal(xy)
}

// Bin is one histogram bin: [Lo, Hi) holding N values (the last bin
// includes Hi).
type Bin struct {
	Lo float64 `json:"lo"`
	Hi float64 `json:"hi"`
	N  int     `json:"n"`
}

// Interval is a point estimate with its interval, on category Cat.
type Interval struct {
	Cat   int     `json:"cat"`
	Value float64 `json:"value"`
	Lo    float64 `json:"lo"`
	Hi    float64 `json:"hi"`
}

// Points is how many data points the panel plots.
func (p *Panel) Points() int {
	n := 0
	for _, s := range p.Series {
		n += len(s.XY) + len(s.Bins) + len(s.Values) + len(s.Intervals)
		for _, g := range s.Groups {
			n += len(g)
		}
	}
	return n
}

// Limits on what a chart draws, so a long run's report stays small.
const (
	maxCDFPoints     = 400
	maxScatterPoints = 3000 // per series
	maxInFlightSteps = 4000
	maxColourSeries  = 8  // a tag with more values gets no colour panel
	maxCategories    = 24 // a tag with more values gets no box panel
	timeBins         = 60
)

// view is a run's records as the panels use them: times in seconds
// since the run's start.
type view struct {
	r            *analysis.Run
	t0           time.Time
	measureStart float64
	okMeasured   []*record.Record
}

func newView(r *analysis.Run) *view {
	v := &view{r: r, t0: r.Start()}
	start, _ := r.MeasureSpan()
	v.measureStart = v.sec(start)
	for i := range r.Records {
		rec := &r.Records[i]
		if rec.Phase == record.Measure && rec.Success {
			v.okMeasured = append(v.okMeasured, rec)
		}
	}
	return v
}

func (v *view) sec(t time.Time) float64 {
	if t.IsZero() {
		return math.NaN()
	}
	return t.Sub(v.t0).Seconds()
}

func (v *view) marks() []Mark {
	if math.IsNaN(v.measureStart) || v.measureStart <= 0 {
		return nil
	}
	return []Mark{{X: v.measureStart, Label: "measured phase starts"}}
}

// PanelGroup is a titled group of a run's panels.
type PanelGroup struct {
	Title  string
	Panels []Panel
}

// group is one entry of runGroups: a title and what draws its panels.
type group struct {
	title  string
	panels func(v *view) []Panel
}

// runGroups are the groups of a run's panels, in the page's order. A new
// source of data (the cache ledger, engine metrics over time, sweep
// curves) adds its group here, with its panels in a file of its own; a
// group whose data a run lacks returns panels that say why (Empty).
var runGroups = []group{
	{"Latency distributions", (*view).distributions},
	{"Over time", (*view).overTime},
	{"By tag", (*view).byTag},
	{"Prefix cache", func(v *view) []Panel { return []Panel{cachePanel(v.r)} }},
	{"Engine metrics over time", (*view).engine},
}

// RunGroups are the charts of one run, grouped, in the page's order.
func RunGroups(r *analysis.Run) []PanelGroup {
	v := newView(r)
	var out []PanelGroup
	for _, g := range runGroups {
		if ps := g.panels(v); len(ps) > 0 {
			out = append(out, PanelGroup{Title: g.title, Panels: ps})
		}
	}
	return out
}

// RunPanels are the charts of one run, in the page's order.
func RunPanels(r *analysis.Run) []Panel {
	var ps []Panel
	for _, g := range RunGroups(r) {
		ps = append(ps, g.Panels...)
	}
	return ps
}

// latency is one of the four latency distributions the report draws.
type latency struct {
	id, name string
	// what the figure is, and unit the histogram counts.
	what, unit string
	// of says which values: "the successful measured requests", …
	of     string
	values func(v *view) []float64
}

var latencies = []latency{
	{"ttft", "TTFT", "time to first token (first output chunk − submit)", "requests", "successful measured requests",
		func(v *view) []float64 { return v.field(func(r *record.Record) float64 { return r.TTFT * 1000 }) }},
	{"tpot", "TPOT", "time per output token after the first, (E2E − TTFT) / (output tokens − 1)", "requests",
		"successful measured requests with 2 output tokens or more",
		func(v *view) []float64 {
			return v.field(func(r *record.Record) float64 {
				if tpot, ok := r.TPOT(); ok {
					return tpot * 1000
				}
				return math.NaN()
			})
		}},
	{"itl", "ITL", "inter-token latency (a gap between consecutive output chunks)", "gaps",
		"gaps between output chunks of the successful measured requests (pooled)", (*view).gaps},
	{"e2e", "E2E", "end-to-end latency (finish − submit)", "requests", "successful measured requests",
		func(v *view) []float64 { return v.field(func(r *record.Record) float64 { return r.Latency * 1000 }) }},
}

// distributions are TTFT, TPOT, ITL and E2E as a CDF and a histogram each.
func (v *view) distributions() []Panel {
	var ps []Panel
	for _, d := range latencies {
		values := d.values(v)
		of := fmt.Sprintf("the %d %s", len(values), d.of)
		ps = append(ps, cdfPanel(d.id+"-cdf", d.name+" distribution (CDF)",
			fmt.Sprintf("Share of %s whose %s is at most x.", of, d.what),
			d.name+" (ms)", []Series{{Name: "measured", XY: ecdf(values)}}))
		ps = append(ps, histPanel(d.id+"-hist", d.name+" histogram",
			fmt.Sprintf("How many of %s fall in each %s bin.", of, d.name),
			d.name+" (ms)", d.unit, values))
	}
	return ps
}

// overTime is TTFT by phase and by tag, throughput, requests in flight
// and dispatch lag, over the run's time.
func (v *view) overTime() []Panel {
	ps := []Panel{v.ttftOverTimeByPhase()}
	for _, key := range v.tagKeys(2, maxColourSeries) {
		ps = append(ps, v.ttftOverTimeByTag(key))
	}
	ps = append(ps, v.throughput()...)
	return append(ps, v.inFlight(), v.dispatchLag())
}

// byTag is TTFT for each value of each tag the workload declares.
func (v *view) byTag() []Panel {
	var ps []Panel
	for _, key := range v.r.Header.TagKeys {
		vals := v.tagValues(key)
		switch {
		case len(vals) > maxCategories:
			ps = append(ps, Panel{ID: "ttft-by-" + key, Title: "TTFT by " + key, Kind: Box, X: Axis{Label: key + " (tag value)"}, Y: Axis{Label: "TTFT (ms)"},
				Empty: fmt.Sprintf("the %q tag has %d values, more than the %d a chart shows", key, len(vals), maxCategories)})
		case len(vals) < 2:
			why := fmt.Sprintf("no successful measured request has a %q tag", key)
			if len(vals) == 1 {
				why = fmt.Sprintf("every successful measured request has %s=%s: nothing to break down", key, vals[0])
			}
			ps = append(ps, Panel{ID: "ttft-by-" + key, Title: "TTFT by " + key, Kind: Box, X: Axis{Label: key + " (tag value)"}, Y: Axis{Label: "TTFT (ms)"}, Empty: why})
		default:
			ps = append(ps, v.ttftByTag(key))
		}
	}
	return ps
}

// field is f of each successful measured request, NaNs left out.
func (v *view) field(f func(*record.Record) float64) []float64 {
	var out []float64
	for _, r := range v.okMeasured {
		if x := f(r); !math.IsNaN(x) {
			out = append(out, x)
		}
	}
	return out
}

func (v *view) gaps() []float64 {
	var out []float64
	for _, r := range v.okMeasured {
		for i := 1; i < len(r.ChunkOffsetsUs); i++ {
			out = append(out, float64(r.ChunkOffsetsUs[i]-r.ChunkOffsetsUs[i-1])/1000)
		}
	}
	return out
}

// ecdf is the empirical CDF of values as step points: (v₀, 0), then each
// sorted value with the share at or below it; past maxCDFPoints, evenly
// spaced ranks (the first and last kept).
func ecdf(values []float64) []Point {
	if len(values) == 0 {
		return nil
	}
	s := slices.Clone(values)
	slices.Sort(s)
	n := len(s)
	out := []Point{{s[0], 0}}
	idx := make([]int, 0, min(n, maxCDFPoints))
	if n <= maxCDFPoints {
		for i := range n {
			idx = append(idx, i)
		}
	} else {
		for k := range maxCDFPoints {
			idx = append(idx, int(math.Round(float64(k)*float64(n-1)/float64(maxCDFPoints-1))))
		}
	}
	for _, i := range idx {
		out = append(out, Point{s[i], float64(i+1) / float64(n)})
	}
	return out
}

// wide says whether values span enough decades for a log axis.
func wide(lo, hi float64) bool { return lo > 0 && hi/lo >= 100 }

func cdfPanel(id, title, caption, xlabel string, series []Series) Panel {
	p := Panel{ID: id, Title: title, Caption: caption, Kind: CDF, X: Axis{Label: xlabel}, Y: Axis{Label: "share of the population (0–1)"}}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, s := range series {
		if len(s.XY) == 0 {
			continue
		}
		p.Series = append(p.Series, s)
		lo, hi = min(lo, s.XY[0].X), max(hi, s.XY[len(s.XY)-1].X)
	}
	p.X.Log = wide(lo, hi)
	if p.X.Log {
		p.Caption += " Logarithmic x axis."
	}
	if len(p.Series) == 0 {
		p.Empty = "no values: " + emptyWhy(id)
	}
	return p
}

func emptyWhy(id string) string {
	switch {
	case len(id) >= 4 && id[:4] == "tpot":
		return "no successful measured request had 2 output tokens or more"
	case len(id) >= 3 && id[:3] == "itl":
		return "no successful measured request had 2 output chunks or more"
	}
	return "no measured request succeeded"
}

func histPanel(id, title, caption, xlabel, unit string, values []float64) Panel {
	p := Panel{ID: id, Title: title, Caption: caption, Kind: Hist, X: Axis{Label: xlabel}, Y: Axis{Label: unit + " per bin"}}
	if len(values) == 0 {
		p.Empty = "no values: " + emptyWhy(id)
		return p
	}
	p.Series = []Series{{Name: "measured", Bins: bins(values)}}
	return p
}

// bins splits values into ⌈√n⌉ equal bins (5 to 40) from min to max.
func bins(values []float64) []Bin {
	lo, hi := slices.Min(values), slices.Max(values)
	k := min(max(int(math.Ceil(math.Sqrt(float64(len(values))))), 5), 40)
	if hi == lo {
		w := math.Max(math.Abs(lo)*0.05, 0.001)
		return []Bin{{lo - w/2, lo + w/2, len(values)}}
	}
	w := (hi - lo) / float64(k)
	out := make([]Bin, k)
	for i := range out {
		out[i] = Bin{Lo: lo + float64(i)*w, Hi: lo + float64(i+1)*w}
	}
	out[k-1].Hi = hi
	for _, x := range values {
		i := min(int((x-lo)/w), k-1)
		out[i].N++
	}
	return out
}

// thin keeps at most max points, every k-th, and says what it kept.
func thin(pts []Point, limit int) ([]Point, int) {
	if len(pts) <= limit {
		return pts, 1
	}
	k := (len(pts) + limit - 1) / limit
	var out []Point
	for i := 0; i < len(pts); i += k {
		out = append(out, pts[i])
	}
	return out, k
}

func thinNote(k int) string {
	if k <= 1 {
		return ""
	}
	return fmt.Sprintf(" (every %s request shown)", ordinal(k))
}

func ordinal(k int) string {
	suffix := "th"
	switch {
	case k%100 >= 11 && k%100 <= 13:
	case k%10 == 1:
		suffix = "st"
	case k%10 == 2:
		suffix = "nd"
	case k%10 == 3:
		suffix = "rd"
	}
	return strconv.Itoa(k) + suffix
}

func (v *view) ttftOverTimeByPhase() Panel {
	p := Panel{ID: "ttft-time-phase", Title: "TTFT over time, by phase", Kind: Scatter,
		X: Axis{Label: "submit time since the run's start (s)"}, Y: Axis{Label: "TTFT (ms)"}, Marks: v.marks()}
	thinned := 1
	for _, ph := range []record.Phase{record.Warmup, record.Measure} {
		var pts []Point
		for i := range v.r.Records {
			r := &v.r.Records[i]
			if r.Phase == ph && r.Success {
				pts = append(pts, Point{v.sec(r.Submit), r.TTFT * 1000})
			}
		}
		pts, k := thin(pts, maxScatterPoints)
		thinned = max(thinned, k)
		if len(pts) > 0 {
			p.Series = append(p.Series, Series{Name: phaseName(ph), XY: pts})
		}
	}
	p.Caption = "Each successful request's TTFT at the time it was sent, warm-up and measured." + thinNote(thinned)
	if len(p.Series) == 0 {
		p.Empty = "no request succeeded"
	}
	return p
}

func phaseName(ph record.Phase) string {
	if ph == record.Warmup {
		return "warm-up"
	}
	return "measured"
}

// tagValues are the distinct values of tag key among the successful
// measured requests, in natural order (numbers by value).
func (v *view) tagValues(key string) []string {
	seen := map[string]bool{}
	var vals []string
	for _, r := range v.okMeasured {
		if x, ok := r.Tags[key]; ok && !seen[x] {
			seen[x] = true
			vals = append(vals, x)
		}
	}
	slices.SortFunc(vals, stats.NaturalCompare)
	return vals
}

// tagKeys are the declared tag keys with lo to hi distinct values.
func (v *view) tagKeys(lo, hi int) []string {
	var out []string
	for _, k := range v.r.Header.TagKeys {
		if n := len(v.tagValues(k)); n >= lo && n <= hi {
			out = append(out, k)
		}
	}
	return out
}

func (v *view) ttftOverTimeByTag(key string) Panel {
	p := Panel{ID: "ttft-time-" + key, Title: fmt.Sprintf("TTFT over time, by %s", key), Kind: Scatter,
		X: Axis{Label: "submit time since the run's start (s)"}, Y: Axis{Label: "TTFT (ms)"}}
	thinned := 1
	for _, val := range v.tagValues(key) {
		var pts []Point
		for _, r := range v.okMeasured {
			if r.Tags[key] == val {
				pts = append(pts, Point{v.sec(r.Submit), r.TTFT * 1000})
			}
		}
		pts, k := thin(pts, maxScatterPoints)
		thinned = max(thinned, k)
		p.Series = append(p.Series, Series{Name: key + " " + val, XY: pts})
	}
	p.Caption = fmt.Sprintf("Each successful measured request's TTFT at the time it was sent, coloured by its %q tag.", key) + thinNote(thinned)
	return p
}

// timeGrid is the bins the over-time panels share: from the run's start
// to its last finish, about timeBins of a round width.
func (v *view) timeGrid() (width float64, n int) {
	end := 0.0
	for i := range v.r.Records {
		if f := v.sec(v.r.Records[i].Finish); f > end {
			end = f
		}
	}
	if end <= 0 {
		return 0, 0
	}
	width = niceWidth(end / timeBins)
	return width, int(math.Floor(end/width)) + 1
}

// niceWidth rounds w up to 1, 2 or 5 times a power of ten.
func niceWidth(w float64) float64 {
	if w <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(w)))
	for _, m := range []float64{1, 2, 5, 10} {
		if w <= m*p*(1+1e-9) {
			return m * p
		}
	}
	return 10 * p
}

func (v *view) throughput() []Panel {
	width, n := v.timeGrid()
	req := Panel{ID: "throughput-requests", Title: "Request throughput over time", Kind: Lines,
		X: Axis{Label: "time since the run's start (s)"}, Y: Axis{Label: "requests finished per second (req/s)"}, Marks: v.marks()}
	tok := Panel{ID: "throughput-tokens", Title: "Output token throughput over time", Kind: Lines,
		X: Axis{Label: "time since the run's start (s)"}, Y: Axis{Label: "output tokens per second (tok/s)"}, Marks: v.marks()}
	if n == 0 {
		req.Empty, tok.Empty = "no request finished", "no request finished"
		return []Panel{req, tok}
	}
	ok, failed, tokens := make([]float64, n), make([]float64, n), make([]float64, n)
	for i := range v.r.Records {
		r := &v.r.Records[i]
		f := v.sec(r.Finish)
		if math.IsNaN(f) || f < 0 {
			continue
		}
		b := min(int(f/width), n-1)
		if r.Success {
			ok[b]++
		} else {
			failed[b]++
		}
		tokens[b] += float64(r.OutputTokens)
	}
	series := func(name string, per []float64) Series {
		s := Series{Name: name}
		for b, c := range per {
			s.XY = append(s.XY, Point{float64(b) * width, c / width})
		}
		s.XY = append(s.XY, Point{float64(n) * width, per[n-1] / width})
		return s
	}
	req.Series = []Series{series("successful", ok)}
	if slices.Max(failed) > 0 {
		req.Series = append(req.Series, series("failed", failed))
	}
	tok.Series = []Series{series("output tokens", tokens)}
	binNote := fmt.Sprintf(" in %s s bins, both phases.", strconv.FormatFloat(width, 'g', -1, 64))
	req.Caption = "Requests finished per second" + binNote
	tok.Caption = "Output tokens of the requests finished per second" + binNote
	return []Panel{req, tok}
}

func (v *view) inFlight() Panel {
	p := Panel{ID: "in-flight", Title: "Requests in flight over time", Kind: Lines,
		X: Axis{Label: "time since the run's start (s)"}, Y: Axis{Label: "requests in flight"}, Marks: v.marks()}
	type event struct {
		t float64
		d int
	}
	var ev []event
	for i := range v.r.Records {
		r := &v.r.Records[i]
		s, f := v.sec(r.Submit), v.sec(r.Finish)
		if math.IsNaN(s) || math.IsNaN(f) {
			continue
		}
		ev = append(ev, event{s, +1}, event{f, -1})
	}
	if len(ev) == 0 {
		p.Empty = "no request was sent"
		return p
	}
	// Finishes before submits at the same instant: a freed slot refilled
	// at once is not counted twice.
	slices.SortStableFunc(ev, func(a, b event) int { return cmp.Or(cmp.Compare(a.t, b.t), cmp.Compare(a.d, b.d)) })
	var pts []Point
	cur := 0
	for i, e := range ev {
		cur += e.d
		if i+1 < len(ev) && ev[i+1].t == e.t {
			continue
		}
		pts = append(pts, Point{e.t, float64(cur)})
	}
	if len(pts) > maxInFlightSteps {
		// The most in flight in each time bin.
		width, n := v.timeGrid()
		maxes := make([]float64, n)
		for _, pt := range pts {
			b := min(max(int(pt.X/width), 0), n-1)
			maxes[b] = max(maxes[b], pt.Y)
		}
		pts = pts[:0]
		for b, m := range maxes {
			pts = append(pts, Point{float64(b) * width, m})
		}
		p.Caption = fmt.Sprintf("The most requests in flight (sent, not yet finished) in each %s s bin, both phases.", strconv.FormatFloat(width, 'g', -1, 64))
	} else {
		p.Caption = "Requests sent and not yet finished, at every send and finish, both phases."
	}
	p.Series = []Series{{Name: "in flight", XY: pts}}
	return p
}

func (v *view) dispatchLag() Panel {
	p := Panel{ID: "dispatch-lag", Title: "Dispatch lag over time", Kind: Scatter,
		X: Axis{Label: "scheduled (due) time since the run's start (s)"}, Y: Axis{Label: "dispatch lag, submit − due (ms)"}, Marks: v.marks()}
	thinned := 1
	for _, ph := range []record.Phase{record.Warmup, record.Measure} {
		var pts []Point
		for i := range v.r.Records {
			r := &v.r.Records[i]
			if r.Phase == ph && !r.Submit.IsZero() && !r.Scheduled.IsZero() {
				pts = append(pts, Point{v.sec(r.Scheduled), r.Submit.Sub(r.Scheduled).Seconds() * 1000})
			}
		}
		pts, k := thin(pts, maxScatterPoints)
		thinned = max(thinned, k)
		if len(pts) > 0 {
			p.Series = append(p.Series, Series{Name: phaseName(ph), XY: pts})
		}
	}
	p.Caption = "How late each request left after it was due (its schedule's time, or the Step that returned it), every request." + thinNote(thinned)
	if len(p.Series) == 0 {
		p.Empty = "no request was sent"
	}
	return p
}

func (v *view) ttftByTag(key string) Panel {
	vals := v.tagValues(key)
	p := Panel{ID: "ttft-by-" + key, Title: fmt.Sprintf("TTFT by %s", key), Kind: Box,
		X: Axis{Label: key + " (tag value)", Categories: vals}, Y: Axis{Label: "TTFT (ms)"}}
	s := Series{Name: "measured"}
	for _, val := range vals {
		var g []float64
		for _, r := range v.okMeasured {
			if r.Tags[key] == val {
				g = append(g, r.TTFT*1000)
			}
		}
		s.Groups = append(s.Groups, g)
	}
	p.Series = []Series{s}
	p.Caption = fmt.Sprintf("TTFT of the successful measured requests for each value of their %q tag: box from the 25th to the 75th percentile, line at the median, whiskers to the farthest point within 1.5 box lengths, every request a dot.", key)
	return p
}

func cachePanel(r *analysis.Run) Panel {
	p := Panel{ID: "cache", Title: "Prompt and cached tokens per phase", Kind: Bars,
		X: Axis{Label: "phase", Categories: []string{"warm-up", "measured"}}, Y: Axis{Label: "tokens (sum over the phase's requests)"}}
	w, m := CacheOf(r)
	p.Series = []Series{
		{Name: "prompt tokens", Values: []float64{float64(w.PromptTokens), float64(m.PromptTokens)}},
		{Name: "cached tokens", Values: []float64{float64(w.CachedTokens), float64(m.CachedTokens)}},
	}
	p.Caption = "usage.prompt_tokens and the prefix-cache hits the engine reported (prompt_tokens_details.cached_tokens), summed per phase."
	if w.Requests+m.Requests == 0 {
		p.Series, p.Empty = nil, "no request"
	}
	return p
}

// CacheOf is the run's cache block: the summary's, or computed from its
// records when the summary has none.
func CacheOf(r *analysis.Run) (warmup, measure analysis.CachePhase) {
	if c := r.Summary.Cache; c != nil {
		return c.Warmup, c.Measure
	}
	for i := range r.Records {
		rec := &r.Records[i]
		c := &measure
		if rec.Phase == record.Warmup {
			c = &warmup
		}
		c.Requests++
		c.PromptTokens += rec.InputTokens
		c.CachedTokens += rec.CachedTokens
		if rec.CachedTokens > 0 {
			c.RequestsWithCached++
		}
	}
	for _, c := range []*analysis.CachePhase{&warmup, &measure} {
		if c.PromptTokens > 0 {
			ratio := float64(c.CachedTokens) / float64(c.PromptTokens)
			c.CachedRatio = &ratio
		}
	}
	return warmup, measure
}
