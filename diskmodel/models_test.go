package diskmodel

import (
	"math"
	"testing"
	"time"
)

// handCal has round figures so every prediction can be worked out by hand.
func handCal() Calibration {
	return Calibration{
		SeqWriteBps:         100e6,
		PageCacheWriteBps:   1e9,
		SeqReadBps:          200e6,
		ColdBufferedReadBps: 250e6,
		PageCacheReadBps:    4e9,
		Fsync4K:             time.Millisecond,
		Fsync1M:             5 * time.Millisecond,
		RandRead4K:          100 * time.Microsecond,
		FileSize:            256 << 20,
	}
}

// near reports whether two durations agree within 1 µs (float rounding).
func near(a, b time.Duration) bool {
	d := a - b
	return d < time.Microsecond && d > -time.Microsecond
}

func TestBandwidthModels(t *testing.T) {
	c := handCal()
	for _, tc := range []struct {
		name string
		got  time.Duration
		want time.Duration
	}{
		{"seq write 100 MB", c.PredictSequentialWrite(100e6), time.Second},
		{"page-cache write 500 MB", c.PredictPageCacheWrite(500e6), 500 * time.Millisecond},
		{"seq read 50 MB", c.PredictSequentialRead(50e6), 250 * time.Millisecond},
		{"cold buffered read 250 MB", c.PredictColdBufferedRead(250e6), time.Second},
		{"page-cache read 1 GB", c.PredictPageCacheRead(1e9), 250 * time.Millisecond},
		{"reads 200 MB with 10 seeks", c.PredictReadsWithSeeks(200e6, 10), time.Second + time.Millisecond},
		{"seeks only", c.PredictReadsWithSeeks(0, 3), 300 * time.Microsecond},
		{"negative seeks count as none", c.PredictReadsWithSeeks(200e6, -4), time.Second},
		{"zero bytes", c.PredictSequentialWrite(0), 0},
		{"uncalibrated predicts zero", Calibration{}.PredictSequentialRead(1 << 30), 0},
	} {
		if !near(tc.got, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.name, tc.got, tc.want)
		}
	}
}

func TestPredictionSaturatesInsteadOfOverflowing(t *testing.T) {
	c := Calibration{SeqWriteBps: 1}
	if got := c.PredictSequentialWrite(math.MaxInt64); got != time.Duration(math.MaxInt64) {
		t.Fatalf("got %v, want the largest Duration", got)
	}
}

func TestFsyncLatencyInterpolates(t *testing.T) {
	c := handCal()
	atFile := time.Duration(float64(c.FileSize) / c.SeqWriteBps * 1e9) // 2.68435456 s
	for _, tc := range []struct {
		bytes int64
		want  time.Duration
	}{
		{0, time.Millisecond},                      // below 4 KiB: a whole block is written anyway
		{512, time.Millisecond},                    //
		{4096, time.Millisecond},                   // first point
		{(4096 + 1<<20) / 2, 3 * time.Millisecond}, // halfway to the second
		{1 << 20, 5 * time.Millisecond},            // second point
		{c.FileSize, atFile},                       // third point: the sequential-write pass
		{(1<<20 + c.FileSize) / 2, (5*time.Millisecond + atFile) / 2},
		{c.FileSize + 100e6, atFile + time.Second}, // beyond: 1/SeqWriteBps
	} {
		if got := c.FsyncLatency(tc.bytes); !near(got, tc.want) {
			t.Errorf("FsyncLatency(%d) = %v, want %v", tc.bytes, got, tc.want)
		}
	}
}

func TestFsyncLatencyTwoPointsWithoutSeqWrite(t *testing.T) {
	c := Calibration{Fsync4K: time.Millisecond, Fsync1M: 5 * time.Millisecond}
	// The line through the two fsync points, extended past 1 MiB.
	x := int64(2 << 20)
	want := time.Millisecond + time.Duration(4e6*float64(x-4096)/float64(1<<20-4096))
	if got := c.FsyncLatency(x); !near(got, want) {
		t.Fatalf("FsyncLatency(2 MiB) = %v, want %v", got, want)
	}
	if got := (Calibration{}).FsyncLatency(1 << 20); got != 0 {
		t.Fatalf("uncalibrated FsyncLatency = %v, want 0", got)
	}
	only4K := Calibration{Fsync4K: time.Millisecond}
	if got := only4K.FsyncLatency(1 << 30); got != time.Millisecond {
		t.Fatalf("single point: got %v, want flat 1ms", got)
	}
}

