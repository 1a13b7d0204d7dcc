package main

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"strconv"
	"time"
)

// Test names.
const (
	testProduce      = "produce"
	testProduceNoAck = "produce-noack"
	testConsume      = "consume"
	testWarmUp       = "warm-up" // untimed, not reported
)

// Clients, named in the results.
const (
	clientKgo      = "kafkabench (franz-go)"
	clientJava     = "ProducerPerformance (Java)"
	clientNats     = "nats.go"
	clientRabbitMQ = "amqp091-go"
)

// result is one measured test.
type result struct {
	System  string
	Client  string
	Test    string
	Batch   int // producer batch size; for consume, the batch that stored the data
	Records int64
	Bytes   int64 // message payload bytes moved
	Seconds float64
	LatP50  float64 // ms: produce acknowledgement or consumer pull, when measured
	LatP99  float64
	Batches int64 // RecordBatches found on disk for this test's topic (Kafka protocol)
	Stored  int64 // records in those batches
	DiskB   int64 // bytes the system's data directory grew by during a produce test
	// BrokerCPU is the CPU seconds (user + system) the broker's process
	// group used during the test: a figure that contention moves far less
	// than the rates.
	BrokerCPU float64
	Load1     float64 // 1-minute load average at the end of the test
	Start     time.Time
	Err       string
}

// msgsPerSec is messages per second, 0 when nothing was timed.
func (r result) msgsPerSec() float64 {
	if r.Seconds <= 0 {
		return 0
	}
	return float64(r.Records) / r.Seconds
}

// mbPerSec is payload MiB per second, as Kafka's tools print MB/sec.
func (r result) mbPerSec() float64 {
	if r.Seconds <= 0 {
		return 0
	}
	return float64(r.Bytes) / (1 << 20) / r.Seconds
}

// recordsPerBatch is the mean count of messages in a stored RecordBatch,
// NaN when not measured.
func (r result) recordsPerBatch() float64 {
	if r.Batches <= 0 {
		return math.NaN()
	}
	return float64(r.Stored) / float64(r.Batches)
}

// diskPerMsg is how many bytes of disk one message took beyond its payload
// (the paper's storage overhead), NaN when not measured.
func (r result) diskPerMsg() float64 {
	if r.DiskB <= 0 || r.Records <= 0 {
		return math.NaN()
	}
	return float64(r.DiskB)/float64(r.Records) - messageSize
}

// cpuPerMsg is the broker's CPU microseconds per message, NaN if unknown.
func (r result) cpuPerMsg() float64 {
	if r.BrokerCPU <= 0 || r.Records <= 0 {
		return math.NaN()
	}
	return r.BrokerCPU * 1e6 / float64(r.Records)
}

var csvHeader = []string{
	"start", "system", "client", "test", "batch", "records", "payload_bytes", "seconds",
	"msgs_per_s", "mib_per_s", "lat_p50_ms", "lat_p99_ms", "stored_batches", "stored_records", "records_per_batch",
	"disk_overhead_bytes_per_msg", "broker_cpu_s", "broker_cpu_us_per_msg", "load1", "error",
}

func (r result) csvRow() []string {
	return []string{
		r.Start.UTC().Format(time.RFC3339), r.System, r.Client, r.Test, strconv.Itoa(r.Batch),
		strconv.FormatInt(r.Records, 10), strconv.FormatInt(r.Bytes, 10), ftoa(r.Seconds, 3),
		ftoa(r.msgsPerSec(), 0), ftoa(r.mbPerSec(), 2), ftoa(r.LatP50, 3), ftoa(r.LatP99, 3),
		strconv.FormatInt(r.Batches, 10), strconv.FormatInt(r.Stored, 10), ftoa(r.recordsPerBatch(), 2), ftoa(r.diskPerMsg(), 1),
		ftoa(r.BrokerCPU, 2), ftoa(r.cpuPerMsg(), 2), ftoa(r.Load1, 2), r.Err,
	}
}

// ftoa formats f with prec decimals; NaN becomes the empty string.
func ftoa(f float64, prec int) string {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return ""
	}
	return strconv.FormatFloat(f, 'f', prec, 64)
}

// writeCSV writes the header and one row per result.
func writeCSV(w io.Writer, results []result) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(csvHeader); err != nil {
		return fmt.Errorf("write csv: %w", err)
	}
	for _, r := range results {
		if err := cw.Write(r.csvRow()); err != nil {
			return fmt.Errorf("write csv: %w", err)
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("write csv: %w", err)
	}
	return nil
}
