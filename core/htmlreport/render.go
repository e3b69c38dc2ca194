package htmlreport

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"regexp"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Palette is the Okabe–Ito palette (Okabe & Ito, "Color Universal
// Design", 2008), told apart by readers with any common colour-vision
// deficiency, in the order series take it. Yellow comes last: it is
// faint on white. Data are drawn in these colours only, so a page script
// can tell a chart's data from its axes.
var Palette = []color.RGBA{
	{0x00, 0x72, 0xB2, 0xFF}, // blue
	{0xE6, 0x9F, 0x00, 0xFF}, // orange
	{0x00, 0x9E, 0x73, 0xFF}, // bluish green
	{0xD5, 0x5E, 0x00, 0xFF}, // vermillion
	{0xCC, 0x79, 0xA7, 0xFF}, // reddish purple
	{0x56, 0xB4, 0xE9, 0xFF}, // sky blue
	{0xF0, 0xE4, 0x42, 0xFF}, // yellow
}

// markColour draws reference lines: grey, not a data colour.
var markColour = color.RGBA{0x88, 0x88, 0x88, 0xFF}

func colour(i int) color.RGBA { return Palette[i%len(Palette)] }

// dashes tell series apart without colour too: solid, dashed, dotted, …
var dashes = [][]vg.Length{nil, {vg.Points(6), vg.Points(3)}, {vg.Points(2), vg.Points(2)}, {vg.Points(8), vg.Points(3), vg.Points(2), vg.Points(3)}}

// glyphs tell scatter series apart without colour.
var glyphs = []draw.GlyphDrawer{draw.CircleGlyph{}, draw.TriangleGlyph{}, draw.SquareGlyph{}, draw.PlusGlyph{}, draw.CrossGlyph{}, draw.RingGlyph{}, draw.PyramidGlyph{}}

// Chart size, in points (1/72 in); the page scales the SVG to its width.
const (
	chartWidth  = 640
	chartHeight = 320
)

// Render draws a panel with data as an SVG element to inline in HTML
// (no XML prolog). It is an error to render an empty panel.
func Render(p Panel) ([]byte, error) {
	if p.Empty != "" || p.Points() == 0 {
		return nil, fmt.Errorf("panel %s: no data to draw (%s)", p.ID, p.Empty)
	}
	plt := plot.New()
	sans(plt)
	plt.Title.Text = p.Title
	plt.X.Label.Text = p.X.Label
	plt.Y.Label.Text = p.Y.Label
	plt.Legend.Top = true
	var err error
	switch p.Kind {
	case CDF, Lines:
		err = drawLines(plt, p)
	case Scatter:
		err = drawScatter(plt, p)
	case Curve:
		err = drawCurve(plt, p)
	case Hist:
		err = drawHist(plt, p)
	case Box:
		err = drawBox(plt, p)
	case Bars:
		err = drawBars(plt, p)
	case Forest:
		err = drawForest(plt, p)
	default:
		err = fmt.Errorf("unknown kind %q", p.Kind)
	}
	if err != nil {
		return nil, fmt.Errorf("panel %s: %w", p.ID, err)
	}
	if p.X.Log {
		plt.X.Scale = plot.LogScale{}
		plt.X.Tick.Marker = plot.LogTicks{Prec: -1}
	}
	if err := addMarks(plt, p); err != nil {
		return nil, fmt.Errorf("panel %s: %w", p.ID, err)
	}
	if plt.Legend.Top && p.Kind != Forest {
		// Headroom for the legend in the top right corner.
		plt.Y.Max += 0.2 * (plt.Y.Max - plt.Y.Min)
	}
	c := vgsvg.New(vg.Points(chartWidth), vg.Points(chartHeight))
	plt.Draw(draw.New(c))
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		return nil, fmt.Errorf("panel %s: %w", p.ID, err)
	}
	return inlineSVG(buf.Bytes(), p.ID), nil
}

// sans sets every text of the plot in Liberation Sans (metric-compatible
// with Arial and Helvetica, the browser's stand-ins when it lacks it).
func sans(p *plot.Plot) {
	for _, s := range []*font.Font{&p.Title.TextStyle.Font, &p.X.Label.TextStyle.Font, &p.Y.Label.TextStyle.Font,
		&p.X.Tick.Label.Font, &p.Y.Tick.Label.Font, &p.Legend.TextStyle.Font} {
		s.Variant = "Sans"
	}
	p.Title.TextStyle.Font.Size = vg.Points(13)
}

var (
	prolog     = regexp.MustCompile(`(?s)^.*?<svg`)
	sizeAttrs  = regexp.MustCompile(`<svg width="[^"]*" height="[^"]*"`)
	fontFamily = regexp.MustCompile(`font-family:Liberation Sans`)
)

