package main

import (
	"bytes"
	"encoding/binary"
	"encoding/csv"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/varve/varve/experiments/internal/kafkadist"
	"github.com/varve/varve/record"
)

// buildBatch encodes n of the paper's messages (null key, 200-byte value,
// one timestamp) with the project's Kafka v2 encoder.
func buildBatch(t *testing.T, n int, base int64) []byte {
	t.Helper()
	b := record.NewBatchBuilder(record.CompressionNone)
	for range n {
		b.Append(record.Record{Timestamp: 1_700_000_000_000, Value: bytes.Repeat([]byte{'A'}, messageSize)})
	}
	out, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	binary.BigEndian.PutUint64(out, uint64(base))
	return out
}

// Kafka: DefaultRecordBatch is a 61-byte header plus the records; each of
// the paper's records takes 209 bytes, so batch.size for 50 lets 50 in and
// keeps the 51st out.
func TestBatchSizesHoldExactlyN(t *testing.T) {
	for _, n := range []int{1, 2, 50} {
		if got, want := len(buildBatch(t, n, 0)), batchHeaderLen+n*recordWireLen; got != want {
			t.Errorf("batch of %d: %d bytes, constants say %d", n, got, want)
		}
	}
	fifty, fiftyOne := len(buildBatch(t, 50, 0)), len(buildBatch(t, 51, 0))
	if s := javaBatchSize(50); s < fifty || s >= fiftyOne {
		t.Errorf("batch.size %d does not hold exactly 50 (50: %d bytes, 51: %d)", s, fifty, fiftyOne)
	}
	if s := int(kgoBatchMaxBytes(50)) - 4; s < fifty || s >= fiftyOne {
		t.Errorf("kgo max %d (less its 4-byte array length) does not hold exactly 50", s+4)
	}
	if javaBatchSize(1) >= len(buildBatch(t, 1, 0)) {
		t.Errorf("batch.size for 1 (%d) would admit more than one record", javaBatchSize(1))
	}
}

// Kafka: a .log file is RecordBatches back to back; recordCount is at
// byte 57 of each header, batchLength at byte 8.
func TestScanLogCountsBatchesAndRecords(t *testing.T) {
	var log []byte
	log = append(log, buildBatch(t, 50, 0)...)
	log = append(log, buildBatch(t, 1, 50)...)
	log = append(log, buildBatch(t, 7, 51)...)
	full := len(log)
	log = append(log, make([]byte, 4096)...) // a preallocated, zeroed tail
	st, err := scanLog(bytes.NewReader(log), int64(len(log)))
	if err != nil {
		t.Fatal(err)
	}
	if st != (logStats{batches: 3, records: 58, bytes: int64(full)}) {
		t.Errorf("got %+v", st)
	}
	// A torn last batch is not counted.
	st, err = scanLog(bytes.NewReader(log[:full-10]), int64(full-10))
	if err != nil || st.batches != 2 || st.records != 51 {
		t.Errorf("torn tail: %+v, %v", st, err)
	}
}

func TestScanLogRejectsWrongMagic(t *testing.T) {
	b := buildBatch(t, 3, 0)
	b[batchMagicAt] = 1
	if _, err := scanLog(bytes.NewReader(b), int64(len(b))); err == nil {
		t.Fatal("magic 1 accepted as a v2 batch")
	}
}

func TestScanPartitionReadsEveryLogFile(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "00000000000000000000.log"), buildBatch(t, 50, 0), 0o644)
	os.WriteFile(filepath.Join(dir, "00000000000000000050.log"), buildBatch(t, 50, 50), 0o644)
	os.WriteFile(filepath.Join(dir, "00000000000000000000.index"), make([]byte, 80), 0o644)
	st, err := scanPartition(dir)
	if err != nil || st.batches != 2 || st.records != 100 {
		t.Errorf("got %+v, %v", st, err)
	}
	if _, err := scanPartition(t.TempDir()); err == nil {
		t.Error("an empty partition directory gave no error")
	}
}

// Kafka's KRaft quick start: one node as broker and controller needs
// process.roles, node.id, the controller quorum and listener names.
func TestKafkaServerProps(t *testing.T) {
	text := kafkadist.FormatProps("experiments/kafka2011", kafkaServerProps("/data", kafkaPorts{broker: 19092, controller: 19093}))
	for _, want := range []string{
		"process.roles=broker,controller\n", "node.id=1\n", "controller.quorum.voters=1@127.0.0.1:19093\n",
		"listeners=PLAINTEXT://127.0.0.1:19092,CONTROLLER://127.0.0.1:19093\n",
		"advertised.listeners=PLAINTEXT://127.0.0.1:19092\n", "controller.listener.names=CONTROLLER\n",
		"log.dirs=/data\n", "offsets.topic.replication.factor=1\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("server.properties lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "log.flush.interval") {
		t.Error("server.properties sets a flush interval; the experiment keeps Kafka's default (none)")
	}
	lines := strings.Split(strings.TrimSpace(text), "\n")[1:]
	for i := 1; i < len(lines); i++ {
		if lines[i-1] > lines[i] {
			t.Errorf("properties not sorted: %q before %q", lines[i-1], lines[i])
		}
	}
}

