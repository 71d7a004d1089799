package main

// Plots (gonum.org/v1/plot), each as PNG and SVG under the results directory.

import (
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

var modeColors = map[string]color.Color{
	"pull":   color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff},
	"push":   color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff},
	"hybrid": color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff},
}

// chart is a plot with its legend, which is drawn in a strip to the right
// of the axes (never over the data), and notes written inside the data area.
type chart struct {
	*plot.Plot
	legend plot.Legend
	notes  []string
}

func newChart() *chart {
	c := &chart{Plot: plot.New(), legend: plot.NewLegend()}
	c.legend.Top, c.legend.Left = true, true
	c.legend.Padding = vg.Points(4)
	return c
}

// note is a Plotter that writes lines of text in the top left corner of the
// data area (used for a floor that is far above the axis's scale). The axis
// leaves headroom for it (see headroom).
type note struct{ lines []string }

func (n note) Plot(c draw.Canvas, p *plot.Plot) {
	sty := p.Legend.TextStyle
	sty.XAlign, sty.YAlign = draw.XLeft, draw.YTop
	pad := vg.Points(6)
	c.FillText(sty, vg.Point{X: c.Min.X + pad, Y: c.Max.Y - pad}, strings.Join(n.lines, "\n"))
}

// headroom sets the top of the y axis above the highest plotted value (bars,
// lines and whiskers), with more room when notes are written at the top.
func (c *chart) headroom() {
	c.Y.Min = 0
	f := 1.1
	if len(c.notes) > 0 {
		f = 1.25 + 0.1*float64(len(c.notes))
		c.Add(note{c.notes})
	}
	c.Y.Max = niceMax(c.Y.Max * f)
	c.Y.Tick.Marker = roundTicks{}
}

// save writes the chart as PNG and SVG: the plot on the left, the legend in
// a strip on the right, level with the top of the data area.
func (c *chart) save(dir, name string, w, h vg.Length) ([]string, error) {
	var out []string
	for _, ext := range []string{"png", "svg"} {
		cw, err := draw.NewFormattedCanvas(w, h, ext)
		if err != nil {
			return out, err
		}
		dc := draw.New(cw)
		gap := vg.Points(10)
		lw := c.legend.Rectangle(dc).Size().X + 2*gap
		pc := draw.Crop(dc, 0, -lw, 0, 0)
		c.Draw(pc)
		top := c.DataCanvas(pc).Max.Y
		c.legend.Draw(draw.Canvas{Canvas: dc.Canvas, Rectangle: vg.Rectangle{
			Min: vg.Point{X: pc.Max.X + gap, Y: dc.Min.Y},
			Max: vg.Point{X: dc.Max.X, Y: top},
		}})
		path := filepath.Join(dir, name+"."+ext)
		f, err := os.Create(path)
		if err != nil {
			return out, err
		}
		if _, err := cw.WriteTo(f); err != nil {
			f.Close()
			return out, err
		}
		if err := f.Close(); err != nil {
			return out, err
		}
		out = append(out, path)
	}
	return out, nil
}

func (r *Result) modesPresent() []string {
	var out []string
	for _, m := range modeOrder {
		if r.Modes[m] != nil {
			out = append(out, m)
		}
	}
	return out
}

// plots draws the run's charts into o.out, each as PNG and SVG, and says
// which it wrote and which it skipped (with why).
func plots(r *Result, o *options) (files, skipped []string, err error) {
	d := newPlotDrawing(r, o.out)
	err = d.drawAll()
	return d.files, d.skipped, err
}

// plotWidth and plotHeight are the size of every chart but the warm-read
// targets'.
const plotWidth, plotHeight = 18 * vg.Centimeter, 11 * vg.Centimeter

// plotDrawing is one run's charts as they are drawn.
type plotDrawing struct {
	r               *Result
	dir             string
	modes           []string // the modes the run has, in modeOrder
	subtitle        string   // the run's graph and machine, and what the whiskers mean
	targetsSubtitle string   // the same, for a chart without whiskers
	files           []string
	skipped         []string
}

