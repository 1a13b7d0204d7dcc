package main

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/varve/varve/benchmarks/kafkabench"
)

// Kafka's RecordBatch v2 sizes for the paper's messages (null key, no
// headers, 200-byte value): a record is attributes (1) + timestampDelta
// (1 while under 64 ms) + offsetDelta (1 below 64) + key length (1) +
// value length (2) + value (200) + header count (1) = 207 bytes, led by
// its varint length (2): 209 bytes.
const (
	recordWireLen = 209
	// batchSlack lets each record of a batch grow by up to two bytes
	// (larger deltas) without letting one more record in.
	batchSlack = 100
	// kgoBatchOverhead is the batch header plus the 4-byte array length
	// franz-go counts against ProducerBatchMaxBytes.
	kgoBatchOverhead = 4 + batchHeaderLen
)

// javaBatchSize is the producer's batch.size (bytes, header included)
// that holds exactly n of the paper's messages.
func javaBatchSize(n int) int {
	if n == 1 {
		return 1 // any record is bigger: one record per batch
	}
	return batchHeaderLen + n*recordWireLen + batchSlack
}

// kgoBatchMaxBytes is franz-go's ProducerBatchMaxBytes for n messages; it
// is only used for n > 1 (n = 1 uses ProduceSync).
func kgoBatchMaxBytes(n int) int32 {
	return int32(kgoBatchOverhead + n*recordWireLen + batchSlack)
}

// kgoProducer is the franz-go producer of a batch-n test: non-idempotent,
// one request in flight, so one batch is outstanding at a time.
func kgoProducer(n int, acks string) kafkabench.ProducerConfig {
	off := false
	pc := kafkabench.ProducerConfig{Acks: acks, Idempotent: &off, MaxInFlight: 1}
	if n > 1 {
		pc.BatchMaxBytes = kgoBatchMaxBytes(n)
	}
	return pc
}

// kafkaProto drives a Kafka-protocol broker (Varve or Kafka) with the
// same franz-go client, through benchmarks/kafkabench.
type kafkaProto struct {
	addr    string
	logDirs string // to count the batches each test stored
}

// topicName is the topic of one test, e.g. "k2011-produce-b50".
func topicName(client, test string, batch int) string {
	return fmt.Sprintf("k2011-%s-%s-b%d", client, test, batch)
}

func (k *kafkaProto) produce(ctx context.Context, e *env, batch int, acks string) (result, error) {
	test := testProduce
	if acks == "0" {
		test = testProduceNoAck
	}
	topic := topicName("kgo", test, batch)
	if err := k.ensureTopic(ctx, topic); err != nil {
		return result{}, err
	}
	cfg := kafkabench.ProduceConfig{
		Brokers: []string{k.addr}, Topic: topic, Records: e.cfg.records, RecordSize: messageSize,
		Producers: 1, Sync: batch == 1, Producer: kgoProducer(batch, acks), Throughput: -1,
		Progress: e.prog, Phase: e.phase,
	}
	res, err := kafkabench.Produce(ctx, cfg)
	if res == nil {
		return result{}, err
	}
	r := result{Client: clientKgo, Test: test, Batch: batch, Records: res.Records, Bytes: res.Bytes,
		Seconds: res.ElapsedSec, LatP50: res.Latency.P50, LatP99: res.Latency.P99}
	return r, err
}

func (k *kafkaProto) consume(ctx context.Context, e *env, batch int) (result, error) {
	topic := topicName("kgo", testProduce, batch)
	cfg := kafkabench.ConsumeConfig{
		Brokers: []string{k.addr}, Topic: topic, Records: e.cfg.records,
		FetchMaxBytes: pullBytes, FetchMaxPartitionBytes: pullBytes, Progress: e.prog,
	}
	res, err := kafkabench.Consume(ctx, cfg)
	if res == nil {
		return result{}, err
	}
	r := result{Client: clientKgo, Test: testConsume, Batch: batch, Records: res.Records, Bytes: res.Bytes,
		Seconds: res.ElapsedSec, LatP50: res.PollLatency.P50, LatP99: res.PollLatency.P99}
	return r, err
}

// storedBatches counts the RecordBatches the broker wrote for topic.
func (k *kafkaProto) storedBatches(topic string) (logStats, error) {
	dir, err := partitionDir(k.logDirs, topic)
	if err != nil {
		return logStats{}, err
	}
	return scanPartition(dir)
}

// proto lets the runner reach the Kafka-protocol side of a system.
func (k *kafkaProto) proto() *kafkaProto { return k }

// ensureTopic creates topic with one partition (the broker's default
// replication factor) and waits until its metadata names a leader, so
// that no test times the broker's topic creation.
func (k *kafkaProto) ensureTopic(ctx context.Context, topic string) error {
	if _, err := kafkabench.EnsureTopic(ctx, []string{k.addr}, topic, 1, -1); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(k.addr))
	if err != nil {
		return fmt.Errorf("topic %s: %w", topic, err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	for {
		td, err := adm.ListTopics(ctx, topic)
		if err == nil && hasLeader(td[topic]) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("topic %s has no leader: %w (last: %v)", topic, ctx.Err(), err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func hasLeader(td kadm.TopicDetail) bool {
	p, ok := td.Partitions[0]
	return td.Err == nil && ok && p.Err == nil && p.Leader >= 0
}

// warmUp produces and consumes warmUpRecords(records) untimed messages on
// a topic of its own, so that a JVM broker has compiled its hot paths
// before the first timed test (Go and BEAM brokers do not warm up, but
// get the same treatment).
func (k *kafkaProto) warmUp(ctx context.Context, e *env) error {
	topic := "k2011-warmup"
	if err := k.ensureTopic(ctx, topic); err != nil {
		return err
	}
	n := warmUpRecords(e.cfg.records)
	pc := kafkabench.ProduceConfig{Brokers: []string{k.addr}, Topic: topic, Records: n, RecordSize: messageSize,
		Producers: 1, Producer: kgoProducer(50, "1"), Throughput: -1, Progress: e.prog, Phase: e.phase}
	if _, err := kafkabench.Produce(ctx, pc); err != nil {
		return fmt.Errorf("warm-up produce: %w", err)
	}
	cc := kafkabench.ConsumeConfig{Brokers: []string{k.addr}, Topic: topic, Records: n,
		FetchMaxBytes: pullBytes, FetchMaxPartitionBytes: pullBytes}
	if _, err := kafkabench.Consume(ctx, cc); err != nil {
		return fmt.Errorf("warm-up consume: %w", err)
	}
	return nil
}

// warmUpRecords is a tenth of a test, at least 20,000 and at most 200,000.
func warmUpRecords(records int64) int64 { return min(max(records/10, 20_000), 200_000) }