// ProducerPerformance prints one final line in this shape.
func TestParsePerfFinal(t *testing.T) {
	line := "1000000 records sent, 45871.559633 records/sec (8.75 MB/sec), 2.13 ms avg latency, 350.00 ms max latency, 1 ms 50th, 3 ms 95th, 12 ms 99th, 180 ms 99.9th."
	s, ok := parsePerfFinal(line)
	want := perfSummary{records: 1_000_000, perSec: 45871.559633, mbPerSec: 8.75, avgMs: 2.13, maxMs: 350,
		p50: 1, p95: 3, p99: 12, p999: 180}
	if !ok || s != want {
		t.Errorf("got %+v %v", s, ok)
	}
	if _, ok := parsePerfFinal("229231 records sent, 45846.2 records/sec (8.74 MB/sec), 2.1 ms avg latency, 350.0 ms max latency."); ok {
		t.Error("a window line parsed as the final line")
	}
	r := perfResult(s, 50)
	if math.Abs(r.msgsPerSec()-45871.559633) > 0.01 || r.Bytes != 200_000_000 {
		t.Errorf("result %+v: %f msg/s", r, r.msgsPerSec())
	}
}

func TestFollowPerfAdvancesProgress(t *testing.T) {
	out := "229231 records sent, 45846.2 records/sec (8.74 MB/sec), 2.1 ms avg latency, 350.0 ms max latency.\n" +
		"WARN something\n" +
		"770769 records sent, 46000.0 records/sec (8.77 MB/sec), 2.0 ms avg latency, 20.0 ms max latency.\n" +
		"1000000 records sent, 45871.559633 records/sec (8.75 MB/sec), 2.13 ms avg latency, 350.00 ms max latency, 1 ms 50th, 3 ms 95th, 12 ms 99th, 180 ms 99.9th.\n"
	task := &recTask{}
	s, ok := followPerf(strings.NewReader(out), task)
	if !ok || s.records != 1_000_000 {
		t.Fatalf("final line not found: %+v", s)
	}
	if want := []int64{229231, 1_000_000, 1_000_000}; !equal(task.seen, want) || !task.done {
		t.Errorf("progress %v (done %v), want %v", task.seen, task.done, want)
	}
}

type recTask struct {
	seen []int64
	done bool
}

func (r *recTask) SetCurrent(n int64) { r.seen = append(r.seen, n) }
func (r *recTask) Done()              { r.done = true }