func newPlotDrawing(r *Result, dir string) *plotDrawing {
	d := &plotDrawing{r: r, dir: dir, modes: r.modesPresent()}
	d.subtitle = fmt.Sprintf("%d users, %d cores; MariaDB %s, Redis %s", r.Graph.Users, r.Machine.NProc, r.Machine.MariaDB, r.Machine.Redis)
	d.targetsSubtitle = d.subtitle
	if r.Runs > 1 {
		d.subtitle += fmt.Sprintf("\nmedians of %d runs; whiskers: lowest to highest run", r.Runs)
		d.targetsSubtitle += fmt.Sprintf("\nmedians of %d runs", r.Runs)
	}
	return d
}

// drawAll draws the charts in the order the report lists them, stopping
// at the first error.
func (d *plotDrawing) drawAll() error {
	if err := d.warmReadTargets(); err != nil {
		return err
	}
	if d.r.Only != "" {
		return nil // the other plots need the workloads this run left out
	}
	for _, draw := range []func() error{d.readThroughput, d.latencyVsFolloweesByMode, d.latencyVsFollowees, d.writeVisibility} {
		if err := draw(); err != nil {
			return err
		}
	}
	return nil
}

// save writes c as name.png and name.svg and records the files.
func (d *plotDrawing) save(c *chart, name string, w, h vg.Length) error {
	files, err := c.save(d.dir, name, w, h)
	d.files = append(d.files, files...)
	return err
}

// skip notes a plot left out because the run has nothing to draw on it
// (its workloads were not run, e.g. with -workloads).
func (d *plotDrawing) skip(name, why string) {
	d.skipped = append(d.skipped, name+": "+why)
}

// warmReadTargets draws each measured figure as a share of its bound,
// wider than the others for their six groups' labels.
func (d *plotDrawing) warmReadTargets() error {
	return d.save(warmReadTargetsChart(d.r, d.targetsSubtitle), "warm_read_targets", 22*vg.Centimeter, plotHeight)
}

// readThroughput draws the first page's throughput by mode and
// concurrency as grouped bars, against the Redis page floor.
func (d *plotDrawing) readThroughput() error {
	r := d.r
	if !slices.ContainsFunc(d.modes, func(m string) bool { return len(r.Modes[m].FirstPage) > 0 }) {
		d.skip("read_throughput", "no points (the first-page workload, 1, was not run)")
		return nil
	}
	p := newChart()
	p.Title.Text = "Feed first page (20 entries): throughput\n" + d.subtitle
	p.Y.Label.Text = "pages/s"
	p.X.Label.Text = "concurrent clients"
	conc := []int{1, 8, 32}
	err := p.modeBars(d.modes, func(m string) plotter.Values {
		vals := make(plotter.Values, len(conc))
		for i, c := range conc {
			vals[i] = firstPageAt(r.Modes[m], c).Throughput
		}
		return vals
	})
	if err != nil {
		return err
	}
	names := make([]string, len(conc))
	for i, c := range conc {
		names[i] = strconv.Itoa(c)
	}
	p.NominalX(names...)
	floorLine(p, r.floor(redisFloor), "Redis page floor (8 workers)", "pages/s")
	p.headroom()
	return d.save(p, "read_throughput", plotWidth, plotHeight)
}

// modeBars adds a bar per mode to each group, side by side in the modes'
// colours, with the values of mode m from vals.
func (c *chart) modeBars(modes []string, vals func(m string) plotter.Values) error {
	w := vg.Points(18)
	for k, m := range modes {
		bars, err := plotter.NewBarChart(vals(m), w)
		if err != nil {
			return err
		}
		bars.Color = modeColors[m]
		bars.LineStyle.Width = 0
		bars.Offset = vg.Length(k-len(modes)/2) * w
		c.Add(bars)
		c.legend.Add(m, bars)
	}
	return nil
}

// latencyVsFolloweesByMode draws, one plot per mode, the warm read's
// p50/p95/p99 against the reader's followee count, with the cold first read.
func (d *plotDrawing) latencyVsFolloweesByMode() error {
	for _, m := range d.modes {
		if len(d.r.Modes[m].Followees) == 0 {
			d.skip("latency_vs_followees_"+m, "no points (the followee-count workload, 3, was not run in "+m+" mode)")
			continue
		}
		if err := d.latencyVsFolloweesOf(m); err != nil {
			return err
		}
	}
	return nil
}

// followeeSeries is one line of latencyVsFolloweesOf.
type followeeSeries struct {
	name string
	get  func(f FolloweePoint) float64
	dash []vg.Length
}

