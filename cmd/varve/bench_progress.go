package main

import (
	"fmt"
	"io"
	"os"
	"sync/atomic"
	"time"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"
	"golang.org/x/sys/unix"

	"github.com/varve/varve/benchmarks/kafkabench"
)

// clientBenchProgress shows the phases of varve bench as mpb bars on
// stderr when it is a terminal, and nothing otherwise or with
// --no-progress. It implements kafkabench.Progress.
type clientBenchProgress struct {
	bars *mpb.Progress // nil: show nothing
}

func newClientBenchProgress(stderr io.Writer, off bool) *clientBenchProgress {
	if off || !stderrIsTerminal(stderr) {
		return &clientBenchProgress{}
	}
	return &clientBenchProgress{bars: mpb.New(mpb.WithOutput(stderr), mpb.WithWidth(40))}
}

// stderrIsTerminal reports whether w is a terminal.
func stderrIsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

// Start implements kafkabench.Progress.
func (p *clientBenchProgress) Start(name string, total int64) kafkabench.Task {
	if p.bars == nil {
		return silentTask{}
	}
	t := &recordBar{start: time.Now()}
	t.bar = p.bars.AddBar(total,
		mpb.PrependDecorators(decor.Name(fmt.Sprintf("%-8s", name)), decor.CountersNoUnit("%d / %d", decor.WC{W: 22})),
		mpb.AppendDecorators(decor.Percentage(decor.WC{W: 5}), decor.Any(t.rate, decor.WC{W: 18}),
			decor.Elapsed(decor.ET_STYLE_GO, decor.WC{W: 6})))
	return t
}

// wait ends the bars once every phase is done.
func (p *clientBenchProgress) wait() {
	if p.bars != nil {
		p.bars.Wait()
		p.bars = nil
	}
}

// recordBar is one phase's bar. The rate is records over the time since
// Start, frozen at Done (mpb's AverageSpeed shows nothing for a phase
// that ends before the bar is first drawn).
type recordBar struct {
	bar   *mpb.Bar
	start time.Time
	end   atomic.Int64 // UnixNano at Done; 0 while running
}

func (t *recordBar) SetCurrent(n int64) { t.bar.SetCurrent(n) }

func (t *recordBar) Done() {
	t.end.Store(time.Now().UnixNano())
	t.bar.SetTotal(-1, true)
}

// rate is the bar's records/s decorator; mpb calls it while rendering.
func (t *recordBar) rate(s decor.Statistics) string {
	end := time.Now()
	if e := t.end.Load(); e != 0 {
		end = time.Unix(0, e)
	}
	secs := end.Sub(t.start).Seconds()
	if secs <= 0 {
		return ""
	}
	return fmt.Sprintf("%.0f rec/s", float64(s.Current)/secs)
}

type silentTask struct{}

func (silentTask) SetCurrent(int64) {}
func (silentTask) Done()            {}
