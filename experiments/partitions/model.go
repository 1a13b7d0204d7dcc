package main

import (
	"time"

	"github.com/varve/varve/diskmodel"
)

// prediction is the disk model's account of one run (see doc.go, "Model").
type prediction struct {
	ok         bool
	seconds    float64 // appends and final flush: the durable time
	ackSeconds float64 // the appends alone
	fsyncs     int64   // fsyncs the policy causes, final flush included
	seeks      int64   // fsyncs that move the device to another partition's file
	dirSyncs   int64   // directory fsyncs: one per new log, at its first flush
	ratio      float64 // diskmodel.Ratio of the durable time: predicted/measured
	riskMax    float64 // most messages acknowledged and not fsynced at once
}

// shape is what the model needs to know about a run.
type shape struct {
	partitions int
	batches    int64 // appended round-robin
	batch      int64 // bytes per batch
	records    int   // messages per batch
	group      int64 // batches per fsync per partition; 0 = never
}

// predict models a run: every partition's log is written sequentially,
// and every fsync costs diskmodel's FsyncLatency of the bytes it makes
// durable (a write(2) then fdatasync of that group, which also counts the
// copy into the page cache); an fsync of another file than the previous
// one also pays one seek, RandRead4K, the calibrated cost of moving to a
// random place on the device. With one partition consecutive fsyncs
// continue where the last ended, so they seek nowhere. Each new log's
// first flush also fsyncs its directory (the segment files were created
// there), costed as Fsync4K; it is counted in the durable time, and in
// the append time only under a policy that fsyncs during the run, where
// the first in-run fsync pays it.
func predict(c diskmodel.Calibration, s shape) prediction {
	p := prediction{ok: true}
	var inRun, final time.Duration
	var remainder int64 // batches written to the page cache and not fsynced before the final flush
	for i := range s.partitions {
		n := s.batches / int64(s.partitions)
		if int64(i) < s.batches%int64(s.partitions) {
			n++
		}
		full, rest := int64(0), n
		if s.group > 0 {
			full, rest = n/s.group, n%s.group
			inRun += time.Duration(full) * c.FsyncLatency(s.group*s.batch)
			p.riskMax += float64(min(s.group-1, n) * int64(s.records))
		} else {
			p.riskMax += float64(n * int64(s.records))
		}
		p.fsyncs += full
		if rest > 0 {
			final += c.FsyncLatency(rest * s.batch)
			remainder += rest
			p.fsyncs++
		}
	}
	if s.partitions > 1 {
		p.seeks = p.fsyncs
	}
	seek := time.Duration(p.seeks) * c.RandRead4K
	p.dirSyncs = int64(s.partitions)
	dirs := time.Duration(p.dirSyncs) * c.Fsync4K
	p.seconds = (inRun + final + seek + dirs).Seconds()
	inRunShare := 1 - float64(remainder)/float64(max(s.batches, 1))
	p.ackSeconds = (inRun + time.Duration(float64(seek)*inRunShare) + c.PredictPageCacheWrite(remainder*s.batch)).Seconds()
	if inRun > 0 {
		p.ackSeconds += dirs.Seconds()
	}
	return p
}

// shapeOf describes a measured run for the model.
func (e *experiment) shapeOf(r result) shape {
	return shape{partitions: r.partitions, batches: r.batches, batch: int64(r.batchLen), records: r.records,
		group: r.policy.batchesPerFsync(r.records)}
}

// withModel fills r.model, or leaves it zero without a calibration.
func (e *experiment) withModel(r result) result {
	if e.Model == nil || r.appendSec+r.flushSec <= 0 {
		return r
	}
	r.model = predict(*e.Model, e.shapeOf(r))
	measured := time.Duration((r.appendSec + r.flushSec) * float64(time.Second))
	r.model.ratio = diskmodel.Ratio(measured, time.Duration(r.model.seconds*float64(time.Second)))
	return r
}

// bend is the smallest partition count, in ascending order of counts, at
// which a throughput curve falls below 80% of its best value at that or
// any smaller count; 0 if it never does.
func bend(counts []int, value func(int) float64) int {
	best := 0.0
	for _, n := range counts {
		v := value(n)
		if best > 0 && v < 0.8*best {
			return n
		}
		best = max(best, v)
	}
	return 0
}
