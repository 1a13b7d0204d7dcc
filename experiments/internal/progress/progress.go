// Package progress is the progress bar experiments show while they run:
// one bar for the whole experiment, counting runs, with the current run's
// name and the time elapsed.
package progress

import (
	"io"
	"sync/atomic"
	"time"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"
)

// Bar shows one bar for the whole experiment, counting runs, with the
// current run's name and the time elapsed.
type Bar struct {
	p       *mpb.Progress
	bar     *mpb.Bar
	current atomic.Pointer[string]
}

func New(w io.Writer, runs int, enabled bool) *Bar {
	pr := &Bar{}
	pr.Stage("starting")
	if !enabled {
		return pr
	}
	pr.p = mpb.New(mpb.WithOutput(w), mpb.WithWidth(40), mpb.WithRefreshRate(200*time.Millisecond))
	pr.bar = pr.p.AddBar(int64(runs),
		mpb.PrependDecorators(
			decor.Any(func(decor.Statistics) string { return *pr.current.Load() }, decor.WCSyncSpaceR),
			decor.CountersNoUnit("%d / %d runs", decor.WCSyncSpace)),
		mpb.AppendDecorators(
			decor.Percentage(decor.WCSyncSpace),
			decor.Name("  "),
			decor.Elapsed(decor.ET_STYLE_MMSS)))
	return pr
}

// Stage names what is happening now.
func (pr *Bar) Stage(s string) { pr.current.Store(&s) }

// Done counts one finished run.
func (pr *Bar) Done() {
	if pr.bar != nil {
		pr.bar.Increment()
	}
}

// Finish completes the bar and waits for the last render.
func (pr *Bar) Finish() {
	if pr.p == nil {
		return
	}
	pr.bar.SetTotal(-1, true)
	pr.p.Wait()
}
