package main

import (
	"math"
	"testing"
	"time"
)

// Kafka: UnifiedLog.append flushes once LEO - recoveryPoint >=
// flush.messages, counted in messages (offsets), not batches.
func TestBatchesPerFsync(t *testing.T) {
	cases := []struct {
		p       policy
		records int
		want    int
	}{
		{policy{messages: 1}, 1, 1},
		{policy{messages: 10}, 1, 10},
		{policy{messages: 10}, 16, 1},    // one batch already holds 10 messages
		{policy{messages: 1000}, 16, 63}, // ceil(1000/16)
		{policy{messages: 1000}, 256, 4}, // ceil(1000/256)
		{policy{ms: time.Millisecond}, 16, 0},
		{never, 1, 0},
	}
	for _, c := range cases {
		if got := c.p.batchesPerFsync(c.records); got != c.want {
			t.Errorf("%s with %d records per batch: %d batches per fsync, want %d", c.p.name(), c.records, got, c.want)
		}
	}
}

// One append in g pays the fsync of the whole group, so a quantile above
// 1-1/g is the fsync's latency and the median a page-cache write.
func TestLatencyModel(t *testing.T) {
	c := *fakeCalibration()
	batch := int64(1 << 10)
	write := c.PredictPageCacheWrite(batch)
	s := shape{batch: batch, records: 1, group: 10, appenders: 1}
	if got := latencyModel(c, s, 0.5); got != write {
		t.Errorf("messages=10 p50 = %v, want a page-cache write %v", got, write)
	}
	if got, want := latencyModel(c, s, 0.99), c.FsyncLatency(10*batch); got != want {
		t.Errorf("messages=10 p99 = %v, want FsyncLatency(10 batches) %v", got, want)
	}
	s.group = 1
	if got, want := latencyModel(c, s, 0.5), c.FsyncLatency(batch); got != want {
		t.Errorf("messages=1 p50 = %v, want %v", got, want)
	}
	s.group, s.flushMs = 0, time.Millisecond
	if got := latencyModel(c, s, 0.999); got != write {
		t.Errorf("flush.ms p99.9 = %v, want a page-cache write: appends never wait for the flusher", got)
	}
}

// Under flush.messages=N at most N-1 acknowledged messages are unsynced
// (the N-th append returns after the fsync), and the time-weighted mean
// lies between 0 and that.
func TestRiskModelFlushMessages(t *testing.T) {
	c := *fakeCalibration()
	s := shape{batch: 16 << 10, records: 16, group: 63, appenders: 1}
	mean, peak, fsyncs := riskModel(c, s, 630)
	if peak != 62*16 || fsyncs != 10 {
		t.Errorf("max %v msgs and %v fsyncs, want %d and 10", peak, fsyncs, 62*16)
	}
	if mean <= 0 || mean >= peak {
		t.Errorf("mean %v outside (0, %v)", mean, peak)
	}
	s.group = 1
	if mean, peak, _ := riskModel(c, s, 100); mean != 0 || peak != 0 {
		t.Errorf("messages=1 risk %v/%v, want 0", mean, peak)
	}
}

// Kafka's kafka-log-flusher flushes a log once flush.ms has passed since
// its last flush. With a fast fsync the flusher's wake-ups every T find
// T - F < T after a flush, so flushes come every 2T and the mean risk is
// r*T (P/2 with P = 2T); a run shorter than T sees no flush.
func TestRiskModelFlushMs(t *testing.T) {
	c := *fakeCalibration()
	c.Fsync4K, c.Fsync1M = time.Microsecond, time.Microsecond // near-instant fsyncs
	c.SeqWriteBps = 1e15
	rate := 100e6 // bytes/s of 1 KiB messages
	s := shape{batch: 1 << 10, records: 1, appenders: 1, flushMs: 10 * time.Millisecond, seconds: 10}
	s.bytes = int64(rate * s.seconds)
	mean, peak, fsyncs := riskModel(c, s, 0)
	perT := rate * 0.010 / 1024 // messages per T
	if math.Abs(mean/perT-1) > 0.02 || math.Abs(peak/(2*perT)-1) > 0.02 {
		t.Errorf("mean %.0f, max %.0f messages; want about %.0f and %.0f", mean, peak, perT, 2*perT)
	}
	if want := 500.0; math.Abs(fsyncs-want) > 2 {
		t.Errorf("%v fsyncs in 10 s, want about %v (every 20 ms)", fsyncs, want)
	}
	s.seconds, s.bytes = 0.005, int64(rate*0.005)
	mean, peak, fsyncs = riskModel(c, s, 0)
	if fsyncs != 0 || math.Abs(peak-float64(s.bytes)/1024) > 1 || math.Abs(mean-peak/2) > 1 {
		t.Errorf("a run shorter than T: mean %v max %v fsyncs %v; want half, all, none", mean, peak, fsyncs)
	}
}

func TestSummarizeRisk(t *testing.T) {
	var samples []riskSample
	for i := range 100 {
		samples = append(samples, riskSample{acked: int64(i), unsynced: int64(i + 1)})
	}
	st := summarizeRisk(samples)
	if st.samples != 100 || st.mean != 49.5 || st.p99 != 98 || st.max != 99 || st.unsynced != 100 || st.unsyncedMean != 50.5 {
		t.Errorf("summary %+v", st)
	}
	if st := summarizeRisk(nil); st.samples != 0 || st.max != 0 {
		t.Errorf("no samples: %+v", st)
	}
}
