package storage

import (
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/varve/varve/segment"
)

// readsAndRecovery builds the read log (LogBytes of 16 KiB batches), then
// measures on it, in order: sequential reads from the page cache, random
// reads of one batch by offset (two read paths), and recovery of the log
// as if it had crashed, first with its pages cached, then from the device.
func (s *suite) readsAndRecovery() error {
	dir, err := s.dir("read")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if err := s.buildReadLog(dir); err != nil {
		return err
	}
	l, err := OpenLog(dir, segment.DefaultConfig())
	if err != nil {
		return err
	}
	for _, step := range []func(*segment.Log) error{s.sequentialRead, s.randomReads} {
		if err := step(l); err != nil {
			return closeAll(err, l)
		}
	}
	return s.recoveries(dir, l) // closes l
}

// buildReadLog appends the read log and reports the append as a figure.
func (s *suite) buildReadLog(dir string) error {
	name := "append/" + SizeName(ReadBatchBytes)
	run, err := s.appendRun(dir, name+" (read log)", ReadBatchBytes, segment.DefaultConfig(), Limit{Bytes: s.o.LogBytes})
	if err != nil {
		return err
	}
	s.add(s.appendFigureOf(name, run).detail("builds the log the reads and recoveries use"))
	return nil
}

// sequentialRead reads the whole log from the page cache: one untimed
// pass to make it resident, then timed passes within the budget (at
// least 3); the figure is the median pass.
func (s *suite) sequentialRead(l *segment.Log) error {
	buf := make([]byte, seqReadBuffer)
	if _, err := SequentialPass(l, buf, nopTask{}); err != nil {
		return err
	}
	resident, err := Resident(l.Dir())
	if err != nil {
		return err
	}
	name := "read-seq/page-cache"
	task := s.task(name, s.o.Budget.Milliseconds())
	var passes []time.Duration
	var bytes int64
	start := time.Now()
	for len(passes) < 3 || time.Since(start) < s.o.Budget && len(passes) < 50 {
		t0 := time.Now()
		n, err := SequentialPass(l, buf, nopTask{})
		if err != nil {
			task.Done()
			return err
		}
		passes, bytes = append(passes, time.Since(t0)), n
		task.SetCurrent(time.Since(start).Milliseconds())
	}
	task.Done()
	slices.Sort(passes)
	median := passes[len(passes)/2]
	peer, err := s.rawReadMedian(l.Dir(), buf, 3)
	if err != nil {
		return err
	}
	s.add(throughput(name, bps(bytes, median), s.cal.PageCacheReadBps).withPeer(peer).
		ratioAtLeast(targetSeqReadRatio, "page-cache read").
		detail("median of %d passes over %d MiB, reads of %s (Log.Read + pread); %.0f%% resident",
			len(passes), bytes>>20, SizeName(seqReadBuffer), 100*resident))
	return nil
}

// rawReadMedian is the median throughput of n plain pread passes over
// dir's .log files in reads of len(buf): the peer of the sequential pass.
func (s *suite) rawReadMedian(dir string, buf []byte, n int) (float64, error) {
	var rates []float64
	for range n {
		bytes, took, err := RawRead(dir, buf)
		if err != nil {
			return 0, err
		}
		rates = append(rates, bps(bytes, took))
	}
	slices.Sort(rates)
	return rates[len(rates)/2], nil
}

// randomReads reads one batch at a uniformly random offset, again and
// again, through the region path (Log.Read + one pread into a reused
// buffer) and through Log.ReadBytes, and reports the latency percentiles
// the harness computed from each read's time.
func (s *suite) randomReads(l *segment.Log) error {
	var br BatchReader
	region := func(off int64) (int, error) {
		b, err := br.ReadAt(l, off)
		return len(b), err
	}
	copying := func(off int64) (int, error) {
		b, err := l.ReadBytes(off, 1)
		return len(b), err
	}
	for _, p := range []struct {
		name string
		read func(int64) (int, error)
		how  string
	}{
		{"read-batch/region p99", region, "Log.Read + pread into a reused buffer"},
		{"read-batch/ReadBytes p99", copying, "Log.ReadBytes (allocates the batch)"},
	} {
		f, err := s.randomReadFigure(l, p.name, p.how, p.read)
		if err != nil {
			return err
		}
		s.add(f)
	}
	return nil
}

func (s *suite) randomReadFigure(l *segment.Log, name, how string, read func(int64) (int, error)) (Figure, error) {
	lim := Limit{Duration: s.o.Budget, MinOps: 1000}
	task := s.task(name, progressTotal(lim))
	samples, bytes, err := RandomReads(l, lim, task, read)
	task.Done()
	if err != nil {
		return Figure{}, err
	}
	lat := Summarize(samples)
	batch := bytes / int64(max(lat.N, 1))
	return latency(name, lat.P99, s.cal.PredictPageCacheRead(batch)).
		under(targetReadP99Micros).
		detail("%s; %d reads of %d-byte batches from a %d MiB log; p50 %.1f µs, p99.9 %.1f µs, max %.0f µs; model = copy at page-cache bandwidth",
			how, lat.N, batch, l.Size()>>20, micros(lat.P50), micros(lat.P999), micros(lat.Max)), nil
}

// recoveries closes the log, makes it unclean and reopens it twice: with
// its pages in the page cache (a process crash) and after evicting them
// (a machine restart). Only the second is held to the device-read target.
func (s *suite) recoveries(dir string, l *segment.Log) error {
	size := l.Size()
	if err := l.Close(); err != nil {
		return fmt.Errorf("storage: close read log: %w", err)
	}
	buf := make([]byte, recoveryReadBuffer)
	peer, err := s.rawReadMedian(dir, buf, 1)
	if err != nil {
		return err
	}
	warm, _, err := s.recoverOnce(dir, "recovery/page-cache", false)
	if err != nil {
		return err
	}
	s.add(throughput("recovery/page-cache", bps(size, warm), s.cal.SeqReadBps).withPeer(peer).
		detail("unclean reopen of %d MiB with its pages cached (a process crash); %.2fx page-cache read; peer: pread of the cached files",
			size>>20, bps(size, warm)/s.cal.PageCacheReadBps))
	if _, err := DropCache(dir); err != nil {
		return err
	}
	if peer, err = s.rawReadMedian(dir, buf, 1); err != nil {
		return err
	}
	cold, resident, err := s.recoverOnce(dir, "recovery/device", true)
	if err != nil {
		return err
	}
	s.add(throughput("recovery/device", bps(size, cold), s.cal.SeqReadBps).withPeer(peer).
		ratioAtLeast(targetRecoveryRatio, "seq read").
		detail("unclean reopen of %d MiB after evicting it (%.0f%% still resident): validates every batch, rebuilds every index; peer: buffered pread of the evicted files in %s reads",
			size>>20, 100*resident, SizeName(recoveryReadBuffer)))
	return nil
}

// recoverOnce makes the closed log in dir unclean, optionally evicts it,
// and times the reopening.
func (s *suite) recoverOnce(dir, name string, evict bool) (time.Duration, float64, error) {
	if err := MakeUnclean(dir); err != nil {
		return 0, 0, err
	}
	var resident float64
	if evict {
		r, err := DropCache(dir)
		if err != nil {
			return 0, 0, err
		}
		resident = r
	}
	task := s.task(name, 1)
	l, took, err := Recover(dir, segment.DefaultConfig())
	task.SetCurrent(1)
	task.Done()
	if err != nil {
		return 0, 0, err
	}
	return took, resident, l.Close()
}