func equal(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestParseProcStat(t *testing.T) {
	// pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime cutime cstime ...
	line := "4242 (beam.smp (x) y) S 1 4200 4200 0 -1 4194560 100 0 0 0 250 50 7 3 20 0 30 0"
	g, ticks, ok := parseProcStat(line)
	if !ok || g != 4200 || ticks != 310 {
		t.Errorf("got pgrp %d ticks %d ok %v", g, ticks, ok)
	}
	if _, _, ok := parseProcStat("garbage"); ok {
		t.Error("garbage parsed")
	}
}

func TestCSVRoundTrip(t *testing.T) {
	rs := []result{
		{System: sysVarve, Client: clientKgo, Test: testProduce, Batch: 50, Records: 1000, Bytes: 200_000,
			Seconds: 0.5, Batches: 20, Stored: 1000, DiskB: 211_000, BrokerCPU: 0.01, LatP50: math.NaN()},
		{System: sysRabbitMQ, Client: clientRabbitMQ, Test: testConsume, Batch: 50, Err: "boom, it failed"},
	}
	var buf bytes.Buffer
	if err := writeCSV(&buf, rs); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&buf).ReadAll()
	if err != nil || len(rows) != 3 {
		t.Fatalf("%d rows, %v", len(rows), err)
	}
	col := func(row []string, name string) string {
		for i, h := range rows[0] {
			if h == name {
				return row[i]
			}
		}
		t.Fatalf("no column %s", name)
		return ""
	}
	for name, want := range map[string]string{"msgs_per_s": "2000", "records_per_batch": "50.00",
		"disk_overhead_bytes_per_msg": "11.0", "broker_cpu_us_per_msg": "10.00", "lat_p50_ms": ""} {
		if got := col(rows[1], name); got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	if col(rows[2], "error") != "boom, it failed" || col(rows[2], "msgs_per_s") != "0" {
		t.Errorf("error row %v", rows[2])
	}
}

func TestConfigDefaults(t *testing.T) {
	c, err := parseFlags([]string{"-quick"}, io.Discard)
	if err != nil || c.records != 20_000 || len(c.systems) != 4 || c.consumeBatch() != 50 ||
		c.outDir != filepath.Join("experiments", "kafka2011", "results", "quick") {
		t.Errorf("quick: %+v %v", c, err)
	}
	c, err = parseFlags(nil, io.Discard)
	if err != nil || c.records != 1_000_000 {
		t.Errorf("full run: %d records, %v", c.records, err)
	}
	for _, bad := range [][]string{{"-systems", "activemq"}, {"-batches", "0"}, {"-records", "10"}} {
		if _, err := parseFlags(bad, io.Discard); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
}

// The RabbitMQ node must use only its own ports, files and cookie.
func TestRabbitEnvKeepsToItsDirectory(t *testing.T) {
	p := rabbitPorts{amqp: 30001, dist: 30002, epmd: 30003}
	env := strings.Join(rabbitEnv("/x", p), "\n")
	for _, want := range []string{"HOME=/x/home", "RABBITMQ_NODE_PORT=30001", "RABBITMQ_DIST_PORT=30002",
		"ERL_EPMD_PORT=30003", "RABBITMQ_NODE_IP_ADDRESS=127.0.0.1", "RABBITMQ_MNESIA_BASE=/x/mnesia",
		"RABBITMQ_CONF_ENV_FILE=/x/rabbitmq-env.conf"} {
		if !strings.Contains(env, want) {
			t.Errorf("env lacks %s", want)
		}
	}
	if got := rabbitFiles(p)["rabbitmq.conf"]; got != "listeners.tcp.default = 127.0.0.1:30001\n" {
		t.Errorf("rabbitmq.conf %q", got)
	}
}

func TestSummaryRatios(t *testing.T) {
	mk := func(sys, test string, batch int, perSec float64) result {
		return result{System: sys, Client: mainClient(sys), Test: test, Batch: batch, Records: int64(perSec), Seconds: 1}
	}
	rs := []result{
		mk(sysKafka, testProduce, 1, 50_000), mk(sysKafka, testProduce, 50, 400_000), mk(sysKafka, testConsume, 50, 22_000),
		mk(sysRabbitMQ, testProduce, 1, 25_000), mk(sysRabbitMQ, testProduce, 50, 40_000), mk(sysRabbitMQ, testConsume, 50, 5_500),
		mk(sysVarve, testProduceNoAck, 1, 25_000), mk(sysVarve, testProduceNoAck, 50, 600_000),
	}
	cfg, _ := parseFlags(nil, io.Discard)
	charts := buildCharts(rs, cfg)
	s := summary(rs, cfg, machineInfo{}, nil, charts)
	if charts[len(charts)-1].file != "paper_setting" {
		t.Errorf("no paper_setting chart with acks=0 results present")
	}
	for _, want := range []string{
		"| produce batch 50 / batch 1 | 8.00 | 8.00 | n/a | n/a | 1.60 |",
		"| system / rabbitmq, produce batch 1 | ≥ 2 (Kafka vs RabbitMQ) | 2.00 | n/a | n/a | 1.00 |",
		"| system / rabbitmq, consume | > 4 (Kafka vs RabbitMQ) | 4.00 |",
		"| kafka | kafkabench (franz-go) | produce | 50 | 400,000 |",
		"| produce-noack (paper's setting) batch 50 / batch 1 | 8.00 | n/a | 24.00 | n/a | n/a |",
		"| produce-noack batch 50 / paper's Kafka | 1.00 | n/a | 1.50 |",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("summary lacks %q:\n%s", want, s)
		}
	}
}

func TestChartsRender(t *testing.T) {
	rs := []result{
		{System: sysVarve, Client: clientKgo, Test: testProduce, Batch: 1, Records: 10, Seconds: 1, BrokerCPU: 0.001},
		{System: sysVarve, Client: clientJava, Test: testProduce, Batch: 1, Records: 8, Seconds: 1},
	}
	cfg, _ := parseFlags(nil, io.Discard)
	dir := t.TempDir()
	charts := buildCharts(rs, cfg)
	if len(charts) != 4 {
		t.Fatalf("%d charts, want 4 (with the producer clients chart, without the paper's setting)", len(charts))
	}
	for _, c := range charts {
		if err := c.save(dir); err != nil {
			t.Fatal(err)
		}
		for _, ext := range []string{".png", ".svg"} {
			if fi, err := os.Stat(filepath.Join(dir, c.file+ext)); err != nil || fi.Size() == 0 {
				t.Errorf("%s%s: %v", c.file, ext, err)
			}
		}
	}
}

func TestGroup(t *testing.T) {
	for in, want := range map[float64]string{0: "0", 999: "999", 1000: "1,000", 1234567: "1,234,567", math.NaN(): ""} {
		if got := group(in); got != want {
			t.Errorf("group(%v) = %q, want %q", in, got, want)
		}
	}
}
