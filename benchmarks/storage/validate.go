package storage

import (
	"fmt"
	"time"

	"github.com/varve/varve/record"
)

// Validate runs record.ValidateBatch (header checks and CRC-32C over the
// batch, records not decoded: the produce-path check) on batch again and
// again within lim, on the calling goroutine, and returns the bytes/s it
// reached: a CPU-only figure of one core. segment's
// BenchmarkValidateBatch measures the same call under testing.B.
func Validate(batch []byte, lim Limit, task Task) (float64, error) {
	var bytes int64
	ops := 0
	start := time.Now()
	for !lim.done(ops, bytes, start) {
		for range 64 { // amortise the clock reads of lim.done
			if _, err := record.ValidateBatch(batch); err != nil {
				return 0, fmt.Errorf("storage: validate: %w", err)
			}
		}
		ops += 64
		bytes += 64 * int64(len(batch))
		task.SetCurrent(progressOf(lim, bytes, start))
	}
	return bps(bytes, time.Since(start)), nil
}
