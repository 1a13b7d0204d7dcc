package storage

import (
	"fmt"
	"math"
	"os"
	"time"

	"github.com/varve/varve/record"
	"github.com/varve/varve/segment"
)

// Targets of issue 2.
const (
	targetAppendRatio   = 0.90 // append >= 90% of sequential write bandwidth
	targetFsyncRatio    = 0.90 // fsync per batch >= 90% of the flush model
	targetValidateMBps  = 3000 // validation >= 3 GB/s on one core
	targetReadP99Micros = 50   // warm read of a batch by offset: p99 < 50 µs
	targetSeqReadRatio  = 0.50 // sequential page-cache read >= 50% of calibrated bandwidth
	targetRecoveryRatio = 0.50 // recovery >= 50% of sequential read bandwidth
	allocSlack          = 0.5  // allocations per append: equal within half an allocation
)

// validation measures record.ValidateBatch alone, on one core.
func (s *suite) validation() error {
	for _, size := range ValidateBatchSizes {
		batch, err := MakeBatch(size, recordsFor(size))
		if err != nil {
			return err
		}
		name := "validate/" + SizeName(size)
		lim := Limit{Duration: s.o.Budget / 2, MinOps: 64}
		task := s.task(name, progressTotal(lim))
		rate, err := Validate(batch, lim, task)
		task.Done()
		if err != nil {
			return err
		}
		s.add(throughput(name, rate, 0).atLeast(targetValidateMBps).
			detail("CPU only: header checks + CRC-32C, one goroutine"))
	}
	return nil
}

// allocations compares heap allocations per append for batches of 1 and
// of 1000 records: per-batch work must not allocate per record.
func (s *suite) allocations() error {
	n := 2000
	if s.o.Quick {
		n = 500
	}
	var perAppend [2]float64
	for i, records := range []int{1, 1000} {
		a, err := s.allocsFor(records, n)
		if err != nil {
			return err
		}
		perAppend[i] = a
	}
	s.add(Figure{Name: "allocs/append 1 record", Unit: unitAllocs, Measured: perAppend[0], Target: "-", Status: Info,
		Detail: fmt.Sprintf("mean over %d appends", n)})
	f := Figure{Name: "allocs/append 1000 records", Unit: unitAllocs, Measured: perAppend[1],
		Target: fmt.Sprintf("= 1 record (±%.1f)", allocSlack),
		Status: status(math.Abs(perAppend[1]-perAppend[0]) <= allocSlack)}
	s.add(f.detail("mean over %d appends", n))
	return nil
}

func (s *suite) allocsFor(records, n int) (float64, error) {
	dir, err := s.dir(fmt.Sprintf("allocs-%d", records))
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	batch, err := MakeBatch(records*48+record.BatchHeaderSize, records)
	if err != nil {
		return 0, err
	}
	l, err := OpenLog(dir, segment.DefaultConfig())
	if err != nil {
		return 0, err
	}
	task := s.task(fmt.Sprintf("allocs/append %d records", records), int64(n))
	a, err := AllocsPerAppend(l, batch, n)
	task.Done()
	return a, closeAll(err, l)
}

// appends measures appends without an fsync per batch (Kafka's default
// flush policy), timed to the end of a final flush.
func (s *suite) appends() error {
	for _, size := range AppendBatchSizes {
		f, err := s.appendFigure(size)
		if err != nil {
			return err
		}
		s.add(f)
	}
	return nil
}

func (s *suite) appendFigure(size int) (Figure, error) {
	name := "append/" + SizeName(size)
	dir, err := s.dir(SizeName(size))
	if err != nil {
		return Figure{}, err
	}
	defer os.RemoveAll(dir)
	lim := Limit{Bytes: s.o.LogBytes}
	peer, err := s.rawAppend(dir, name, size, lim, false)
	if err != nil {
		return Figure{}, err
	}
	run, err := s.appendRun(dir, name, size, segment.DefaultConfig(), lim)
	if err != nil {
		return Figure{}, err
	}
	return s.appendFigureOf(name, run).withPeer(peer.TotalBps()).
		ratioAtLeast(targetAppendRatio, "seq write"), nil
}

