package kafkabench

import (
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
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
	// ProcessCPUSec is the CPU time (user + system) this whole process
	// used during the phase: the clients, and with kfake the broker too.
	// Unlike the rates it barely moves when other work competes for the
	// machine's cores.
	ProcessCPUSec float64 `json:"process_cpu_s"`
	// RecordsPerCPUSec is Records / ProcessCPUSec.
	RecordsPerCPUSec float64 `json:"records_per_cpu_s"`
}

// clock times a phase in wall time and in this process's CPU time.
type clock struct {
	wall time.Time
	cpu  time.Duration
}

func startClock() clock { return clock{wall: time.Now(), cpu: processCPU()} }

// throughput is what the phase moved from the clock's start to end.
func (c clock) throughput(records, bytes int64, end time.Time) Throughput {
	elapsed := end.Sub(c.wall)
	t := Throughput{Records: records, Bytes: bytes, ElapsedSec: elapsed.Seconds(),
		ProcessCPUSec: (processCPU() - c.cpu).Seconds()}
	if elapsed > 0 {
		t.RecordsPerSec = float64(records) / elapsed.Seconds()
		t.MBPerSec = float64(bytes) / MB / elapsed.Seconds()
	}
	if t.ProcessCPUSec > 0 {
		t.RecordsPerCPUSec = float64(records) / t.ProcessCPUSec
	}
	return t
}

// processCPU is the user plus system time of this process so far (0 if
// getrusage fails).
func processCPU() time.Duration {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
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