// latencyVsFolloweesOf draws mode m's plot of latencyVsFolloweesByMode.
func (d *plotDrawing) latencyVsFolloweesOf(m string) error {
	mr := d.r.Modes[m]
	p := newChart()
	p.Title.Text = fmt.Sprintf("Feed read latency vs followees: %s mode\n%s", m, d.subtitle)
	p.X.Label.Text = "reader's followees"
	p.Y.Label.Text = "ms (one client)"
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = followeeTicks{d.r.Graph.ProbeBuckets}
	series := []followeeSeries{
		{"warm p50", func(f FolloweePoint) float64 { return f.Warm.P50 }, nil},
		{"warm p95", func(f FolloweePoint) float64 { return f.Warm.P95 }, []vg.Length{vg.Points(4), vg.Points(2)}},
		{"warm p99", func(f FolloweePoint) float64 { return f.Warm.P99 }, []vg.Length{vg.Points(1), vg.Points(2)}},
		{"cold first read p50", func(f FolloweePoint) float64 { return f.Cold.P50 }, []vg.Length{vg.Points(8), vg.Points(3)}},
	}
	for k, s := range series {
		// The cold read is grey: it is not the mode's warm figure.
		c := modeColors[m]
		if k == 3 {
			c = color.Gray{Y: 0x80}
		}
		if err := p.followeeLine(mr, s.name, s.get, c, s.dash, k == 3); err != nil {
			return err
		}
	}
	p.headroom()
	return d.save(p, "latency_vs_followees_"+m, plotWidth, plotHeight)
}

// followeeLine adds one mode's figure get against the followee count as a
// line with points (in colour c; the points too when colourPoints) and the
// runs' whiskers.
func (c *chart) followeeLine(mr *ModeResult, name string, get func(f FolloweePoint) float64, col color.Color, dash []vg.Length, colourPoints bool) error {
	pts := plotter.XYs{}
	for _, f := range mr.Followees {
		pts = append(pts, plotter.XY{X: float64(f.Followees), Y: get(f)})
	}
	l, sc, err := plotter.NewLinePoints(pts)
	if err != nil {
		return err
	}
	l.Color = col
	if colourPoints {
		sc.Color = col
	}
	l.Dashes = dash
	sc.Shape = draw.CircleGlyph{}
	c.Add(l, sc)
	c.legend.Add(name, l, sc)
	if eb := runWhiskers(mr, get); eb != nil {
		eb.Color = col
		c.Add(eb)
	}
	return nil
}

// latencyVsFollowees draws every mode's warm p99 against the followee
// count on one plot.
func (d *plotDrawing) latencyVsFollowees() error {
	r := d.r
	if !slices.ContainsFunc(d.modes, func(m string) bool { return len(r.Modes[m].Followees) > 0 }) {
		d.skip("latency_vs_followees", "no points (the followee-count workload, 3, was not run)")
		return nil
	}
	p := newChart()
	p.Title.Text = "Feed read p99 vs followees, by mode\n" + d.subtitle
	p.X.Label.Text = "reader's followees"
	p.Y.Label.Text = "p99 ms (one client, warm)"
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = followeeTicks{r.Graph.ProbeBuckets}
	for _, m := range d.modes {
		pts := plotter.XYs{}
		for _, f := range r.Modes[m].Followees {
			pts = append(pts, plotter.XY{X: float64(f.Followees), Y: f.Warm.P99})
		}
		l, sc, err := plotter.NewLinePoints(pts)
		if err != nil {
			return err
		}
		l.Color, sc.Color = modeColors[m], modeColors[m]
		p.Add(l, sc)
		p.legend.Add(m, l, sc)
		if eb := runWhiskers(r.Modes[m], func(f FolloweePoint) float64 { return f.Warm.P99 }); eb != nil {
			eb.Color = modeColors[m]
			p.Add(eb)
		}
	}
	p.headroom()
	return d.save(p, "latency_vs_followees", plotWidth, plotHeight)
}

