package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/varve/varve/benchmarks/storage"
	"github.com/varve/varve/experiments/internal/machine"
	"github.com/varve/varve/segment"
)

// runSpec is one measured run.
type runSpec struct {
	policy     policy
	partitions int
	rep        int
}

// key identifies a run without its repetition, for medians.
func (s runSpec) key() runSpec { s.rep = 0; return s }

func (s runSpec) String() string {
	return fmt.Sprintf("%s x%d partitions #%d", s.policy.name(), s.partitions, s.rep+1)
}

// result is one run's measurements; one CSV row.
type result struct {
	runSpec
	records    int // records per batch
	batchLen   int // bytes of one batch as built
	indexBytes int // segment.index.bytes used
	batches    int64
	bytes      int64
	openSec    float64 // opening every log (not part of the throughput)
	appendSec  float64 // first Append to last return
	flushSec   float64 // Log.Flush of every log after the appends
	lat        storage.Latencies
	risk       riskStats
	fsyncs     int64 // fdatasyncs of the logs' files, appends and final flush
	fsyncSec   float64
	dirSyncs   int64 // fsyncs of the partitions' directories
	dirSyncSec float64
	fds, maps  int     // open descriptors and memory mappings with every log open
	load1      float64 // 1-minute load average when the run started
	model      prediction
}

// ackMBps is the append throughput a producer waiting for each
// acknowledgement sees; durableMBps also counts the final flush.
func (r result) ackMBps() float64     { return float64(r.bytes) / r.appendSec / 1e6 }
func (r result) durableMBps() float64 { return float64(r.bytes) / (r.appendSec + r.flushSec) / 1e6 }

// indexBytesFor sizes segment.index.bytes to what one partition receives
// in a run: one time-index entry (12 bytes, the larger kind) per batch or
// per index.interval.bytes, whichever is more, plus a page of slack, so no
// run rolls a segment because an index filled up. Kafka's 10 MiB default
// would map 2 x 10 MiB per partition: 20 GiB of address space at 1,024.
func indexBytesFor(totalBytes int64, partitions, batchBytes int) int {
	perPartition := totalBytes/int64(partitions) + int64(batchBytes)
	step := int64(min(batchBytes, segment.DefaultIndexIntervalBytes))
	entries := perPartition/step + 1
	size := entries*12 + 4096
	return int((size + 4095) / 4096 * 4096)
}

// runOne measures one spec in fresh logs under dir and removes them.
func (e *experiment) runOne(ctx context.Context, spec runSpec) (res result, err error) {
	res = result{runSpec: spec, records: max(1, e.cfg.batchBytes/e.cfg.recordBytes), load1: machine.Load1()}
	batch, err := storage.MakeBatch(e.cfg.batchBytes, res.records)
	if err != nil {
		return res, err
	}
	res.batchLen = len(batch)
	res.indexBytes = e.cfg.indexBytes
	if res.indexBytes == 0 {
		res.indexBytes = indexBytesFor(e.cfg.totalBytes, spec.partitions, e.cfg.batchBytes)
	}
	tmp, err := os.MkdirTemp(e.cfg.Dir, "varve-partitions-")
	if err != nil {
		return res, err
	}
	defer os.RemoveAll(tmp)
	timer := &countingFS{SyncTimer: &storage.SyncTimer{}}
	cfg := segment.DefaultConfig()
	cfg.SegmentBytes, cfg.SegmentIndexBytes = e.cfg.segmentBytes, res.indexBytes
	cfg.FS = timer
	if spec.policy.messages > 0 { // 0: never, DefaultConfig's flush.messages
		cfg.FlushMessages = spec.policy.messages
	}
	cfg.Managed = &segment.ManagedState{RecoveryPoint: -1, LogStartOffset: -1}
	start := time.Now()
	logs, err := openLogs(tmp, spec.partitions, cfg)
	res.openSec = time.Since(start).Seconds()
	defer func() { err = errors.Join(err, closeLogs(logs)) }()
	if err != nil {
		return res, err
	}
	res.fds, res.maps = countEntries("/proc/self/fd"), countLines("/proc/self/maps")
	return res, e.measure(ctx, &res, logs, batch, timer)
}

// openLogs opens n logs named like Kafka's partition directories.
func openLogs(dir string, n int, cfg segment.Config) ([]*segment.Log, error) {
	logs := make([]*segment.Log, 0, n)
	for i := range n {
		l, err := storage.OpenLog(filepath.Join(dir, fmt.Sprintf("partitions-%d", i)), cfg)
		if err != nil {
			return logs, err
		}
		logs = append(logs, l)
	}
	return logs, nil
}

func closeLogs(logs []*segment.Log) error {
	var err error
	for _, l := range logs {
		err = errors.Join(err, l.Close())
	}
	return err
}

// measure appends totalBytes round-robin, sampling the data at risk, then
// flushes every log.
func (e *experiment) measure(ctx context.Context, res *result, logs []*segment.Log, batch []byte, timer *countingFS) error {
	acked := make([]atomic.Int64, len(logs))
	s := startSampler(logs, acked, e.cfg.sampleEvery)
	start := time.Now()
	lats, err := appendRoundRobin(ctx, logs, acked, batch, e.cfg.totalBytes/int64(len(batch)))
	res.appendSec = time.Since(start).Seconds()
	samples := s.stop()
	if err != nil {
		return err
	}
	start = time.Now()
	for i, l := range logs {
		if err := l.Flush(); err != nil {
			return fmt.Errorf("flush partition %d: %w", i, err)
		}
	}
	res.flushSec = time.Since(start).Seconds()
	n, d := timer.Syncs()
	res.fsyncs, res.fsyncSec = n, d.Seconds()
	n, d = timer.DirSyncs()
	res.dirSyncs, res.dirSyncSec = n, d.Seconds()
	res.batches = int64(len(lats))
	res.bytes = res.batches * int64(len(batch))
	res.lat = storage.Summarize(lats)
	res.risk = summarizeRisk(samples)
	return nil
}

// appendRoundRobin appends batch n times, to partition i mod len(logs)
// the i-th time, and returns each Append's latency.
func appendRoundRobin(ctx context.Context, logs []*segment.Log, acked []atomic.Int64, batch []byte, n int64) ([]time.Duration, error) {
	lats := make([]time.Duration, 0, n)
	for i := range n {
		if i%1024 == 0 && ctx.Err() != nil {
			return lats, ctx.Err()
		}
		p := int(i % int64(len(logs)))
		start := time.Now()
		info, err := logs[p].Append(batch)
		lats = append(lats, time.Since(start))
		if err != nil {
			return lats, fmt.Errorf("append %d to partition %d: %w", i, p, err)
		}
		acked[p].Store(info.LastOffset + 1)
	}
	return lats, nil
}

// countEntries is the number of entries of a directory, -1 if unreadable.
func countEntries(dir string) int {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return -1
	}
	return len(ents)
}
