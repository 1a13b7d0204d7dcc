package main

import (
	"math"
	"time"

	"github.com/varve/varve/diskmodel"
)

// prediction is what the disk model says a run should show. Every figure
// is arithmetic on the calibration (see doc.go, "Models"); the data at
// risk of time-driven policies also uses the run's measured append rate,
// since how much is at risk depends on how fast it arrives.
type prediction struct {
	ok      bool
	seconds float64 // time to append the run's bytes under the policy
	ratio   float64 // diskmodel.Ratio: predicted/measured time, 1 = as fast as the model
	// p50, p99, p999 of one Append's latency.
	p50, p99, p999 time.Duration
	riskMean       float64 // time-weighted mean of messages acknowledged and not fsynced
	riskMax        float64
	fsyncs         float64 // fsyncs during the run
}

// shape is what the models need to know about a run.
type shape struct {
	batch        int64 // bytes per batch
	records      int   // records per batch
	group        int   // batches per fsync (0: no fsync on the append path)
	appenders    int
	bytes        int64
	seconds      float64 // measured length of the append phase
	flushMs      time.Duration
	segmentBytes int64
}

func (e *experiment) shapeOf(r result) shape {
	s := shape{batch: int64(r.batchLen), records: r.records, appenders: r.appenders, bytes: r.bytes,
		seconds: r.seconds, flushMs: r.policy.ms, segmentBytes: e.cfg.segmentBytes}
	s.group = r.policy.batchesPerFsync(r.records)
	if r.group {
		s.group *= r.appenders // ideal group commit: one fsync covers every appender's batch
	}
	return s
}

// predict compares a run with the model; zero without a model.
func (e *experiment) predict(r result) prediction {
	if e.Model == nil || r.seconds <= 0 {
		return prediction{}
	}
	c, s := *e.Model, e.shapeOf(r)
	p := prediction{ok: true}
	var t time.Duration
	if s.group > 0 {
		t = c.PredictWriteWithFsync(s.bytes, s.batch, s.group)
	} else {
		t = c.PredictPageCacheWrite(s.bytes)
	}
	p.seconds = t.Seconds()
	p.ratio = diskmodel.Ratio(time.Duration(r.seconds*float64(time.Second)), t)
	p.p50, p.p99, p.p999 = latencyModel(c, s, 0.50), latencyModel(c, s, 0.99), latencyModel(c, s, 0.999)
	p.riskMean, p.riskMax, p.fsyncs = riskModel(c, s, r.appends)
	return p
}

// latencyModel is the q-quantile of one Append's latency. Under
// flush.messages with g batches per fsync, one append in g pays
// FsyncLatency(g*batch) (the write and fdatasync of the whole group) and
// the others a page-cache write of their batch, so the quantile is the
// fsync's latency once q > 1-1/g. With several appenders sharing fsyncs
// (group commit) every append waits for one. Without per-append fsyncs
// every append is a page-cache write.
func latencyModel(c diskmodel.Calibration, s shape, q float64) time.Duration {
	write := c.PredictPageCacheWrite(s.batch)
	switch {
	case s.group <= 0:
		return write
	case s.appenders > 1:
		return c.FsyncLatency(int64(s.group) * s.batch)
	case q > 1-1/float64(s.group):
		return c.FsyncLatency(int64(s.group) * s.batch)
	}
	return write
}

// riskModel predicts the time-weighted mean and the maximum of the
// messages acknowledged but not fsynced, and the fsync count, for a run
// of appends appends. See doc.go for the derivations.
func riskModel(c diskmodel.Calibration, s shape, appends int64) (mean, peak, fsyncs float64) {
	m := float64(s.records)
	switch {
	case s.group > 0 && s.appenders > 1:
		return 0, 0, float64(appends) / float64(s.group) // acked means fsynced
	case s.group > 0:
		g := float64(s.group)
		tw := c.PredictPageCacheWrite(s.batch).Seconds()
		f := c.FsyncLatency(int64(s.group) * s.batch).Seconds()
		if s.group > 1 {
			mean = m * (tw*(g-2)*(g-1)/2 + (g-1)*f) / ((g-1)*tw + f)
		}
		return mean, m * (g - 1), math.Floor(float64(appends) / g)
	case s.flushMs > 0:
		return flushMsRisk(c, s)
	}
	return neverRisk(c, s)
}

// flushMsRisk models flush.ms=T by replaying the log's flusher over the
// run at the measured append rate r. The flusher wakes every T (ticks that
// fall inside a flush are lost) and fsyncs when T has passed since the
// end of the last flush; the fsync covers what was appended before it
// began and takes FsyncLatency of those bytes. So in a steady state
// flushes start P = T*ceil((T+F)/T) apart (2T whenever 0 < F <= T), and
// the data at risk climbs from r*F to r*(P+F): mean r*(P/2+F). When r
// exceeds what the device absorbs, F grows flush after flush and so does
// the risk; a run shorter than T sees no flush at all. The replay gives
// the time-weighted mean, the maximum and the count of fsyncs.
func flushMsRisk(c diskmodel.Calibration, s shape) (mean, peak, fsyncs float64) {
	perMsg := float64(s.batch) / float64(s.records)
	r := float64(s.bytes) / s.seconds // bytes/s
	T, L := s.flushMs.Seconds(), s.seconds
	var area, t, synced, lastEnd float64
	advance := func(to float64) { // integrate the risk r*u - synced over [t, to]
		a0, a1 := r*t-synced, r*to-synced
		area += (a0 + a1) / 2 * (to - t)
		peak, t = max(peak, a1), to
	}
	for k := 1; float64(k)*T < L; k++ {
		tick := float64(k) * T
		if tick < t || tick-lastEnd < T {
			continue // lost inside a flush, or too soon after one
		}
		advance(tick)
		f := c.FsyncLatency(int64(r*tick - synced)).Seconds()
		if tick+f > L {
			break // the run ends before this flush does
		}
		advance(tick + f)
		synced, lastEnd = r*tick, tick+f
		fsyncs++
	}
	advance(L)
	return area / L / perMsg, peak / perMsg, fsyncs
}

// neverRisk models Kafka's default: nothing is fsynced until a segment
// rolls, when the flusher fsyncs the sealed segment. Within one segment
// the risk grows linearly with what was appended (mean half, max all);
// across rolls it is a saw tooth of one segment plus what arrives while
// the sealed one is fsynced.
func neverRisk(c diskmodel.Calibration, s shape) (mean, peak, fsyncs float64) {
	perMsg := float64(s.batch) / float64(s.records)
	total := float64(s.bytes) / perMsg
	if s.bytes <= s.segmentBytes-s.batch {
		return total / 2, total, 0
	}
	seg := float64(s.segmentBytes) / perMsg
	lag := float64(s.bytes) / s.seconds * c.FsyncLatency(s.segmentBytes).Seconds() / perMsg
	return seg/2 + lag, seg + lag, math.Floor(float64(s.bytes) / float64(s.segmentBytes))
}
