package kafkabench

import (
	"os"
	"strconv"
	"strings"
	"time"
)

// MB is the unit of MB/s, as in Kafka's ProducerPerformance and
// ConsumerPerformance: 1024*1024 bytes.
const MB = 1 << 20

// Throughput is what a phase moved and how fast.
type Throughput struct {
	Records       int64   `json:"records"`
	Bytes         int64   `json:"bytes"` // keys + values, as Kafka's perf tools count
	ElapsedSec    float64 `json:"elapsed_s"`
	RecordsPerSec float64 `json:"records_per_sec"`
	MBPerSec      float64 `json:"mb_per_sec"` // MiB/s, Kafka's "MB/sec"
}

func newThroughput(records, bytes int64, elapsed time.Duration) Throughput {
	t := Throughput{Records: records, Bytes: bytes, ElapsedSec: elapsed.Seconds()}
	if elapsed > 0 {
		t.RecordsPerSec = float64(records) / elapsed.Seconds()
		t.MBPerSec = float64(bytes) / MB / elapsed.Seconds()
	}
	return t
}

// LoadAvg1 returns the one-minute load average (Linux /proc/loadavg), or
// -1 where it cannot be read. Benchmarks report it at start and end: on a
// shared machine the figures depend on it.
func LoadAvg1() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return -1
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return -1
	}
	v, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return -1
	}
	return v
}
