package main

// SOAK_OUT: the rows as CSV and a plot of them over time (gonum.org/v1/plot,
// as bench/plots.go).

import (
	"encoding/csv"
	"fmt"
	"image/color"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// writeRows writes rows to dir (made if missing) as soak.csv and soak.png,
// titled title, and returns the two paths.
func writeRows(dir, title string, rows []row) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	csvPath, pngPath := filepath.Join(dir, "soak.csv"), filepath.Join(dir, "soak.png")
	if err := writeCSV(csvPath, rows); err != nil {
		return nil, err
	}
	if err := writePlot(pngPath, title, rows); err != nil {
		return []string{csvPath}, err
	}
	return []string{csvPath, pngPath}, nil
}

// instanceNames are the instances the rows measured, in name order.
func instanceNames(rows []row) []string {
	if len(rows) == 0 {
		return nil
	}
	return slices.Sorted(maps.Keys(rows[0].Goroutines))
}

func num(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// writeCSV writes a header and a record per row: one p99 column per
// operation (blank when none ran in the interval), then the figures of
// each instance, then Redis's.
func writeCSV(path string, rows []row) error {
	names := instanceNames(rows)
	header := []string{"interval", "elapsed_s", "requests", "errors"}
	for _, o := range operations {
		header = append(header, "p99_ms_"+o.name)
	}
	for _, in := range names {
		header = append(header, "goroutines_"+in)
	}
	for _, in := range names {
		header = append(header, "rss_mb_"+in)
	}
	header = append(header, "redis_mb", "stream_mb", "stream_entries", "subscription_messages")
	records := [][]string{header}
	for _, r := range rows {
		rec := []string{strconv.Itoa(r.Interval), num(r.Elapsed.Seconds()), strconv.Itoa(r.Requests), strconv.Itoa(r.Errors)}
		for _, o := range operations {
			v, ok := r.P99ms[o.name]
			if !ok {
				rec = append(rec, "")
				continue
			}
			rec = append(rec, num(v))
		}
		for _, in := range names {
			rec = append(rec, num(r.Goroutines[in]))
		}
		for _, in := range names {
			rec = append(rec, num(r.RSSMB[in]))
		}
		rec = append(rec, num(r.RedisMB), num(r.StreamMB), strconv.FormatInt(r.StreamEntries, 10), strconv.FormatInt(r.SubMessages, 10))
		records = append(records, rec)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	if err := w.WriteAll(records); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// line is one series of a panel over the run's minutes.
type line struct {
	name string
	pts  plotter.XYs
}

// panel is one chart of the plot: its y label and lines.
type panel struct {
	ylabel string
	lines  []line
}

// series gathers get(row) over the rows, skipping rows where it has no value.
func series(name string, rows []row, get func(row) (float64, bool)) line {
	l := line{name: name}
	for _, r := range rows {
		if v, ok := get(r); ok {
			l.pts = append(l.pts, plotter.XY{X: r.Elapsed.Minutes(), Y: v})
		}
	}
	return l
}

// panels are the plot's charts, top to bottom.
func panels(rows []row) []panel {
	names := instanceNames(rows)
	var p99, rss, gor panel
	p99.ylabel, rss.ylabel, gor.ylabel = "p99 ms", "RSS MB", "goroutines"
	for _, o := range operations {
		p99.lines = append(p99.lines, series(o.name, rows, func(r row) (float64, bool) { v, ok := r.P99ms[o.name]; return v, ok }))
	}
	for _, in := range names {
		rss.lines = append(rss.lines, series("instance "+in, rows, func(r row) (float64, bool) { return r.RSSMB[in], true }))
		gor.lines = append(gor.lines, series("instance "+in, rows, func(r row) (float64, bool) { return r.Goroutines[in], true }))
	}
	redis := panel{ylabel: "Redis MB", lines: []line{
		series("used_memory", rows, func(r row) (float64, bool) { return r.RedisMB, true }),
		series("fan-out stream", rows, func(r row) (float64, bool) { return r.StreamMB, true }),
	}}
	stream := panel{ylabel: "stream entries", lines: []line{
		series("stream length", rows, func(r row) (float64, bool) { return float64(r.StreamEntries), true }),
	}}
	return []panel{p99, rss, gor, redis, stream}
}

// writePlot draws the panels one above the other on a shared time axis,
// each with its legend in a strip to its right (never over the data).
func writePlot(path, title string, rows []row) error {
	ps := panels(rows)
	const width, panelHeight, legendWidth = 18 * vg.Centimeter, 6 * vg.Centimeter, 4.5 * vg.Centimeter
	titleHeight := vg.Centimeter
	img := vgimg.New(width, titleHeight+vg.Length(len(ps))*panelHeight)
	dc := draw.New(img)
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())

	var plots [][]*plot.Plot
	var legends []plot.Legend
	for i, pn := range ps {
		p := plot.New()
		p.Y.Label.Text = pn.ylabel
		p.Y.Min = 0
		p.X.Min = 0
		if len(rows) > 0 {
			p.X.Max = rows[len(rows)-1].Elapsed.Minutes() // the same on every panel
		}
		if i == len(ps)-1 {
			p.X.Label.Text = "minutes from the start of the workload"
		}
		p.Add(plotter.NewGrid())
		lg := plot.NewLegend()
		lg.Top, lg.Left = true, true
		for k, l := range pn.lines {
			if len(l.pts) == 0 {
				continue
			}
			ln, sc, err := plotter.NewLinePoints(l.pts)
			if err != nil {
				return fmt.Errorf("%s %s: %w", pn.ylabel, l.name, err)
			}
			ln.Color, sc.Color = plotutil.Color(k), plotutil.Color(k)
			ln.Dashes = plotutil.Dashes(k / len(plotutil.DefaultColors))
			sc.Shape = plotutil.Shape(k)
			p.Add(ln, sc)
			lg.Add(l.name, ln, sc)
		}
		if p.Y.Max <= 0 {
			p.Y.Max = 1
		}
		p.Y.Max *= 1.1
		plots = append(plots, []*plot.Plot{p})
		legends = append(legends, lg)
	}

	top := dc.Max.Y - titleHeight
	sty := plot.New().Title.TextStyle
	sty.XAlign, sty.YAlign = draw.XCenter, draw.YCenter
	dc.FillText(sty, vg.Point{X: dc.Min.X + width/2, Y: top + titleHeight/2}, title)

	area := draw.Canvas{Canvas: dc.Canvas, Rectangle: vg.Rectangle{Min: dc.Min, Max: vg.Point{X: dc.Max.X - legendWidth, Y: top}}}
	tiles := draw.Tiles{Rows: len(ps), Cols: 1, PadY: vg.Points(6), PadTop: vg.Points(4), PadRight: vg.Points(6)}
	canvases := plot.Align(plots, tiles, area)
	for i, pr := range plots {
		pr[0].Draw(canvases[i][0])
		data := pr[0].DataCanvas(canvases[i][0])
		legends[i].Draw(draw.Canvas{Canvas: dc.Canvas, Rectangle: vg.Rectangle{
			Min: vg.Point{X: area.Max.X + vg.Points(4), Y: data.Min.Y},
			Max: vg.Point{X: dc.Max.X, Y: data.Max.Y},
		}})
	}

	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