// inlineSVG drops the XML prolog and the fixed size (the page sizes the
// chart) and names the SVG after its panel.
func inlineSVG(b []byte, id string) []byte {
	b = prolog.ReplaceAll(b, []byte("<svg"))
	b = sizeAttrs.ReplaceAll(b, []byte(fmt.Sprintf(`<svg class="chart" data-panel=%q role="img" preserveAspectRatio="xMidYMid meet"`, id)))
	return fontFamily.ReplaceAll(b, []byte("font-family:'Liberation Sans',Arial,Helvetica,sans-serif"))
}

func lineStyle(i int) draw.LineStyle {
	return draw.LineStyle{Color: colour(i), Width: vg.Points(1.5), Dashes: dashes[i%len(dashes)]}
}

func xys(pts []Point) plotter.XYs {
	out := make(plotter.XYs, 0, len(pts))
	for _, pt := range pts {
		if !math.IsNaN(pt.X) && !math.IsNaN(pt.Y) && !math.IsInf(pt.X, 0) && !math.IsInf(pt.Y, 0) {
			out = append(out, plotter.XY{X: pt.X, Y: pt.Y})
		}
	}
	return out
}

func drawLines(plt *plot.Plot, p Panel) error {
	for i, s := range p.Series {
		// A NaN point breaks the line: the figure is not defined there.
		for k, seg := range segments(s.XY) {
			l, err := plotter.NewLine(seg)
			if err != nil {
				return err
			}
			l.StepStyle = plotter.PostStep
			l.LineStyle = lineStyle(i)
			plt.Add(l)
			if k == 0 {
				plt.Legend.Add(s.Name, l)
			}
		}
	}
	if p.Kind == CDF {
		plt.Y.Min, plt.Y.Max = 0, 1
		plt.Legend.Top = false // a CDF's lower right is empty
	} else {
		plt.Y.Min = 0
	}
	return nil
}

// segments are the runs of defined points between NaN ones.
func segments(pts []Point) []plotter.XYs {
	var out []plotter.XYs
	start := 0
	for i := 0; i <= len(pts); i++ {
		if i == len(pts) || math.IsNaN(pts[i].X) || math.IsNaN(pts[i].Y) {
			if seg := xys(pts[start:i]); len(seg) > 0 {
				out = append(out, seg)
			}
			start = i + 1
		}
	}
	return out
}

func drawScatter(plt *plot.Plot, p Panel) error {
	plt.Y.Min = 0
	for i, s := range p.Series {
		pts := xys(s.XY)
		if len(pts) == 0 {
			continue
		}
		sc, err := plotter.NewScatter(pts)
		if err != nil {
			return err
		}
		sc.GlyphStyle = draw.GlyphStyle{Color: colour(i), Radius: vg.Points(2.5), Shape: glyphs[i%len(glyphs)]}
		plt.Add(sc)
		plt.Legend.Add(s.Name, sc)
	}
	return nil
}

func drawCurve(plt *plot.Plot, p Panel) error {
	plt.Y.Min = 0
	for i, s := range p.Series {
		pts := xys(s.XY)
		if len(pts) == 0 {
			continue
		}
		l, sc, err := plotter.NewLinePoints(pts)
		if err != nil {
			return err
		}
		l.LineStyle = lineStyle(i)
		sc.GlyphStyle = draw.GlyphStyle{Color: colour(i), Radius: vg.Points(3), Shape: glyphs[i%len(glyphs)]}
		plt.Add(l, sc)
		plt.Legend.Add(s.Name, l, sc)
	}
	return nil
}

func drawHist(plt *plot.Plot, p Panel) error {
	for i, s := range p.Series {
		if len(s.Bins) == 0 {
			continue
		}
		h := &plotter.Histogram{Width: s.Bins[0].Hi - s.Bins[0].Lo, FillColor: colour(i),
			LineStyle: draw.LineStyle{Color: color.White, Width: vg.Points(0.5)}}
		for _, b := range s.Bins {
			h.Bins = append(h.Bins, plotter.HistogramBin{Min: b.Lo, Max: b.Hi, Weight: float64(b.N)})
		}
		plt.Add(h)
		if len(p.Series) > 1 {
			plt.Legend.Add(s.Name, h)
		}
	}
	plt.Y.Min = 0
	return nil
}

