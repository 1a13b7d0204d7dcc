package main

import (
	"context"
	"fmt"
	"time"

	"github.com/varve/varve/pagecache"
)

// Workload names.
const (
	workloadTail    = "tail"    // the newest bytes, in the page cache
	workloadCatchup = "catchup" // the whole log, evicted before each run
)

// runSpec is one measured run.
type runSpec struct {
	workload  string
	path      string
	consumers int
	rep       int
}

// result is one run's measurements; one CSV row.
type result struct {
	runSpec
	bytes          int64
	fetches        int64
	seconds        float64
	cpuSeconds     float64 // this (sending) process, getrusage
	consumerCPU    float64 // the consumer process, -1 when in-process
	residentBefore float64
	residentAfter  float64
	verified       bool
	model          modelPrediction
}

func (r result) gbps() float64 { return float64(r.bytes) / r.seconds / 1e9 }

func (r result) cpuPerGB() float64 { return r.cpuSeconds / (float64(r.bytes) / 1e9) }

// bounds returns the logical range a workload reads and how many passes.
func (e *experiment) bounds(workload string) (start, end int64, passes int) {
	if workload == workloadTail {
		return e.ds.total - e.cfg.tailBytes, e.ds.total, e.cfg.tailPasses
	}
	return 0, e.ds.total, 1
}

// prepare puts the page cache in the state the workload needs.
func (e *experiment) prepare(workload string) error {
	start, end, _ := e.bounds(workload)
	if workload == workloadTail {
		return e.ds.warm(start, end)
	}
	if err := e.ds.evict(start, end); err != nil {
		return err
	}
	if e.cfg.seqHint {
		return e.ds.advise(start, end, pagecache.Sequential)
	}
	return e.ds.advise(start, end, pagecache.Normal)
}

// runOne measures one spec: prepare the cache, open the path, start the
// consumers, then time from "go" to the last consumer's done.
func (e *experiment) runOne(ctx context.Context, spec runSpec) (result, error) {
	res := result{runSpec: spec, consumerCPU: -1}
	start, end, passes := e.bounds(spec.workload)
	streams := e.ds.streams(start, end, spec.consumers, passes, e.cfg.verify)
	if err := e.prepare(spec.workload); err != nil {
		return res, err
	}
	var err error
	if res.residentBefore, err = e.ds.residency(start, end); err != nil {
		return res, err
	}
	var warm *[2]int64
	if spec.workload == workloadTail {
		warm = &[2]int64{start, end}
	}
	snd, err := newSender(spec.path, e.ds, e.cfg.cacheBytes, warm)
	if err != nil {
		return res, err
	}
	defer snd.close()
	if err := e.measure(ctx, &res, streams, snd); err != nil {
		return res, err
	}
	res.residentAfter, err = e.ds.residency(start, end)
	res.model = e.predict(spec, res)
	return res, err
}

// measure runs the session and fills bytes, seconds, CPU and verification.
func (e *experiment) measure(ctx context.Context, res *result, streams []stream, snd sender) error {
	ln, err := listen()
	if err != nil {
		return err
	}
	s := &session{ln: ln, streams: streams, fetch: e.cfg.fetchBytes}
	defer s.close()
	spec := consumerSpec{Addr: ln.Addr().String(), Fetch: e.cfg.fetchBytes, Push: res.path == pathRaw, Verify: e.cfg.verify}
	if res.path == pathSSL {
		if err := e.tls.setUp(); err != nil {
			return err
		}
		s.tls, spec.TLSRoots = e.tls.server, e.tls.rootsPEM
		defer func() { e.tls.suite = s.suite }()
	}
	for _, st := range streams {
		spec.Totals = append(spec.Totals, st.total())
		res.bytes += st.total()
		res.fetches += (st.total() + e.cfg.fetchBytes - 1) / e.cfg.fetchBytes
	}
	wait, err := startConsumers(spec, e.cfg.inproc)
	if err != nil {
		return err
	}
	if err := s.accept(time.Now().Add(runTimeout(res.bytes))); err != nil {
		wait()
		return err
	}
	stopProgress := e.progress.track(&s.sent, res.runSpec)
	cpu0, t0 := cpuSeconds(), time.Now()
	serr := s.serve(snd, res.path == pathRaw)
	res.seconds, res.cpuSeconds = time.Since(t0).Seconds(), cpuSeconds()-cpu0
	stopProgress()
	rep, werr := wait()
	if serr != nil || werr != nil {
		return fmt.Errorf("%s %s x%d: server: %v; consumers: %v", res.workload, res.path, res.consumers, serr, werr)
	}
	res.consumerCPU = rep.CPU
	return verify(res, streams, rep, e.cfg.verify)
}

// verify checks every consumer got its stream, byte count and hash.
func verify(res *result, streams []stream, rep consumerReport, hashes bool) error {
	for i, st := range streams {
		if rep.Bytes[i] != st.total() {
			return fmt.Errorf("%s %s: consumer %d read %d bytes, want %d", res.workload, res.path, i, rep.Bytes[i], st.total())
		}
		if hashes && rep.Hashes[i] != st.hash {
			return fmt.Errorf("%s %s: consumer %d received wrong bytes (hash %x, want %x)", res.workload, res.path, i, rep.Hashes[i], st.hash)
		}
	}
	res.verified = hashes
	return nil
}

// runTimeout bounds a run generously: 20 MB/s plus a minute.
func runTimeout(bytes int64) time.Duration {
	return time.Minute + time.Duration(float64(bytes)/20e6*float64(time.Second))
}
