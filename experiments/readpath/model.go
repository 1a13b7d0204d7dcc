package main

import (
	"context"
	"time"

	"github.com/varve/varve/diskmodel"
)

// modelPrediction is what the disk model says a run should take, and the
// ratio predicted/measured (diskmodel.Ratio: 1 = as fast as the model, above
// 1 = faster, e.g. data the model thinks is on disk was cached).
type modelPrediction struct {
	ok bool
	// catch-up: the device models
	seq, cold, seeks time.Duration
	seekCount        int

	// tail: the page-cache model
	pageCache time.Duration

	ratioSeq, ratioCold, ratioSeeks, ratioPageCache float64
}

// loadModel calibrates the disk under dir, or reuses a calibration younger
// than diskmodel.DefaultMaxAge taken on the same device.
func loadModel(ctx context.Context, dir string, quick bool) (*diskmodel.Calibration, error) {
	c, err := diskmodel.LoadOrCalibrate(ctx, dir, diskmodel.DefaultMaxAge, diskmodel.Options{Quick: quick})
	if err != nil {
		return nil, err
	}
	return &c, nil
}

// predict compares a run with the model. Catch-up reads are compared with
// three device models: sequential reads (one stream, queue depth 1), cold
// buffered reads (the kernel's readahead, what a buffered fetch gets), and
// reads with seeks. The seek count is a deliberately simple upper estimate:
// one per segment for a single consumer, one per fetch when several
// consumers interleave on the device.
func (e *experiment) predict(spec runSpec, res result) modelPrediction {
	if e.model == nil {
		return modelPrediction{}
	}
	c := *e.model
	measured := time.Duration(res.seconds * float64(time.Second))
	p := modelPrediction{ok: true}
	if spec.workload == workloadTail {
		p.pageCache = c.PredictPageCacheRead(res.bytes)
		p.ratioPageCache = diskmodel.Ratio(measured, p.pageCache)
		return p
	}
	p.seekCount = len(e.ds.segs)
	if spec.consumers > 1 {
		p.seekCount = int(res.fetches)
	}
	p.seq = c.PredictSequentialRead(res.bytes)
	p.cold = c.PredictColdBufferedRead(res.bytes)
	p.seeks = c.PredictReadsWithSeeks(res.bytes, p.seekCount)
	p.ratioSeq = diskmodel.Ratio(measured, p.seq)
	p.ratioCold = diskmodel.Ratio(measured, p.cold)
	p.ratioSeeks = diskmodel.Ratio(measured, p.seeks)
	return p
}
