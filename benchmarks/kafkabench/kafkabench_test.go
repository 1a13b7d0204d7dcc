package kafkabench

import (
	"context"
	"testing"
	"time"
)

// startKfake starts a one-broker kfake cluster for a test.
func startKfake(t *testing.T) *Kfake {
	t.Helper()
	k, err := StartKfake(1)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(k.Close)
	return k
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// checkLatency asserts a latency summary is ordered and positive.
func checkLatency(t *testing.T, name string, l Latency, count int64) {
	t.Helper()
	if l.Count != count {
		t.Errorf("%s: count %d, want %d", name, l.Count, count)
	}
	if l.P50 <= 0 || l.P50 > l.P95 || l.P95 > l.P99 || l.P99 > l.P999 || l.P999 > l.Max {
		t.Errorf("%s: percentiles not ordered or zero: %+v", name, l)
	}
	if l.Avg <= 0 || l.Avg > l.Max {
		t.Errorf("%s: avg %v outside (0, max %v]", name, l.Avg, l.Max)
	}
}

// checkThroughput asserts the counts are exact and the rates agree with them.
func checkThroughput(t *testing.T, name string, th Throughput, records, bytes int64) {
	t.Helper()
	if th.Records != records || th.Bytes != bytes {
		t.Errorf("%s: %d records, %d bytes; want %d, %d", name, th.Records, th.Bytes, records, bytes)
	}
	if th.ElapsedSec <= 0 {
		t.Fatalf("%s: elapsed %v", name, th.ElapsedSec)
	}
	if got, want := th.RecordsPerSec, float64(records)/th.ElapsedSec; got < want*0.999 || got > want*1.001 {
		t.Errorf("%s: %v records/s, want %v", name, got, want)
	}
	if got, want := th.MBPerSec, float64(bytes)/MB/th.ElapsedSec; got < want*0.999 || got > want*1.001 {
		t.Errorf("%s: %v MB/s, want %v", name, got, want)
	}
	if th.ProcessCPUSec <= 0 || th.RecordsPerCPUSec*th.ProcessCPUSec < float64(records)*0.999 {
		t.Errorf("%s: %v CPU s, %v records per CPU s", name, th.ProcessCPUSec, th.RecordsPerCPUSec)
	}
}

// Kafka: ProducerPerformance then ConsumerPerformance on the same topic;
// every record produced is acknowledged once and consumed once.
func TestProduceThenConsumeOnKfake(t *testing.T) {
	k := startKfake(t)
	ctx := testCtx(t)
	if created, err := EnsureTopic(ctx, k.Addrs, "bench", 3, 1); err != nil || !created {
		t.Fatalf("EnsureTopic: created=%v err=%v", created, err)
	}
	if created, err := EnsureTopic(ctx, k.Addrs, "bench", 3, 1); err != nil || created {
		t.Fatalf("EnsureTopic again: created=%v err=%v, want an existing topic", created, err)
	}
	pc := ProduceConfig{Brokers: k.Addrs, Topic: "bench", Records: 5000, RecordSize: 100, Producers: 2,
		Throughput: -1, Producer: ProducerConfig{Acks: "all", Compression: "lz4"}}
	pr, err := Produce(ctx, pc)
	if err != nil {
		t.Fatal(err)
	}
	checkThroughput(t, "produce", pr.Throughput, 5000, 5000*100)
	checkLatency(t, "produce", pr.Latency, 5000)
	cr, err := Consume(ctx, ConsumeConfig{Brokers: k.Addrs, Topic: "bench", Records: 5000})
	if err != nil {
		t.Fatal(err)
	}
	checkThroughput(t, "consume", cr.Throughput, 5000, 5000*100)
	if cr.Polls == 0 || cr.PollLatency.Count != cr.Polls || cr.Fill != nil {
		t.Errorf("consume: polls %d, poll latency %+v, fill %+v", cr.Polls, cr.PollLatency, cr.Fill)
	}
}

// Kafka: EndToEndLatency, one record in flight; --sync gives one record
// per produce request.
func TestSyncProduceAndE2EOnKfake(t *testing.T) {
	k := startKfake(t)
	ctx := testCtx(t)
	if _, err := EnsureTopic(ctx, k.Addrs, "e2e", 1, 1); err != nil {
		t.Fatal(err)
	}
	pr, err := Produce(ctx, ProduceConfig{Brokers: k.Addrs, Topic: "e2e", Records: 50, RecordSize: 10,
		Sync: true, Producer: ProducerConfig{Acks: "1"}})
	if err != nil {
		t.Fatal(err)
	}
	checkThroughput(t, "sync", pr.Throughput, 50, 500)
	checkLatency(t, "sync", pr.Latency, 50)
	er, err := E2E(ctx, E2EConfig{Brokers: k.Addrs, Topic: "e2e", Records: 30, RecordSize: 10})
	if err != nil {
		t.Fatal(err)
	}
	checkLatency(t, "e2e", er.Latency, 30)
	checkLatency(t, "e2e produce", er.ProduceLatency, 30)
	if er.Latency.P50 < er.ProduceLatency.P50/2 {
		t.Errorf("e2e p50 %v far below the produce acknowledgement's %v", er.Latency.P50, er.ProduceLatency.P50)
	}
}

// The consume bench fills a topic that holds too few records, and times
// only the consumption.
func TestConsumeFillsShortTopic(t *testing.T) {
	k := startKfake(t)
	ctx := testCtx(t)
	if _, err := EnsureTopic(ctx, k.Addrs, "short", 2, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := Produce(ctx, ProduceConfig{Brokers: k.Addrs, Topic: "short", Records: 300, RecordSize: 20}); err != nil {
		t.Fatal(err)
	}
	fill := ProduceConfig{Brokers: k.Addrs, Topic: "short", RecordSize: 20}
	cr, err := Consume(ctx, ConsumeConfig{Brokers: k.Addrs, Topic: "short", Records: 1000, Fill: &fill})
	if err != nil {
		t.Fatal(err)
	}
	if cr.Fill == nil || cr.Fill.Records != 700 {
		t.Fatalf("fill %+v, want 700 records", cr.Fill)
	}
	checkThroughput(t, "consume", cr.Throughput, 1000, 1000*20)
}

// ConsumerPerformance's --timeout: a topic that never holds enough
// records ends the run with what arrived.
func TestConsumeTimesOut(t *testing.T) {
	k := startKfake(t)
	ctx := testCtx(t)
	if _, err := EnsureTopic(ctx, k.Addrs, "few", 1, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := Produce(ctx, ProduceConfig{Brokers: k.Addrs, Topic: "few", Records: 10, RecordSize: 5}); err != nil {
		t.Fatal(err)
	}
	cr, err := Consume(ctx, ConsumeConfig{Brokers: k.Addrs, Topic: "few", Records: 20, Timeout: 300 * time.Millisecond})
	if err == nil || !cr.TimedOut || cr.Records != 10 {
		t.Fatalf("err %v, timed out %v, %d records; want a timeout after 10", err, cr.TimedOut, cr.Records)
	}
}

// Kafka's ProducerConfig: acks other than all turn idempotence off when it
// was not asked for, and refuse it when it was.
func TestIdempotenceFollowsAcks(t *testing.T) {
	yes, no := true, false
	for _, c := range []struct {
		acks    string
		idem    *bool
		want    bool
		wantErr bool
	}{
		{"all", nil, true, false}, {"-1", nil, true, false}, {"1", nil, false, false}, {"0", nil, false, false},
		{"all", &no, false, false}, {"1", &yes, false, true}, {"all", &yes, true, false},
	} {
		got, err := ProducerConfig{Acks: c.acks, Idempotent: c.idem}.idempotent()
		if got != c.want || (err != nil) != c.wantErr {
			t.Errorf("acks=%s idempotent=%v: got %v, %v", c.acks, c.idem, got, err)
		}
	}
	if _, err := ParseAcks("2"); err == nil {
		t.Error("acks=2 accepted")
	}
	if _, err := ParseCompression("brotli"); err == nil {
		t.Error("compression brotli accepted")
	}
}

// Kafka's ProducerPerformance payload: upper-case letters, reproducible.
func TestPayload(t *testing.T) {
	a, b := Payload(1000, 7), Payload(1000, 7)
	if string(a) != string(b) {
		t.Fatal("same seed, different payloads")
	}
	seen := map[byte]bool{}
	for _, c := range a {
		if c < 'A' || c > 'Z' {
			t.Fatalf("byte %q is not an upper-case letter", c)
		}
		seen[c] = true
	}
	if len(seen) < 20 {
		t.Errorf("only %d distinct letters in 1000 bytes", len(seen))
	}
}
