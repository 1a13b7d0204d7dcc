package cluster

import (
	"errors"
	"fmt"
	"math"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/varve/varve/config"
	vnet "github.com/varve/varve/net"
	"github.com/varve/varve/record"
)

// What Produce checks before anything is appended (Kafka's KafkaApis,
// ReplicaManager.appendToLocalLog and LogValidator, for a client):
//
//  1. an internal topic takes appends only from the admin client id
//     (INVALID_TOPIC_EXCEPTION): a forged __consumer_offsets commit would
//     rewind a group when the coordinator loads it;
//  2. every record of every batch decodes and keeps the topic's rules
//     (record.ValidateProduced): CORRUPT_MESSAGE, INVALID_RECORD,
//     INVALID_TIMESTAMP or MESSAGE_TOO_LARGE, with Kafka's per-record
//     RecordErrors (Produce v8+) for keys and timestamps;
//  3. transactional batches pass the broker's TxnProduceCheck, one
//     function that a transaction coordinator's side replaces
//     (Broker.SetTxnProduceCheck) with KIP-890's verification that the
//     partition belongs to the producer's ongoing transaction. Until
//     then the check is RefuseTransactionalWithoutID: a transactional
//     batch needs the request's transactional id (Kafka:
//     TRANSACTIONAL_ID_AUTHORIZATION_FAILED).

// TxnProduceCheck decides whether a partition's records, already
// validated, may be appended: transactionalID is the request's (nil
// when it has none). It returns nil, or an error carrying a Kafka error
// code (kerr) for the partition.
type TxnProduceCheck func(transactionalID *string, topic string, partition int32, records []byte) error

// RefuseTransactionalWithoutID is the TxnProduceCheck a broker starts
// with: transactional batches need a transactional id.
func RefuseTransactionalWithoutID(transactionalID *string, _ string, _ int32, records []byte) error {
	if transactionalID == nil && hasTransactionalBatch(records) {
		return fmt.Errorf("%w: transactional records without a transactional id", kerr.TransactionalIDAuthorizationFailed)
	}
	return nil
}

// SetTxnProduceCheck replaces the check transactional produces pass;
// nil restores RefuseTransactionalWithoutID. Safe while serving.
func (b *Broker) SetTxnProduceCheck(f TxnProduceCheck) {
	if f == nil {
		f = RefuseTransactionalWithoutID
	}
	b.txnProduceCheck.Store(&f)
}

// txnCheck is the broker's current TxnProduceCheck.
func (b *Broker) txnCheck() TxnProduceCheck {
	if f := b.txnProduceCheck.Load(); f != nil {
		return *f
	}
	return RefuseTransactionalWithoutID
}

// produceGate is what the request says about every partition it names.
type produceGate struct {
	internalAllowed bool
	transactionalID *string
	txnCheck        TxnProduceCheck
}

func (b *Broker) newProduceGate(r *vnet.Request, req *kmsg.ProduceRequest) produceGate {
	return produceGate{internalAllowed: r.ClientID == adminClientID, transactionalID: req.TransactionID, txnCheck: b.txnCheckFor(r.Version)}
}

// checkProduced validates one partition's records and, when they are
// refused, sets sp's error fields and returns false.
func (b *Broker) checkProduced(g produceGate, topic string, tc config.Topic, records []byte, sp *kmsg.ProduceResponseTopicPartition) bool {
	err := g.check(topic, sp.Partition, tc, records)
	if err == nil {
		return true
	}
	sp.ErrorCode = errorCode(err)
	msg := err.Error()
	sp.ErrorMessage = &msg
	var rej *record.RecordsRejectedError
	if errors.As(err, &rej) {
		for _, r := range rej.Records {
			er := kmsg.NewProduceResponseTopicPartitionErrorRecord()
			m := r.Message
			er.RelativeOffset, er.ErrorMessage = r.Index, &m
			sp.ErrorRecords = append(sp.ErrorRecords, er)
		}
	}
	b.log.Debug("produce refused", "topic", topic, "partition", sp.Partition, "err", err)
	return false
}

func (g produceGate) check(topic string, partition int32, tc config.Topic, records []byte) error {
	if isInternalTopic(topic) && !g.internalAllowed {
		return fmt.Errorf("%w: cannot append to internal topic %s", kerr.InvalidTopicException, topic)
	}
	if skipRecordValidation.Load() {
		return nil
	}
	if err := record.ValidateProduced(records, produceRules(tc)); err != nil {
		return err
	}
	return g.txnCheck(g.transactionalID, topic, partition, records)
}

// produceRules are the topic's rules for record.ValidateProduced.
func produceRules(tc config.Topic) record.ProduceRules {
	_, compacted := tc.CleanupPolicy()
	return record.ProduceRules{
		MaxBatchBytes:   tc.MaxMessageBytes(),
		Compacted:       compacted,
		CheckTimestamps: tc.MessageTimestampType() == record.TimestampCreateTime,
		Now:             time.Now().UnixMilli(),
		BeforeMaxMs:     millis(tc.MessageTimestampBeforeMax()),
		AfterMaxMs:      millis(tc.MessageTimestampAfterMax()),
	}
}

// millis turns a bound back into milliseconds, keeping Long.MAX (the
// saturated Duration) unbounded.
func millis(d time.Duration) int64 {
	if d == math.MaxInt64 {
		return math.MaxInt64
	}
	return d.Milliseconds()
}

// hasTransactionalBatch reports whether any batch of records, already
// validated, has the transactional bit.
func hasTransactionalBatch(records []byte) bool {
	for p := 0; p < len(records); {
		h, n, err := record.NextBatch(records[p:], 0)
		if err != nil {
			return false
		}
		if h.IsTransactional() {
			return true
		}
		p += n
	}
	return false
}

// skipRecordValidation is set only by the benchmark that measures what
// validation costs; Kafka has no switch for it, and neither has Varve.
var skipRecordValidation atomic.Bool
