package diskmodel

import (
	"math"
	"time"
)

// transfer is the time to move bytes at bps bytes/s; zero when either is
// not positive (an uncalibrated figure predicts nothing rather than +Inf).
func transfer(bytes int64, bps float64) time.Duration {
	if bytes <= 0 || !(bps > 0) {
		return 0
	}
	return seconds(float64(bytes) / bps)
}

// seconds converts to a Duration, saturating instead of overflowing.
func seconds(s float64) time.Duration {
	ns := s * float64(time.Second)
	if ns >= math.MaxInt64 {
		return time.Duration(math.MaxInt64)
	}
	return time.Duration(ns)
}

// PredictSequentialWrite is bytes / SeqWriteBps: appending bytes to a new
// file in large writes and making them durable with one fdatasync at the end.
func (c Calibration) PredictSequentialWrite(bytes int64) time.Duration {
	return transfer(bytes, c.SeqWriteBps)
}

// PredictPageCacheWrite is bytes / PageCacheWriteBps: the same appends
// without any fsync, i.e. Kafka's default flush policy for as long as the
// kernel's dirty-page limits are not reached.
func (c Calibration) PredictPageCacheWrite(bytes int64) time.Duration {
	return transfer(bytes, c.PageCacheWriteBps)
}

// PredictSequentialRead is bytes / SeqReadBps: reading from the device.
func (c Calibration) PredictSequentialRead(bytes int64) time.Duration {
	return transfer(bytes, c.SeqReadBps)
}

// PredictColdBufferedRead is bytes / ColdBufferedReadBps: buffered reads of
// data not in the page cache, helped by kernel readahead.
func (c Calibration) PredictColdBufferedRead(bytes int64) time.Duration {
	return transfer(bytes, c.ColdBufferedReadBps)
}

// PredictPageCacheRead is bytes / PageCacheReadBps: copying resident pages
// into a user buffer.
func (c Calibration) PredictPageCacheRead(bytes int64) time.Duration {
	return transfer(bytes, c.PageCacheReadBps)
}

// PredictReadsWithSeeks is seeks*RandRead4K + bytes/SeqReadBps: each seek
// costs one random 4 KiB device read, and the bytes stream at the
// sequential rate.
func (c Calibration) PredictReadsWithSeeks(bytes int64, seeks int) time.Duration {
	return time.Duration(max(seeks, 0))*c.RandRead4K + transfer(bytes, c.SeqReadBps)
}

// PredictWriteWithFsync predicts appending bytes in batches of batchBytes,
// with write(2) per batch and an fdatasync after every fsyncEvery batches
// (Kafka's flush.messages counted in batches) and after the last one.
//
// Each group of fsyncEvery batches costs FsyncLatency(groupBytes), because
// that latency was measured as "write the bytes, then fdatasync": it already
// contains the transfer of the group. Adding bytes/SeqWriteBps on top would
// count the transfer twice (up to 2x for large groups).
//
// fsyncEvery <= 0 means no per-batch fsync: one fdatasync at the end, which
// is PredictSequentialWrite. batchBytes <= 0 means one batch of all bytes.
func (c Calibration) PredictWriteWithFsync(bytes int64, batchBytes int64, fsyncEvery int) time.Duration {
	if bytes <= 0 {
		return 0
	}
	if fsyncEvery <= 0 {
		return c.PredictSequentialWrite(bytes)
	}
	if batchBytes <= 0 || batchBytes > bytes {
		batchBytes = bytes
	}
	group := bytes // batchBytes*fsyncEvery, guarded against overflow
	if int64(fsyncEvery) < bytes/batchBytes {
		group = batchBytes * int64(fsyncEvery)
	}
	full, rest := bytes/group, bytes%group
	total := time.Duration(full) * c.FsyncLatency(group)
	if rest > 0 {
		total += c.FsyncLatency(rest)
	}
	return total
}

// FsyncLatency predicts "write bytesPerFsync, then fdatasync" by piecewise
// linear interpolation through the measured points
//
//	(4 KiB, Fsync4K), (1 MiB, Fsync1M), (FileSize, FileSize/SeqWriteBps)
//
// The third point is the sequential-write measurement, which is exactly one
// such group of FileSize bytes. Below 4 KiB the latency is Fsync4K (the
// device writes whole blocks); above FileSize it extrapolates at
// 1/SeqWriteBps. Each point is raised to at least the previous one, so the
// prediction never falls as bytes grow even when noise inverts two medians.
// Without SeqWriteBps it extrapolates the line through the two fsync points.
func (c Calibration) FsyncLatency(bytesPerFsync int64) time.Duration {
	xs, ys := c.fsyncKnots()
	if len(xs) == 0 {
		return 0
	}
	b, last := float64(bytesPerFsync), len(xs)-1
	switch {
	case b <= xs[0]:
		return seconds(ys[0])
	case b > xs[last] && c.SeqWriteBps > 0:
		return seconds(ys[last] + (b-xs[last])/c.SeqWriteBps)
	}
	i := 1
	for i < last && b > xs[i] {
		i++
	}
	return seconds(lerp(xs[i-1], ys[i-1], xs[i], ys[i], b))
}

// fsyncKnots returns the interpolation points of FsyncLatency in seconds,
// made non-decreasing.
func (c Calibration) fsyncKnots() (xs, ys []float64) {
	if c.Fsync4K <= 0 {
		return nil, nil
	}
	xs = []float64{float64(pageSize)}
	ys = []float64{c.Fsync4K.Seconds()}
	add := func(x, y float64) {
		if x > xs[len(xs)-1] {
			xs = append(xs, x)
			ys = append(ys, max(y, ys[len(ys)-1]))
		}
	}
	if c.Fsync1M > 0 {
		add(float64(chunkSize), c.Fsync1M.Seconds())
	}
	if c.SeqWriteBps > 0 && c.FileSize > 0 {
		add(float64(c.FileSize), float64(c.FileSize)/c.SeqWriteBps)
	}
	if len(xs) == 1 { // one point: flat
		add(xs[0]+1, ys[0])
	}
	return xs, ys
}

// lerp evaluates at x the line through (x0,y0) and (x1,y1).
func lerp(x0, y0, x1, y1, x float64) float64 {
	return y0 + (y1-y0)*(x-x0)/(x1-x0)
}

// Ratio is how a measured time compares with the model's prediction for the
// same work, as a throughput ratio: predicted/measured. 1.0 means as fast as
// the disk model allows, 0.5 half as fast, above 1 faster than the model
// (a cache the model does not know about, or a stale calibration). It is 0
// when either time is not positive. Benchmarks report it with
// b.ReportMetric(diskmodel.Ratio(elapsed, predicted), "x-model").
func Ratio(measured, predicted time.Duration) float64 {
	if measured <= 0 || predicted <= 0 {
		return 0
	}
	return predicted.Seconds() / measured.Seconds()
}