// writeVisibility draws, by mode, the time until readers see a post: the
// ordinary author's last active inbox, the celebrity's post on a
// follower's page, and the red dot's p99 at the most sockets.
func (d *plotDrawing) writeVisibility() error {
	p := newChart()
	p.Title.Text = "After a post: time until readers see it (ms)\n" + d.subtitle
	p.Y.Label.Text = "ms after the mutation's response"
	err := p.modeBars(d.modes, func(m string) plotter.Values {
		mr := d.r.Modes[m]
		return plotter.Values{mr.Fanout.LastInbox.P50, mr.Celebrity.Visible.P50, mr.redDotLargest().Delivery.P99}
	})
	if err != nil {
		return err
	}
	p.NominalX("last active inbox\n(ordinary author)", "celebrity post on\na follower's page", "red dot p99\n(websockets)")
	p.headroom()
	return d.save(p, "write_visibility", plotWidth, plotHeight)
}

// floorLine shows a floor measured in the same run, written on the chart: a
// dashed line across it with its value when it is within twice the highest
// bar, otherwise (the usual case for the Redis floor, tens of times the
// service's throughput) a note at the top of the chart, so that the bars
// keep a readable scale.
func floorLine(p *chart, floor float64, name, unit string) {
	if floor <= 0 {
		return
	}
	text := fmt.Sprintf("%s: %s %s", name, thousands(floor), unit)
	if floor > 2*p.Y.Max {
		p.notes = append(p.notes, text, fmt.Sprintf("(off this scale: %.0fx the highest bar)", floor/p.Y.Max))
		return
	}
	p.Y.Max = max(p.Y.Max, floor)
	p.Add(hline{y: floor, text: text})
}

// hline is a dashed horizontal line across the whole data area at y, with
// its text written just above its left end.
type hline struct {
	y    float64
	text string
}

func (h hline) Plot(c draw.Canvas, p *plot.Plot) {
	_, ty := p.Transforms(&c)
	y := ty(h.y)
	c.StrokeLine2(draw.LineStyle{
		Color:  color.Gray{Y: 0x60},
		Width:  vg.Points(1),
		Dashes: []vg.Length{vg.Points(6), vg.Points(3)},
	}, c.Min.X, y, c.Max.X, y)
	sty := p.Legend.TextStyle
	sty.XAlign, sty.YAlign = draw.XLeft, draw.YBottom
	c.FillText(sty, vg.Point{X: c.Min.X + vg.Points(6), Y: y + vg.Points(3)}, h.text)
}

