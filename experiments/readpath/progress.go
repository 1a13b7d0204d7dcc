package main

import (
	"fmt"
	"io"
	"sync/atomic"
	"time"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"
)

// progress shows one bar for the whole experiment, in bytes delivered, with
// the current run's name. Bytes are sampled from a counter every 100 ms, so
// the senders pay one atomic add per response, the same for every path.
type progress struct {
	p       *mpb.Progress
	bar     *mpb.Bar
	current atomic.Pointer[string]
}

func newProgress(w io.Writer, total int64, enabled bool) *progress {
	pr := &progress{}
	name := "starting"
	pr.current.Store(&name)
	if !enabled {
		return pr
	}
	pr.p = mpb.New(mpb.WithOutput(w), mpb.WithWidth(40), mpb.WithRefreshRate(200*time.Millisecond))
	pr.bar = pr.p.AddBar(total,
		mpb.PrependDecorators(
			decor.Any(func(decor.Statistics) string { return *pr.current.Load() }, decor.WCSyncSpaceR),
			decor.Percentage(decor.WCSyncSpace)),
		mpb.AppendDecorators(
			decor.CountersKibiByte("% .1f / % .1f"),
			decor.Name("  "),
			decor.Elapsed(decor.ET_STYLE_MMSS)))
	return pr
}

// add advances the bar outside measured runs.
func (pr *progress) add(n int64) {
	if pr.bar != nil {
		pr.bar.IncrInt64(n)
	}
}

// stage names what is happening outside the measured runs.
func (pr *progress) stage(s string) { pr.current.Store(&s) }

// track follows one run's byte counter until the returned stop is called.
func (pr *progress) track(sent *atomic.Int64, spec runSpec) (stop func()) {
	name := fmt.Sprintf("%s %s x%d #%d", spec.workload, spec.path, spec.consumers, spec.rep+1)
	pr.current.Store(&name)
	if pr.bar == nil {
		return func() {}
	}
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		var last int64
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-t.C:
			case <-done:
			}
			now := sent.Load()
			pr.bar.IncrInt64(now - last)
			last = now
			select {
			case <-done:
				return
			default:
			}
		}
	}()
	return func() { close(done); <-finished }
}

// finish completes the bar and waits for the last render.
func (pr *progress) finish() {
	if pr.p == nil {
		return
	}
	pr.bar.SetTotal(-1, true)
	pr.p.Wait()
}
