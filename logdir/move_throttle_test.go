package logdir_test

import (
	"math"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/varve/varve/logdir"
	"github.com/varve/varve/segment"
)

// fakeClock is a logdir.Clock whose time moves only when a test says.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	timers []fakeTimer
}

type fakeTimer struct {
	at time.Time
	ch chan time.Time
}

func newFakeClock() *fakeClock { return &fakeClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := make(chan time.Time, 1)
	c.timers = append(c.timers, fakeTimer{at: c.now.Add(d), ch: ch})
	return ch
}

// next is the earliest timer's time, false with none pending.
func (c *fakeClock) next() (time.Time, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.timers) == 0 {
		return time.Time{}, false
	}
	sort.Slice(c.timers, func(i, j int) bool { return c.timers[i].at.Before(c.timers[j].at) })
	return c.timers[0].at, true
}

// advanceTo moves the time to at and fires the timers due.
func (c *fakeClock) advanceTo(at time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = at
	kept := c.timers[:0]
	for _, tm := range c.timers {
		if tm.at.After(at) {
			kept = append(kept, tm)
			continue
		}
		tm.ch <- at
	}
	c.timers = kept
}

func (c *fakeClock) pending() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.timers)
}

// noFsync leaves the flushes to the segment size: the throttle tests
// append many batches.
func noFsync(c *logdir.Config) {
	c.LogConfig = func(string) segment.Config {
		c := segment.DefaultConfig()
		c.SegmentBytes = 64 << 10
		return c
	}
}

// Kafka: replica.alter.log.dirs.io.max.bytes.per.second bounds the copy
// into the future replica (ReplicationQuotaManager ALTER_LOG_DIRS, a
// SimpleRate over 11 samples of 1 s). On a fake clock that moves only
// while the copy waits: no 10 s of the clock see more than 11 s worth
// of the rate copied (plus a read or two), and the whole copy takes
// about size / rate, less Kafka's initial allowance of one window.
func TestMoveCopyIsThrottled(t *testing.T) {
	const rate = 64 << 10
	clk := newFakeClock()
	d1, d2 := t.TempDir(), t.TempDir()
	var h holder
	m := openManager(t, []string{d1, d2}, smallSegments, noFsync, h.watch, func(c *logdir.Config) {
		c.MoveRate, c.Clock = rate, clk
	})
	defer m.Close()
	pl, err := m.Create(tp("th", 0), logdir.TopicID{1})
	if err != nil {
		t.Fatal(err)
	}
	appendN(t, pl.Log, 2000) // about 1.3 MB
	size := pl.Log.Size()
	start := clk.Now()
	if err := m.AlterLogDir(tp("th", 0), abs(t, d2)); err != nil {
		t.Fatal(err)
	}
	type snap struct {
		at    float64
		bytes int64
	}
	var snaps []snap
	for h.moved.Load() == 0 {
		var at time.Time
		var ok bool
		eventually(t, "the copy to wait or end", func() bool {
			at, ok = clk.next()
			return ok || h.moved.Load() > 0
		})
		if !ok {
			break
		}
		if f := m.Futures(); len(f) == 1 {
			snaps = append(snaps, snap{clk.Now().Sub(start).Seconds(), f[0].Size})
		}
		clk.advanceTo(at)
	}
	waitMoved(t, m)
	for i := range snaps {
		for j := i + 1; j < len(snaps) && snaps[j].at-snaps[i].at <= 10; j++ {
			if got := snaps[j].bytes - snaps[i].bytes; got > 11*rate+2*rate {
				t.Fatalf("from %.1f s to %.1f s the copy read %d bytes, more than 11 s at %d B/s and a read",
					snaps[i].at, snaps[j].at, got, rate)
			}
		}
	}
	took := clk.Now().Sub(start).Seconds()
	want := float64(size)/rate - 1
	if took < want-3 || took > want+3 {
		t.Fatalf("%d bytes at %d B/s took %.1f s of the clock (%d waits), want about %.1f", size, rate, took, len(snaps), want)
	}
	t.Logf("%d bytes at %d B/s: %.1f s of the clock, %d waits", size, rate, took, len(snaps))
	if moved, ok := m.Get(tp("th", 0)); !ok || moved.Log.Size() != size {
		t.Fatalf("after the move: %v %v", moved, ok)
	}
}

// Kafka: the rate is a dynamic broker setting (ConfigHandler updates
// the quota of the running alter-log-dirs threads): a copy waiting on
// a low rate goes on at once when the rate is raised, without the
// clock moving.
func TestMoveRateChangeReachesACopyUnderWay(t *testing.T) {
	clk := newFakeClock()
	d1, d2 := t.TempDir(), t.TempDir()
	var h holder
	m := openManager(t, []string{d1, d2}, smallSegments, noFsync, h.watch, func(c *logdir.Config) {
		c.MoveRate, c.Clock = 1024, clk
	})
	defer m.Close()
	pl, err := m.Create(tp("rc", 0), logdir.TopicID{1})
	if err != nil {
		t.Fatal(err)
	}
	appendN(t, pl.Log, 500)
	if err := m.AlterLogDir(tp("rc", 0), abs(t, d2)); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the copy to wait", func() bool { return clk.pending() > 0 })
	if f := m.Futures(); len(f) != 1 || f[0].Size >= pl.Log.Size() {
		t.Fatalf("a copy at 1 KiB/s: %+v of %d bytes", f, pl.Log.Size())
	}
	m.SetMoveRate(math.MaxInt64)
	eventually(t, "the move to end", func() bool { return h.moved.Load() > 0 })
	waitMoved(t, m)
}