// Noise can make the 1 MiB median come out below the 4 KiB one; the model
// must still never predict less time for more bytes.
func TestFsyncLatencyNeverDecreases(t *testing.T) {
	c := handCal()
	c.Fsync1M = c.Fsync4K / 2
	prev := time.Duration(0)
	for b := int64(1024); b <= 4*c.FileSize; b *= 2 {
		got := c.FsyncLatency(b)
		if got < prev {
			t.Fatalf("FsyncLatency(%d) = %v < FsyncLatency(%d) = %v", b, got, b/2, prev)
		}
		prev = got
	}
	if got := c.FsyncLatency(1 << 20); got != c.Fsync4K {
		t.Fatalf("inverted medians: FsyncLatency(1 MiB) = %v, want it raised to Fsync4K %v", got, c.Fsync4K)
	}
}

// Kafka: flush.messages=N flushes after every N messages appended (here a
// batch is the unit, as a producer batch is one append); the default
// (Long.MAX) never fsyncs on the produce path.
func TestPredictWriteWithFsync(t *testing.T) {
	c := handCal()
	const MiB = 1 << 20
	for _, tc := range []struct {
		name         string
		bytes, batch int64
		every        int
		want         time.Duration
	}{
		{"1 MiB batches, fsync each", 10 * MiB, MiB, 1, 10 * 5 * time.Millisecond},
		{"4 KiB batches, fsync each", 10 * MiB, 4096, 1, 2560 * time.Millisecond},
		// FsyncLatency(2 MiB) = 5ms + (2.68435456s-5ms)*(1 MiB)/(255 MiB) = 15.507273ms
		{"1 MiB batches, fsync every 2", 10 * MiB, MiB, 2, 5 * 15507273 * time.Nanosecond},
		{"partial last group", 3 * MiB, MiB, 2, (15507273 + 5000000) * time.Nanosecond},
		{"never: one fdatasync at the end", 10 * MiB, MiB, 0, c.PredictSequentialWrite(10 * MiB)},
		// 5ms + (2.68435456s-5ms)*(9 MiB)/(255 MiB)
		{"no batch size: one batch", 10 * MiB, 0, 1, 99565455 * time.Nanosecond},
		{"zero bytes", 0, MiB, 1, 0},
	} {
		if got := c.PredictWriteWithFsync(tc.bytes, tc.batch, tc.every); !near(got, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
	}
}

// One group of FileSize bytes is exactly the sequential-write measurement,
// so the two models must agree there (no double-counted transfer).
func TestWriteWithFsyncMatchesSequentialWriteForOneGroup(t *testing.T) {
	c := handCal()
	got := c.PredictWriteWithFsync(c.FileSize, 1<<20, math.MaxInt)
	if want := c.PredictSequentialWrite(c.FileSize); !near(got, want) {
		t.Fatalf("one fsync over FileSize: got %v, want PredictSequentialWrite %v", got, want)
	}
}

func TestPredictWriteWithFsyncDoesNotOverflow(t *testing.T) {
	c := handCal()
	got := c.PredictWriteWithFsync(1<<40, 1<<40, math.MaxInt)
	if want := c.FsyncLatency(1 << 40); got != want || got <= 0 {
		t.Fatalf("got %v, want %v", got, want)
	}
}

func TestRatio(t *testing.T) {
	if got := Ratio(2*time.Second, time.Second); got != 0.5 {
		t.Fatalf("twice as slow as the model: %v, want 0.5", got)
	}
	if got := Ratio(time.Second, 3*time.Second); got != 3 {
		t.Fatalf("three times faster: %v, want 3", got)
	}
	if got := Ratio(0, time.Second); got != 0 {
		t.Fatalf("no measurement: %v, want 0", got)
	}
}
