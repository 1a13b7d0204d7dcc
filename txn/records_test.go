package txn

import (
	"bytes"
	"encoding/binary"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Kafka: TransactionLog.keyToBytes / valueToBytes, version 0, laid out
// field by field as Kafka's TransactionLogKey and TransactionLogValue
// schemas say, so that kafka-dump-log --transaction-log-decoder reads
// Varve's records.
func TestRecordFormatVersion0(t *testing.T) {
	m := &meta{id: "tx", producerID: 1000, epoch: 3, timeoutMs: 60000, state: PrepareCommit,
		partitions: map[TopicPartition]struct{}{{"b", 0}: {}, {"a", 2}: {}, {"a", 1}: {}}, start: 11, updated: 12}
	var want []byte
	be := binary.BigEndian
	want = be.AppendUint16(want, 0)
	want = be.AppendUint64(want, 1000)
	want = be.AppendUint16(want, 3)
	want = be.AppendUint32(want, 60000)
	want = append(want, 2)
	want = be.AppendUint32(want, 2) // two topics
	want = be.AppendUint16(want, 1)
	want = append(want, 'a')
	want = be.AppendUint32(want, 2)
	want = be.AppendUint32(want, 1)
	want = be.AppendUint32(want, 2)
	want = be.AppendUint16(want, 1)
	want = append(want, 'b')
	want = be.AppendUint32(want, 1)
	want = be.AppendUint32(want, 0)
	want = be.AppendUint64(want, 12)
	want = be.AppendUint64(want, 11)
	if got := value(m, m.producerID, 0); !bytes.Equal(got, want) {
		t.Fatalf("value:\n got %x\nwant %x", got, want)
	}
	if got, want := key("tx"), []byte{0, 0, 0, 2, 't', 'x'}; !bytes.Equal(got, want) {
		t.Fatalf("key: got %x, want %x", got, want)
	}
}

// Kafka: an Empty transactional id stores null partitions
// (TransactionLog.valueToBytes).
func TestEmptyStoresNullPartitions(t *testing.T) {
	v := value(newMeta("x", 7, 1000, time.UnixMilli(5)), 7, 0)
	// version, pid, epoch, timeout, state: 2+8+2+4+1 bytes, then the count.
	if got := int32(binary.BigEndian.Uint32(v[17:])); got != -1 {
		t.Fatalf("partitions count %d, want -1 (null)", got)
	}
}

// Kafka 3.5+ (KIP-915) writes value version 1, flexible, with KIP-890's
// tagged fields; a load reads it.
func TestDecodeValueVersion1(t *testing.T) {
	v := kmsg.NewTxnMetadataValue()
	v.Version, v.ProducerID, v.ProducerEpoch, v.TimeoutMillis = 1, 42, 5, 30000
	v.State = kmsg.TransactionState(Ongoing)
	v.Topics = []kmsg.TxnMetadataValueTopic{{Topic: "t", Partitions: []int32{3, 1}}}
	v.LastUpdateTimestamp, v.StartTimestamp = 20, 10
	v.PreviousProducerID, v.NextProducerID, v.ClientTransactionVersion = 41, 43, 2
	id, m, ok := decode(key("q"), v.AppendTo(nil))
	if !ok || id != "q" {
		t.Fatalf("decode: ok=%v id=%q", ok, id)
	}
	got := []any{m.producerID, m.epoch, m.timeoutMs, m.state, m.sortedPartitions(), m.start, m.updated}
	want := []any{int64(42), int16(5), int32(30000), Ongoing, []TopicPartition{{"t", 1}, {"t", 3}}, int64(10), int64(20)}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("decoded (-want +got):\n%s", d)
	}
}

// Records that are not a transaction's, or do not decode, are skipped,
// never fatal.
func TestDecodeRejects(t *testing.T) {
	for name, kv := range map[string][2][]byte{
		"short key":     {{0}, nil},
		"key version 1": {{0, 1, 0, 1, 'x'}, nil},
		"truncated":     {key("x"), value(newMeta("x", 1, 1, time.Unix(0, 0)), 1, 0)[:9]},
		"bad state":     {key("x"), append(append([]byte{0, 0}, make([]byte, 14)...), 9, 0, 0, 0, 0)},
	} {
		if _, _, ok := decode(kv[0], kv[1]); ok {
			t.Errorf("%s: decoded", name)
		}
	}
}

// Kafka: TransactionStateManager.partitionFor is
// Utils.abs(transactionalId.hashCode) % transaction.state.log.num.partitions.
func TestPartitionFor(t *testing.T) {
	for _, c := range []struct {
		id   string
		n    int
		want int32
	}{
		{"hello", 50, 99162322 % 50},    // "hello".hashCode() = 99162322
		{"polygenelubricants", 50, 0},   // hashCode() = Integer.MIN_VALUE
		{"my-txn", 50, 1061187895 % 50}, // hashCode() = -1061187895
		{"", 50, 0},
	} {
		if got := PartitionFor(c.id, c.n); got != c.want {
			t.Errorf("PartitionFor(%q, %d) = %d, want %d", c.id, c.n, got, c.want)
		}
	}
}

// Kafka 4.x (TransactionLog.valueToBytes): from transaction.version 1
// the value is version 1, with the previous and next producer ids and
// the client's transaction version as tagged fields; a load reads them.
func TestValueVersion1RoundTrip(t *testing.T) {
	m := newMeta("x", 7, 1000, time.UnixMilli(5))
	m.state, m.epoch, m.tv, m.nextProducerID = PrepareCommit, 32767, 2, 8
	m.partitions[TopicPartition{"a", 0}] = struct{}{}
	v := value(m, 6, 1)
	if got := binary.BigEndian.Uint16(v); got != 1 {
		t.Fatalf("value version %d, want 1", got)
	}
	var kv kmsg.TxnMetadataValue
	if err := kv.ReadFrom(v); err != nil {
		t.Fatal(err)
	}
	if kv.PreviousProducerID != 6 || kv.NextProducerID != 8 || kv.ClientTransactionVersion != 2 {
		t.Fatalf("tagged fields: previous %d next %d tv %d", kv.PreviousProducerID, kv.NextProducerID, kv.ClientTransactionVersion)
	}
	_, got, ok := decode(key("x"), v)
	if !ok || got.tv != 2 || got.nextProducerID != 8 || got.lastProducerID != 6 || got.epoch != 32767 {
		t.Fatalf("decoded %+v ok=%v", got, ok)
	}
	if v0 := value(m, 6, 0); binary.BigEndian.Uint16(v0) != 0 {
		t.Fatal("transaction.version 0 must write value version 0")
	}
}
