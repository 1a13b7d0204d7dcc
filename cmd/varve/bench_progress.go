package main

import (
	"fmt"
	"io"
	"os"

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
	bar := p.bars.AddBar(total,
		mpb.PrependDecorators(decor.Name(fmt.Sprintf("%-8s", name)), decor.CountersNoUnit("%d / %d", decor.WC{W: 22})),
		mpb.AppendDecorators(decor.Percentage(decor.WC{W: 5}), decor.AverageSpeed(nil, " %.0f rec/s", decor.WC{W: 16}),
			decor.Elapsed(decor.ET_STYLE_GO, decor.WC{W: 6})))
	return recordBar{bar}
}

// wait ends the bars once every phase is done.
func (p *clientBenchProgress) wait() {
	if p.bars != nil {
		p.bars.Wait()
		p.bars = nil
	}
}

type recordBar struct{ bar *mpb.Bar }

func (t recordBar) SetCurrent(n int64) { t.bar.SetCurrent(n) }
func (t recordBar) Done()              { t.bar.SetTotal(-1, true) }

type silentTask struct{}

func (silentTask) SetCurrent(int64) {}
func (silentTask) Done()            {}
