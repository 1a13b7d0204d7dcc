// Package plots holds what the experiments' gonum plots share: saving a
// figure as PNG and SVG side by side, figures of several plots stacked
// one above the other on one time axis, legend swatches, and vertical
// markers at the times of events (faults) on a time series.
//
// It has no state and starts no goroutine; a plot.Plot is built and
// saved by one goroutine.
package plots

import (
	"fmt"
	"image/color"
	"os"
	"path/filepath"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Save writes p to dir/file.png and dir/file.svg, w by h.
func Save(p *plot.Plot, w, h vg.Length, dir, file string) error {
	for _, ext := range []string{".png", ".svg"} {
		if err := p.Save(w, h, filepath.Join(dir, file+ext)); err != nil {
			return fmt.Errorf("save plot %s: %w", file, err)
		}
	}
	return nil
}

// SaveStacked writes ps one above the other, their plotting areas
// aligned, to dir/file.png and dir/file.svg, w by h in all.
func SaveStacked(ps []*plot.Plot, w, h vg.Length, dir, file string) error {
	canvases := map[string]vg.CanvasWriterTo{
		".png": vgimg.PngCanvas{Canvas: vgimg.New(w, h)},
		".svg": vgsvg.New(w, h),
	}
	for ext, c := range canvases {
		rows := make([][]*plot.Plot, len(ps))
		for i, p := range ps {
			rows[i] = []*plot.Plot{p}
		}
		tiles := draw.Tiles{Rows: len(ps), Cols: 1, PadY: vg.Millimeter * 3, PadTop: vg.Millimeter * 2,
			PadBottom: vg.Millimeter * 2, PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 2}
		aligned := plot.Align(rows, tiles, draw.New(c))
		for i, p := range ps {
			p.Draw(aligned[i][0])
		}
		if err := writeTo(c, filepath.Join(dir, file+ext)); err != nil {
			return fmt.Errorf("save plot %s: %w", file, err)
		}
	}
	return nil
}

func writeTo(c vg.CanvasWriterTo, path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := c.WriteTo(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// Swatch is a legend entry: a square of one colour.
type Swatch struct{ C color.Color }

// Thumbnail implements plot.Thumbnailer.
func (w Swatch) Thumbnail(c *draw.Canvas) {
	r := c.Rectangle
	c.FillPolygon(w.C, []vg.Point{r.Min, {X: r.Max.X, Y: r.Min.Y}, r.Max, {X: r.Min.X, Y: r.Max.Y}})
}

// Markers adds to p a vertical line at each of xs, from 0 to top, in
// colour c (dashed when dashed), and one legend entry named name for
// all of them (none when xs is empty).
func Markers(p *plot.Plot, xs []float64, top float64, c color.Color, dashed bool, name string) error {
	for i, x := range xs {
		l, err := plotter.NewLine(plotter.XYs{{X: x, Y: 0}, {X: x, Y: top}})
		if err != nil {
			return fmt.Errorf("marker at %g: %w", x, err)
		}
		l.Color, l.Width = c, vg.Points(0.8)
		if dashed {
			l.Dashes = []vg.Length{vg.Points(3), vg.Points(2)}
		}
		p.Add(l)
		if i == 0 && name != "" {
			p.Legend.Add(name, l)
		}
	}
	return nil
}