func drawBox(plt *plot.Plot, p Panel) error {
	for si, s := range p.Series {
		var dots plotter.XYs
		for k, g := range s.Groups {
			if len(g) == 0 {
				continue
			}
			b, err := plotter.NewBoxPlot(vg.Points(24), float64(k), plotter.Values(g))
			if err != nil {
				return err
			}
			b.GlyphStyle.Radius = 0 // every value is a dot below
			plt.Add(b)
			for j, v := range g {
				// A fixed spread (golden ratio steps), so a report is reproducible.
				jitter := (math.Mod(float64(j)*0.6180339887, 1) - 0.5) * 0.3
				dots = append(dots, plotter.XY{X: float64(k) + jitter, Y: v})
			}
		}
		if len(dots) > 0 {
			sc, err := plotter.NewScatter(dots)
			if err != nil {
				return err
			}
			sc.GlyphStyle = draw.GlyphStyle{Color: colour(si), Radius: vg.Points(1.5), Shape: draw.CircleGlyph{}}
			plt.Add(sc)
		}
	}
	plt.NominalX(p.X.Categories...)
	plt.X.Min, plt.X.Max = -0.5, float64(len(p.X.Categories))-0.5
	plt.Y.Min = 0
	return nil
}

func drawBars(plt *plot.Plot, p Panel) error {
	n := len(p.Series)
	w := vg.Points(float64(min(40, 120/max(n, 1))))
	for i, s := range p.Series {
		b, err := plotter.NewBarChart(plotter.Values(s.Values), w)
		if err != nil {
			return err
		}
		b.Color = colour(i)
		b.LineStyle.Width = 0
		b.Offset = w * vg.Length(float64(i)-float64(n-1)/2)
		plt.Add(b)
		plt.Legend.Add(s.Name, b)
	}
	plt.NominalX(p.X.Categories...)
	plt.X.Min, plt.X.Max = -0.5, float64(len(p.X.Categories))-0.5
	return nil
}

// drawForest draws each series' intervals on horizontal rows, the first
// category at the top.
func drawForest(plt *plot.Plot, p Panel) error {
	n := len(p.Y.Categories)
	step := 0.6 / float64(max(len(p.Series), 1))
	for si, s := range p.Series {
		var pts errPoints
		off := (float64(si) - float64(len(p.Series)-1)/2) * step
		for _, iv := range s.Intervals {
			pts.XYs = append(pts.XYs, plotter.XY{X: iv.Value, Y: float64(n-1-iv.Cat) - off})
			pts.XErrors = append(pts.XErrors, struct{ Low, High float64 }{iv.Value - iv.Lo, iv.Hi - iv.Value})
		}
		if len(pts.XYs) == 0 {
			continue
		}
		bars, err := plotter.NewXErrorBars(pts)
		if err != nil {
			return err
		}
		bars.LineStyle = draw.LineStyle{Color: colour(si), Width: vg.Points(1.5)}
		sc, err := plotter.NewScatter(pts.XYs)
		if err != nil {
			return err
		}
		sc.GlyphStyle = draw.GlyphStyle{Color: colour(si), Radius: vg.Points(3), Shape: glyphs[si%len(glyphs)]}
		plt.Add(bars, sc)
		plt.Legend.Add(s.Name, sc)
	}
	names := make([]string, n)
	for k, c := range p.Y.Categories {
		names[n-1-k] = c
	}
	plt.NominalY(names...)
	plt.Y.Label.Text = ""
	// A blank row on top for the legend.
	plt.Y.Min, plt.Y.Max = -0.5, float64(n)+0.5
	// Room for the glyphs at both ends of the intervals.
	if p.X.Log {
		plt.X.Min, plt.X.Max = plt.X.Min/1.15, plt.X.Max*1.15
	} else {
		pad := 0.05 * (plt.X.Max - plt.X.Min)
		plt.X.Min, plt.X.Max = plt.X.Min-pad, plt.X.Max+pad
	}
	return nil
}

type errPoints struct {
	plotter.XYs
	plotter.XErrors
}

// addMarks draws the reference lines across the data's range.
func addMarks(plt *plot.Plot, p Panel) error {
	for _, m := range p.Marks {
		if p.X.Log && m.X <= 0 {
			continue
		}
		lo, hi := plt.Y.Min, plt.Y.Max
		if p.Kind == Forest {
			lo, hi = -0.5, float64(len(p.Y.Categories))-0.5 // not across the legend's row
		}
		l, err := plotter.NewLine(plotter.XYs{{X: m.X, Y: lo}, {X: m.X, Y: hi}})
		if err != nil {
			return err
		}
		l.LineStyle = draw.LineStyle{Color: markColour, Width: vg.Points(1), Dashes: []vg.Length{vg.Points(4), vg.Points(3)}}
		plt.Add(l)
		plt.Legend.Add(m.Label, l)
	}
	return nil
}