// thousands formats a figure rounded to a whole number, with commas.
func thousands(v float64) string {
	s := strconv.FormatInt(int64(math.Round(v)), 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// whiskers are the lowest and highest run of each point of a line.
type whiskers struct {
	plotter.XYs
	plotter.YErrors
}

// runWhiskers draws, at each followee count, the range of a figure over the
// mode's runs; nil with one run.
func runWhiskers(mr *ModeResult, get func(FolloweePoint) float64) *plotter.YErrorBars {
	if len(mr.Runs) < 2 {
		return nil
	}
	var w whiskers
	for i, f := range mr.Followees {
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, run := range mr.Runs {
			v := get(followeeAt(run, i))
			lo, hi = min(lo, v), max(hi, v)
		}
		y := get(f)
		w.XYs = append(w.XYs, plotter.XY{X: float64(f.Followees), Y: y})
		w.YErrors = append(w.YErrors, struct{ Low, High float64 }{max(0, y-lo), max(0, hi-y)})
	}
	eb, err := plotter.NewYErrorBars(w)
	if err != nil {
		return nil
	}
	return eb
}

// followeeTicks labels the log axis at the measured followee counts.
type followeeTicks struct{ at []int }

func (t followeeTicks) Ticks(min, max float64) []plot.Tick {
	var out []plot.Tick
	for _, v := range t.at {
		out = append(out, plot.Tick{Value: float64(v), Label: strconv.Itoa(v)})
	}
	return out
}

// niceMax rounds an axis maximum up to 1, 1.5, 2, 2.5, 3, 4, 5, 6 or 8 times
// a power of ten, so that five ticks (roundTicks) fall on round numbers.
func niceMax(v float64) float64 {
	if v <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10} {
		if v <= m*p {
			return m * p
		}
	}
	return 10 * p
}

// roundTicks puts five ticks on [0, max] with plain labels (max from niceMax).
type roundTicks struct{}

func (roundTicks) Ticks(min, max float64) []plot.Tick {
	var out []plot.Tick
	step := (max - min) / 5
	for i := 0; i <= 5; i++ {
		v := min + float64(i)*step
		// Rounded to drop the float error of min + i*step (0.8999999999999999).
		out = append(out, plot.Tick{Value: v, Label: strconv.FormatFloat(math.Round(v*1e9)/1e9, 'f', -1, 64)})
	}
	return out
}

// warmReadTargetsChart draws the warm-read targets that have a bound, the
// page with blocks and mutes among them, each as
// its measured figure divided by the bound (1 is the bound: a bar that
// reaches the dashed line meets it), one bar per mode, each labelled with
// its value.
func warmReadTargetsChart(r *Result, subtitle string) *chart {
	rows := r.WarmReadTargets
	if rows == nil {
		rows = r.warmReadTargets()
	}
	type cat struct {
		name  string
		match func(t TargetRow) bool
	}
	cats := []cat{
		{"first page, 8 clients\n/ 30% of\nRedis page floor", func(t TargetRow) bool { return strings.HasPrefix(t.Target, "warm first page, 8 clients") }},
		{"deep pages 2-10\n/ 80% of\nfirst page", func(t TargetRow) bool { return strings.HasPrefix(t.Target, "deep pages") }},
		{"hybrid/pull\n32 clients\n/ 10x", func(t TargetRow) bool { return strings.HasPrefix(t.Target, "hybrid vs pull") }},
		{"hybrid/push\n8 clients\n/ 90%", func(t TargetRow) bool { return t.Target == "hybrid vs push, warm first page, 8 clients" }},
		{"hybrid/push\n32 clients\n/ 90%", func(t TargetRow) bool { return t.Target == "hybrid vs push, warm first page, 32 clients" }},
		{"returning reader\np50 / 50 ms", func(t TargetRow) bool {
			return strings.HasPrefix(t.Target, "returning reader") && strings.HasSuffix(t.Target, "p50")
		}},
		{"returning reader\np99 / 150 ms", func(t TargetRow) bool {
			return strings.HasPrefix(t.Target, "returning reader") && strings.HasSuffix(t.Target, "p99")
		}},
		{"peer-shaped,\none client p50\n/ 0.75 ms", func(t TargetRow) bool { return strings.HasPrefix(t.Target, "peer-shaped workload, warm first page") }},
	}
	if r.GoBench != nil {
		cats = append(cats,
			cat{"engine page\n/ 50% of\nraw Redis page", func(t TargetRow) bool { return strings.HasPrefix(t.Target, "engine page (") }},
			cat{"allocs/page:\n796 (half of\n1,592) / engine's", func(t TargetRow) bool { return t.Target == "engine page allocations" }},
			cat{"blocks, mutes:\n110% of time\nwithout / with", func(t TargetRow) bool { return t.Mode != "" && t.Target == hidingTarget(t.Mode) }})
	}
	p := newChart()
	p.Title.Text = "Warm reads: measured / bound, by mode\n" + subtitle
	p.Y.Label.Text = "measured / bound (met at 1 and above)"
	p.Add(hline{y: 1, text: "bound"}) // first, so that the bars' labels are written over it
	w := vg.Points(22)
	barModes := []string{"push", "hybrid"}
	for k, m := range barModes {
		vals := make(plotter.Values, len(cats))
		labels := plotter.XYLabels{}
		for i, c := range cats {
			for _, t := range rows {
				if t.Mode == m && c.match(t) {
					vals[i] = t.Share
				}
			}
			labels.XYs = append(labels.XYs, plotter.XY{X: float64(i), Y: vals[i]})
			labels.Labels = append(labels.Labels, shareLabel(vals[i]))
		}
		bars, err := plotter.NewBarChart(vals, w)
		if err != nil {
			continue
		}
		bars.Color = modeColors[m]
		bars.LineStyle.Width = 0
		bars.Offset = vg.Length(2*k-1) * w / 2
		p.Add(bars)
		p.legend.Add(m, bars)
		if l, err := plotter.NewLabels(labels); err == nil {
			for i := range l.TextStyle {
				l.TextStyle[i].XAlign = draw.XCenter
				l.TextStyle[i].YAlign = draw.YBottom
			}
			l.Offset = vg.Point{X: bars.Offset, Y: vg.Points(2)}
			p.Add(l)
		}
	}
	names := make([]string, len(cats))
	for i, c := range cats {
		names[i] = c.name
	}
	p.NominalX(names...)
	p.Y.Max = max(p.Y.Max, 1)
	p.headroom()
	return p
}
