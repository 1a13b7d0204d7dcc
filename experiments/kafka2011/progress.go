package main

import (
	"io"
	"time"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"

	"github.com/varve/varve/benchmarks/kafkabench"
)

// barProgress shows one bar per test: its name, messages done of the
// total, the mean rate and the elapsed time. It implements
// kafkabench.Progress, so the Kafka-protocol runs and this package's own
// clients report the same way. Each bar has its own mpb container, waited
// for in Done, so plain lines printed between tests do not tear a bar.
type barProgress struct {
	w       io.Writer
	enabled bool
}

func (b barProgress) Start(name string, total int64) kafkabench.Task {
	if !b.enabled {
		return nopTask{}
	}
	p := mpb.New(mpb.WithOutput(b.w), mpb.WithWidth(30), mpb.WithRefreshRate(250*time.Millisecond))
	bar := p.AddBar(total,
		mpb.PrependDecorators(decor.Name(name, decor.WCSyncSpaceR)),
		mpb.AppendDecorators(
			decor.CountersNoUnit("%d / %d", decor.WCSyncSpace),
			decor.AverageSpeed(0, " %.0f msg/s", decor.WCSyncSpace),
			decor.Elapsed(decor.ET_STYLE_MMSS, decor.WCSyncSpace)))
	return &barTask{p: p, bar: bar}
}

type barTask struct {
	p   *mpb.Progress
	bar *mpb.Bar
}

func (t *barTask) SetCurrent(n int64) { t.bar.SetCurrent(n) }

func (t *barTask) Done() {
	t.bar.SetTotal(-1, true)
	t.p.Wait()
}

type nopTask struct{}

func (nopTask) SetCurrent(int64) {}
func (nopTask) Done()            {}
