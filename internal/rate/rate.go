package rate

import (
	"math"
	"time"
)

// Sensor is Kafka's Rate over a SampledStat: a ring of samples, each
// the total recorded in one window.
type Sensor struct {
	window     time.Duration
	samples    []sample
	current    int
	lastRecord time.Time
}

type sample struct {
	start time.Time
	value float64
}

// New returns a sensor of n samples (at least 1) of window each (at
// least 1 ms), started at now.
func New(n int, window time.Duration, now time.Time) *Sensor {
	s := &Sensor{window: max(window, time.Millisecond), samples: make([]sample, max(n, 1)), lastRecord: now}
	for i := range s.samples {
		s.samples[i].start = now
	}
	return s
}

// Record adds v to the current sample, first moving to the next sample
// when the current one's window is over (Kafka's SampledStat.record).
func (s *Sensor) Record(v float64, now time.Time) {
	s.purge(now)
	if now.Sub(s.samples[s.current].start) >= s.window {
		s.current = (s.current + 1) % len(s.samples)
		s.samples[s.current] = sample{start: now}
	}
	s.samples[s.current].value += v
	s.lastRecord = now
}

// LastRecord is when a value was last recorded (or the sensor made).
func (s *Sensor) LastRecord() time.Time { return s.lastRecord }

// Window is the time span of one sample.
func (s *Sensor) Window() time.Duration { return s.window }

// Samples is the number of samples.
func (s *Sensor) Samples() int { return len(s.samples) }

// purge resets samples older than the whole window (Kafka's
// purgeObsoleteSamples).
func (s *Sensor) purge(now time.Time) {
	expire := time.Duration(len(s.samples)) * s.window
	for i := range s.samples {
		if now.Sub(s.samples[i].start) >= expire {
			s.samples[i] = sample{start: now}
		}
	}
}

// total is the samples' sum and how long ago the oldest began.
func (s *Sensor) total(now time.Time) (float64, time.Duration) {
	s.purge(now)
	total, oldest := 0.0, now
	for _, x := range s.samples {
		total += x.value
		if x.start.Before(oldest) {
			oldest = x.start
		}
	}
	return total, now.Sub(oldest)
}

// Rate is the total per second over the time the samples cover, and
// that time (Kafka's Rate.measure and Rate.windowSize): at least
// samples-1 whole windows.
func (s *Sensor) Rate(now time.Time) (float64, time.Duration) {
	total, span := s.total(now)
	full := int(span / s.window)
	if minFull := len(s.samples) - 1; full < minFull {
		span += time.Duration(minFull-full) * s.window
	}
	if span <= 0 {
		return math.Inf(1), s.window
	}
	return total / span.Seconds(), span
}

// SimpleRate is Kafka's SimpleRate: the total per second over the time
// since the oldest sample began, at least one window, and that time.
func (s *Sensor) SimpleRate(now time.Time) (float64, time.Duration) {
	total, span := s.total(now)
	span = max(span, s.window)
	return total / span.Seconds(), span
}
