package txn

import (
	"encoding/binary"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/varve/varve/record"
)

// Records in __transaction_state, Kafka's formats (TransactionLog),
// big-endian, strings as int16 length + bytes:
//
//	key:   version int16 = 0 | transactional_id string
//	value: version int16 = 0 | producer_id int64 | producer_epoch int16
//	       | transaction_timeout_ms int32 | state int8 (State's numbers)
//	       | partitions nullable array (int32 count, -1: null) of
//	         topic string | partitions array of int32
//	       | last_update_timestamp_ms int64 | start_timestamp_ms int64
//
// Value version 1 (KIP-915, KIP-890) is the same in Kafka's flexible
// encoding (compact strings and arrays, uvarint lengths + 1) followed by
// tagged fields, each written only when it is not its default:
//
//	tag 0: previous_producer_id int64 (default -1): the producer id before
//	       this change
//	tag 1: next_producer_id int64 (default -1): the id a version 2
//	       transaction that exhausted its epoch moves to
//	tag 2: client_transaction_version int16 (default 0)
//
// As Kafka's TransactionLog, the version written follows the cluster's
// transaction.version: 0 below level 1, 1 from level 1. Both are read.
// A null value is a tombstone: the id expired. An Empty id stores null
// partitions, as Kafka does.
const keyVersion = 0

// key encodes the record key of a transactional id.
func key(id string) []byte {
	k := kmsg.NewTxnMetadataKey()
	k.Version, k.TransactionalID = keyVersion, id
	return k.AppendTo(nil)
}

// value encodes m as Kafka's TransactionLogValue: version 0, or with
// level (transaction.version) 1 or more version 1 with its tagged
// fields; prevProducerID is the producer id before this change.
func value(m *meta, prevProducerID int64, level int16) []byte {
	v := kmsg.NewTxnMetadataValue()
	v.ProducerID, v.ProducerEpoch = m.producerID, m.epoch
	if level >= 1 {
		v.Version, v.PreviousProducerID, v.NextProducerID, v.ClientTransactionVersion = 1, prevProducerID, m.nextProducerID, m.tv
	}
	v.TimeoutMillis, v.State = m.timeoutMs, m.state.kmsgState()
	v.LastUpdateTimestamp, v.StartTimestamp = m.updated, m.start
	if m.state != Empty {
		v.Topics = []kmsg.TxnMetadataValueTopic{}
		for _, tp := range m.sortedPartitions() {
			n := len(v.Topics)
			if n == 0 || v.Topics[n-1].Topic != tp.Topic {
				v.Topics = append(v.Topics, kmsg.TxnMetadataValueTopic{Topic: tp.Topic})
				n++
			}
			v.Topics[n-1].Partitions = append(v.Topics[n-1].Partitions, tp.Partition)
		}
	}
	return v.AppendTo(nil)
}

// decode rebuilds a transactional id's state from its key and value;
// ok is false for a record that is not a transaction's (unknown key
// version) or does not decode. A nil meta with ok is a tombstone.
func decode(k, v []byte) (id string, m *meta, ok bool) {
	if len(k) < 2 || binary.BigEndian.Uint16(k) != keyVersion {
		return "", nil, false
	}
	var kk kmsg.TxnMetadataKey
	if kk.ReadFrom(k) != nil {
		return "", nil, false
	}
	if v == nil {
		return kk.TransactionalID, nil, true
	}
	var vv kmsg.TxnMetadataValue
	if vv.ReadFrom(v) != nil || vv.Version > 1 || vv.State < 0 || int(vv.State) >= len(stateNames) {
		return "", nil, false
	}
	m = &meta{id: kk.TransactionalID, producerID: vv.ProducerID, lastProducerID: -1, epoch: vv.ProducerEpoch,
		lastEpoch: noEpoch, timeoutMs: vv.TimeoutMillis, state: State(vv.State),
		partitions: map[TopicPartition]struct{}{}, start: vv.StartTimestamp, updated: vv.LastUpdateTimestamp,
		tv: vv.ClientTransactionVersion, nextProducerID: vv.NextProducerID}
	if vv.Version == 0 {
		m.nextProducerID = -1
	}
	if vv.Version >= 1 && vv.PreviousProducerID >= 0 && vv.PreviousProducerID != vv.ProducerID {
		m.lastProducerID = vv.PreviousProducerID // rotated by this change: a retry naming it is not fenced
	}
	for _, t := range vv.Topics {
		for _, p := range t.Partitions {
			m.partitions[TopicPartition{t.Topic, p}] = struct{}{}
		}
	}
	return kk.TransactionalID, m, true
}

// buildBatch makes one uncompressed v2 batch holding a record, as
// Kafka's coordinator writes them (no producer id, CreateTime). A nil
// value is a tombstone.
func buildBatch(k, v []byte, now time.Time) ([]byte, error) {
	b := record.NewBatchBuilder(record.CompressionNone)
	b.Append(record.Record{Key: k, Value: v, Timestamp: now.UnixMilli()})
	out, err := b.Build()
	if err != nil {
		return nil, fmt.Errorf("build %s batch: %w", Topic, err)
	}
	return out, nil
}
