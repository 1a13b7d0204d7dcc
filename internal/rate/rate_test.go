package rate

import (
	"math"
	"testing"
	"time"
)

var t0 = time.Unix(1000, 0)

func at(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }

// Kafka: Rate.windowSize counts at least samples-1 whole windows, so a
// first burst on a new sensor is spread over them.
func TestRateCountsAtLeastAllButOneWindow(t *testing.T) {
	s := New(11, time.Second, t0)
	s.Record(1000, at(0))
	r, span := s.Rate(at(500))
	if span != 10500*time.Millisecond || math.Abs(r-1000/10.5) > 1e-9 {
		t.Fatalf("rate %v over %v, want %v over 10.5s", r, span, 1000/10.5)
	}
}

// Kafka: SimpleRate.windowSize is the time since the oldest sample
// began, at least one window (ReplicationQuotaManager's measure).
func TestSimpleRateCountsElapsedTimeAtLeastOneWindow(t *testing.T) {
	s := New(11, time.Second, t0)
	s.Record(1000, at(0))
	if r, span := s.SimpleRate(at(200)); span != time.Second || r != 1000 {
		t.Fatalf("rate %v over %v, want 1000 over the first 1s window", r, span)
	}
	s.Record(3000, at(3000))
	if r, span := s.SimpleRate(at(4000)); span != 4*time.Second || r != 1000 {
		t.Fatalf("rate %v over %v, want 4000 bytes over 4s", r, span)
	}
}

// Kafka: SampledStat.purgeObsoleteSamples forgets samples older than
// samples x window, so a rate falls back once the traffic stops.
func TestOldSamplesAreForgotten(t *testing.T) {
	s := New(3, time.Second, t0)
	s.Record(9000, at(0))
	if r, _ := s.SimpleRate(at(2500)); r == 0 {
		t.Fatal("a sample inside the 3s of memory was dropped")
	}
	if r, _ := s.SimpleRate(at(3000)); r != 0 {
		t.Fatalf("rate %v after the whole window passed, want 0", r)
	}
}

// Kafka: SampledStat.record rolls to the next sample once the current
// one's window is over, so the ring holds one window per sample.
func TestRecordRollsSamples(t *testing.T) {
	s := New(2, time.Second, t0)
	s.Record(100, at(0))
	s.Record(100, at(1000)) // second sample
	s.Record(100, at(2000)) // reuses the first: the 100 at t0 is gone
	if r, span := s.SimpleRate(at(2000)); span != time.Second || r != 200 {
		t.Fatalf("rate %v over %v, want 200 over 1s", r, span)
	}
}
