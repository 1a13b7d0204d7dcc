package main

import (
	"os"
	"sync/atomic"
	"time"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"
)

// progress is one bar over the points, naming the point being measured.
type progress struct {
	p       *mpb.Progress
	bar     *mpb.Bar
	current atomic.Pointer[string]
}

func newProgress(total int, enabled bool) *progress {
	pr := &progress{}
	name := "starting"
	pr.current.Store(&name)
	if !enabled {
		return pr
	}
	pr.p = mpb.New(mpb.WithOutput(os.Stderr), mpb.WithWidth(40), mpb.WithRefreshRate(250*time.Millisecond))
	pr.bar = pr.p.AddBar(int64(total),
		mpb.PrependDecorators(
			decor.Any(func(decor.Statistics) string { return *pr.current.Load() }, decor.WC{W: 28, C: decor.DindentRight}),
			decor.CountersNoUnit("%d / %d", decor.WCSyncSpace)),
		mpb.AppendDecorators(
			decor.Elapsed(decor.ET_STYLE_MMSS),
			decor.Name(" eta "),
			decor.AverageETA(decor.ET_STYLE_MMSS)))
	return pr
}

func (pr *progress) stage(s string) { pr.current.Store(&s) }

func (pr *progress) done() {
	if pr.bar != nil {
		pr.bar.Increment()
	}
}

func (pr *progress) finish() {
	if pr.p == nil {
		return
	}
	pr.bar.SetTotal(-1, true)
	pr.p.Wait()
	pr.p = nil
}
