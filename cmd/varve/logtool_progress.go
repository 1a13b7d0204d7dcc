package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"
	"golang.org/x/sys/unix"

	"github.com/varve/varve/benchmarks/storage"
)

// benchProgress shows the workloads of varve log bench on stderr: mpb bars on
// a terminal, one line per workload otherwise, nothing with
// --no-progress. It implements storage.Progress and is used by the
// goroutine that runs the suite.
type benchProgress struct {
	bars  *mpb.Progress // nil unless stderr is a terminal
	lines io.Writer     // nil unless stderr is not a terminal
}

func newBenchProgress(stderr io.Writer, off bool) *benchProgress {
	switch {
	case off:
		return &benchProgress{}
	case isTerminalWriter(stderr):
		return &benchProgress{bars: mpb.New(mpb.WithOutput(stderr), mpb.WithWidth(40), mpb.PopCompletedMode())}
	}
	return &benchProgress{lines: stderr}
}

// isTerminalWriter reports whether w is a terminal.
func isTerminalWriter(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

// Start implements storage.Progress; total 0 shows a spinner.
func (p *benchProgress) Start(name string, total int64) storage.Task {
	switch {
	case p.bars != nil:
		return p.bar(name, total)
	case p.lines != nil:
		fmt.Fprintf(p.lines, "%s ...\n", name)
		return &benchLineTask{w: p.lines, name: name, start: time.Now()}
	}
	return benchLineTask{}
}

func (p *benchProgress) bar(name string, total int64) storage.Task {
	name = fmt.Sprintf("%-34s", name)
	var bar *mpb.Bar
	if total <= 0 {
		bar = p.bars.New(0, mpb.SpinnerStyle(),
			mpb.PrependDecorators(decor.Name(name)),
			mpb.AppendDecorators(decor.Elapsed(decor.ET_STYLE_GO)))
	} else {
		bar = p.bars.AddBar(total,
			mpb.PrependDecorators(decor.Name(name)),
			mpb.AppendDecorators(decor.Percentage(decor.WC{W: 5}), decor.Elapsed(decor.ET_STYLE_GO, decor.WC{W: 6})))
	}
	return benchBarTask{bar}
}

// wait ends the bars (once every task is done).
func (p *benchProgress) wait() {
	if p.bars != nil {
		p.bars.Wait()
		p.bars = nil
	}
}

type benchBarTask struct{ bar *mpb.Bar }

func (t benchBarTask) SetCurrent(n int64) { t.bar.SetCurrent(n) }
func (t benchBarTask) Done()              { t.bar.SetTotal(-1, true) }

// benchLineTask prints one line when its workload ends.
type benchLineTask struct {
	w     io.Writer
	name  string
	start time.Time
}

func (benchLineTask) SetCurrent(int64) {}

func (t benchLineTask) Done() {
	if t.w != nil {
		fmt.Fprintf(t.w, "%s done in %s\n", t.name, time.Since(t.start).Round(time.Millisecond))
	}
}
