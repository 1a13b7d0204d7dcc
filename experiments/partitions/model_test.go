package main

import (
	"testing"
	"time"
)

// Kafka's flush.messages is per partition: 10 batches round-robin over 3
// partitions give them 4, 3 and 3; with 2 batches per fsync that is 2, 1
// and 1 fsyncs in the run and one each for the odd batch of the last two
// at the final flush.
func TestPredictCountsFsyncs(t *testing.T) {
	c := *fakeCalibration()
	s := shape{partitions: 3, batches: 10, batch: 16 << 10, records: 16, group: 2}
	p := predict(c, s)
	if p.fsyncs != 6 || p.seeks != 6 || p.dirSyncs != 3 {
		t.Errorf("fsyncs %d seeks %d dir syncs %d, want 6, 6, 3", p.fsyncs, p.seeks, p.dirSyncs)
	}
	if p.riskMax != 3*16 {
		t.Errorf("max risk %v messages, want one batch per partition (48)", p.riskMax)
	}
	want := 4*c.FsyncLatency(32<<10) + 2*c.FsyncLatency(16<<10) + 6*c.RandRead4K + 3*c.Fsync4K
	if got := time.Duration(p.seconds * float64(time.Second)); (got - want).Abs() > time.Microsecond {
		t.Errorf("durable time %v, want %v", got, want)
	}
	s.group = 0 // never: one fsync per partition at the end, all at risk until then
	p = predict(c, s)
	if p.fsyncs != 3 || p.riskMax != 10*16 {
		t.Errorf("never: %d fsyncs, max risk %v; want 3 and every message", p.fsyncs, p.riskMax)
	}
	s.partitions = 1
	if p = predict(c, s); p.seeks != 0 || p.fsyncs != 1 {
		t.Errorf("one partition: %d seeks, %d fsyncs; want none and one", p.seeks, p.fsyncs)
	}
}

// With a fixed total, more partitions mean more fsyncs of fewer bytes
// each: under never the model's durable time cannot fall as partitions
// grow.
func TestPredictNeverGrowsWithPartitions(t *testing.T) {
	c := *fakeCalibration()
	last := 0.0
	for _, n := range []int{1, 4, 16, 64, 256, 1024} {
		p := predict(c, shape{partitions: n, batches: 16384, batch: 16 << 10, records: 16})
		if p.seconds < last {
			t.Errorf("%d partitions: %v s, less than %v s with fewer", n, p.seconds, last)
		}
		last = p.seconds
	}
}

func TestBend(t *testing.T) {
	counts := []int{1, 4, 16, 64}
	cases := []struct {
		vals []float64
		want int
	}{
		{[]float64{100, 95, 90, 85}, 0},   // never below 80% of the best
		{[]float64{100, 120, 90, 50}, 16}, // 90 < 0.8*120
		{[]float64{100, 79, 200, 10}, 4},
	}
	for _, c := range cases {
		got := bend(counts, func(n int) float64 { return c.vals[slicesIndex(counts, n)] })
		if got != c.want {
			t.Errorf("bend(%v) = %d, want %d", c.vals, got, c.want)
		}
	}
}

func slicesIndex(s []int, v int) int {
	for i, x := range s {
		if x == v {
			return i
		}
	}
	return -1
}