// rawAppend runs the peer of an append workload: the same batches written
// with plain pwrite (and fdatasync) to a file in dir.
func (s *suite) rawAppend(dir, name string, size int, lim Limit, fsyncEach bool) (AppendRun, error) {
	batch, err := MakeBatch(size, recordsFor(size))
	if err != nil {
		return AppendRun{}, err
	}
	task := s.task(name+" (raw peer)", progressTotal(lim))
	defer task.Done()
	return RawAppend(dir, batch, lim, fsyncEach)
}

// appendFigureOf describes a run without per-batch fsyncs against the
// sequential write model, with the page-cache phase as a detail.
func (s *suite) appendFigureOf(name string, run AppendRun) Figure {
	return throughput(name, run.TotalBps(), s.cal.SeqWriteBps).
		detail("%d appends, %d MiB, final flush included", run.Appends, run.Bytes>>20).
		detail("before the flush %.0f MB/s = %.2fx page-cache write", run.WriteBps()/1e6, run.WriteBps()/s.cal.PageCacheWriteBps)
}

// appendRun opens a log in dir with cfg and appends batches of size bytes
// to it within lim.
func (s *suite) appendRun(dir, name string, size int, cfg segment.Config, lim Limit) (AppendRun, error) {
	batch, err := MakeBatch(size, recordsFor(size))
	if err != nil {
		return AppendRun{}, err
	}
	l, err := OpenLog(dir, cfg)
	if err != nil {
		return AppendRun{}, err
	}
	task := s.task(name, progressTotal(lim))
	run, err := Append(l, batch, lim, task)
	task.Done()
	return run, closeAll(err, l)
}

// fsyncAppends measures appends with flush.messages=1: every Append
// returns after its batch is fsynced.
func (s *suite) fsyncAppends() error {
	for _, size := range FsyncBatchSizes {
		name := "append-fsync/" + SizeName(size)
		dir, err := s.dir("fsync-" + SizeName(size))
		if err != nil {
			return err
		}
		lim := Limit{Bytes: s.o.LogBytes, Duration: s.o.Budget, MinOps: 16}
		peerLim := lim
		peerLim.Duration /= 2
		peer, err := s.rawAppend(dir, name, size, peerLim, true)
		if err != nil {
			return err
		}
		timer := &SyncTimer{}
		cfg := segment.DefaultConfig()
		cfg.FlushMessages = 1
		cfg.FS = timer
		run, err := s.appendRun(dir, name, size, cfg, lim)
		os.RemoveAll(dir)
		if err != nil {
			return err
		}
		syncs, synced := timer.Syncs()
		s.add(s.fsyncFigure(name, size, run).withPeer(peer.TotalBps()).
			detail(".log fdatasync %.0f µs per append (%d syncs); the rest is index msync and the append itself",
				micros(synced/time.Duration(max(run.Appends, 1))), syncs).
			detail("raw pwrite+fdatasync per batch just before: %.0f µs each", micros(peer.Total/time.Duration(max(peer.Appends, 1)))))
	}
	return nil
}

// fsyncFigure compares a flush.messages=1 run with
// diskmodel.PredictWriteWithFsync for the same bytes in the same batches.
func (s *suite) fsyncFigure(name string, size int, run AppendRun) Figure {
	model := s.cal.PredictWriteWithFsync(run.Bytes, int64(size), 1)
	perAppend := run.Total / time.Duration(max(run.Appends, 1))
	return throughput(name, run.TotalBps(), bps(run.Bytes, model)).
		ratioAtLeast(targetFsyncRatio, "fsync model").
		detail("%d appends, %.0f µs each; model %.0f µs (write+fdatasync of %s)",
			run.Appends, micros(perAppend), micros(s.cal.FsyncLatency(int64(size))), SizeName(size))
}
