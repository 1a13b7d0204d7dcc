package cluster_test

import (
	"encoding/binary"
	"hash/crc32"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/varve/varve/record"
)

// batchOf builds a producer's batch of records with codec c.
func batchOf(t *testing.T, c record.Compression, recs ...record.Record) []byte {
	t.Helper()
	bb := record.NewBatchBuilder(c)
	for _, r := range recs {
		bb.Append(r)
	}
	b, err := bb.Build()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// reseal recomputes the CRC-32C of a batch a test edited.
func reseal(b []byte) []byte {
	binary.BigEndian.PutUint32(b[record.CRCPos:], crc32.Checksum(b[record.AttributesPos:], crc32.MakeTable(crc32.Castagnoli)))
	return b
}

// produceRaw sends records as they are to topic/0 and returns the
// partition's answer.
func produceRaw(t *testing.T, cl *kgo.Client, topic string, records []byte, txnID *string) kmsg.ProduceResponseTopicPartition {
	t.Helper()
	req := kmsg.NewPtrProduceRequest()
	req.Acks, req.TimeoutMillis, req.TransactionID = -1, 5000, txnID
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Records = records
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx(t), cl)
	if err != nil {
		t.Fatal(err)
	}
	return resp.Topics[0].Partitions[0]
}

func endOffset(t *testing.T, cl *kgo.Client, topic string) int64 {
	t.Helper()
	ends, err := kadm.NewClient(cl).ListEndOffsets(ctx(t), topic)
	if err != nil {
		t.Fatal(err)
	}
	o, _ := ends.Lookup(topic, 0)
	if o.Err != nil {
		t.Fatal(o.Err)
	}
	return o.Offset
}

// Kafka: LogValidator, through the socket: each bad batch gets Kafka's
// error code and nothing of it is appended.
func TestProduceValidatesEveryRecord(t *testing.T) {
	b := startBroker(t, t.TempDir(), nil)
	createTopic(t, b.addr, "plain", 1, nil)
	compact := "compact"
	createTopic(t, b.addr, "keyed", 1, map[string]*string{"cleanup.policy": &compact})
	cl := client(t, b.addr)
	now := time.Now().UnixMilli()

	lying := batchOf(t, record.CompressionNone, record.Record{Key: []byte("k"), Value: []byte("v"), Timestamp: now})
	lying[record.RecordsPos] += 2 // the record claims one byte more than it has
	gzipGarbage := batchOf(t, record.CompressionGzip, record.Record{Value: make([]byte, 500), Timestamp: now})
	for i := record.RecordsPos + 12; i < len(gzipGarbage); i++ {
		gzipGarbage[i] = byte(i)
	}
	good := batchOf(t, record.CompressionNone, record.Record{Key: []byte("k"), Value: []byte("v"), Timestamp: now})
	control := batchOf(t, record.CompressionNone, record.Record{Key: []byte("k"), Timestamp: now})
	control[record.AttributesPos+1] |= record.AttrControl
	cases := []struct {
		name, topic string
		records     []byte
		want        *kerr.Error
	}{
		{"record length that lies", "plain", reseal(lying), kerr.InvalidRecord},
		{"gzip with garbage inside", "plain", reseal(gzipGarbage), kerr.CorruptMessage},
		{"trailing bytes", "plain", append(append([]byte(nil), good...), 0, 0, 0, 0, 0), kerr.CorruptMessage},
		{"control batch from a client", "plain", reseal(control), kerr.InvalidRecord},
		{"batch over max.message.bytes", "plain", batchOf(t, record.CompressionNone, record.Record{Value: make([]byte, 2<<20), Timestamp: now}), kerr.MessageTooLarge},
	}
	for _, c := range cases {
		sp := produceRaw(t, cl, c.topic, c.records, nil)
		if sp.ErrorCode != c.want.Code {
			t.Errorf("%s: error %v, want %v", c.name, kerr.ErrorForCode(sp.ErrorCode), c.want)
		}
	}
	if end := endOffset(t, cl, "plain"); end != 0 {
		t.Fatalf("refused batches appended: end offset %d", end)
	}
	if sp := produceRaw(t, cl, "plain", good, nil); sp.ErrorCode != 0 {
		t.Fatalf("a good batch after the bad ones: %v", kerr.ErrorForCode(sp.ErrorCode))
	}
}

// Kafka: LogValidator.validateKey and validateTimestamp answer with
// per-record RecordErrors (Produce v8+, KIP-467) naming each bad record.
func TestProduceRecordErrors(t *testing.T) {
	b := startBroker(t, t.TempDir(), nil)
	compact := "compact"
	createTopic(t, b.addr, "keyed", 1, map[string]*string{"cleanup.policy": &compact})
	cl := client(t, b.addr)
	now := time.Now().UnixMilli()
	keyless := batchOf(t, record.CompressionZstd, record.Record{Key: []byte("a"), Timestamp: now},
		record.Record{Value: []byte("no key"), Timestamp: now}, record.Record{Key: []byte("c"), Timestamp: now})
	future := batchOf(t, record.CompressionLZ4, record.Record{Key: []byte("a"), Timestamp: now},
		record.Record{Key: []byte("b"), Timestamp: now + 2*3_600_000}) // after.max.ms is one hour
	for _, c := range []struct {
		name    string
		records []byte
		want    *kerr.Error
		index   int32
	}{
		{"keyless record on a compacted topic", keyless, kerr.InvalidRecord, 1},
		{"timestamp two hours ahead", future, kerr.InvalidTimestamp, 1},
	} {
		sp := produceRaw(t, cl, "keyed", c.records, nil)
		if sp.ErrorCode != c.want.Code || len(sp.ErrorRecords) != 1 || sp.ErrorRecords[0].RelativeOffset != c.index {
			t.Errorf("%s: error %v, record errors %+v", c.name, kerr.ErrorForCode(sp.ErrorCode), sp.ErrorRecords)
		}
		if sp.ErrorMessage == nil || *sp.ErrorMessage == "" {
			t.Errorf("%s: no error message", c.name)
		}
	}
	if end := endOffset(t, cl, "keyed"); end != 0 {
		t.Fatalf("refused batches appended: end offset %d", end)
	}
}

// Kafka: KafkaApis.handleProduceRequest refuses transactional records
// from a request without a transactional id
// (TRANSACTIONAL_ID_AUTHORIZATION_FAILED).
func TestProduceTransactionalBatchWithoutTransactionalID(t *testing.T) {
	b := startBroker(t, t.TempDir(), nil)
	createTopic(t, b.addr, "plain", 1, nil)
	cl := client(t, b.addr)
	bb := record.NewBatchBuilder(record.CompressionNone)
	bb.SetProducer(7, 0, 0)
	bb.SetTransactional(true)
	bb.Append(record.Record{Value: []byte("v")})
	txn, err := bb.Build()
	if err != nil {
		t.Fatal(err)
	}
	if sp := produceRaw(t, cl, "plain", txn, nil); sp.ErrorCode != kerr.TransactionalIDAuthorizationFailed.Code {
		t.Fatalf("error %v", kerr.ErrorForCode(sp.ErrorCode))
	}
	if end := endOffset(t, cl, "plain"); end != 0 {
		t.Fatalf("refused batch appended: end offset %d", end)
	}
}
