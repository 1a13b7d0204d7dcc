package main

import (
	"fmt"
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
	t := &barTask{p: p, start: time.Now()}
	t.bar = p.AddBar(total,
		mpb.PrependDecorators(decor.Name(name, decor.WCSyncSpaceR)),
		mpb.AppendDecorators(
			decor.CountersNoUnit("%d / %d", decor.WCSyncSpace),
			decor.Any(t.rate, decor.WCSyncSpace),
			decor.Elapsed(decor.ET_STYLE_MMSS, decor.WCSyncSpace)))
	return t
}

type barTask struct {
	p     *mpb.Progress
	bar   *mpb.Bar
	start time.Time
}

func (t *barTask) SetCurrent(n int64) { t.bar.SetCurrent(n) }

func (t *barTask) Done() {
	t.bar.SetTotal(-1, true)
	t.p.Wait()
}

// rate is messages over the time since Start (mpb's AverageSpeed shows
// nothing for a phase that ends before the bar is first drawn).
func (t *barTask) rate(s decor.Statistics) string {
	sec := time.Since(t.start).Seconds()
	if sec <= 0 {
		return ""
	}
	return fmt.Sprintf("%.0f msg/s", float64(s.Current)/sec)
}

type nopTask struct{}

func (nopTask) SetCurrent(int64) {}
func (nopTask) Done()            {}
