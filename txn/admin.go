package txn

import (
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// Description is DescribeTransactions' answer for one transactional id.
type Description struct {
	Code           int16
	State          State
	TimeoutMs      int32
	StartTimestamp int64 // ms; -1 when no transaction is open
	ProducerID     int64
	Epoch          int16
	Partitions     []TopicPartition
}

// Describe is Kafka's handleDescribeTransactions for one id:
// TRANSACTIONAL_ID_NOT_FOUND if the id is unknown here.
func (c *Coordinator) Describe(id string) Description {
	if code := c.check(id); code != 0 {
		return Description{Code: code, ProducerID: -1, Epoch: -1, StartTimestamp: -1}
	}
	m := c.txns[id]
	if m == nil {
		return Description{Code: kerr.TransactionalIDNotFound.Code, ProducerID: -1, Epoch: -1, StartTimestamp: -1}
	}
	return Description{State: m.state, TimeoutMs: m.timeoutMs, StartTimestamp: m.start,
		ProducerID: m.producerID, Epoch: m.epoch, Partitions: m.sortedPartitions()}
}

// ListFilter selects transactions for ListTransactions; an empty field
// selects all.
type ListFilter struct {
	States      []State
	ProducerIDs []int64
	// MinDuration keeps those whose transaction started at least this
	// long ago (KIP-994, v1+); 0 or less keeps all.
	MinDuration time.Duration
	// Match keeps the ids it accepts (the v2+ id pattern); nil keeps all.
	Match func(string) bool
}

// Listing is one transactional id in ListTransactions.
type Listing struct {
	TransactionalID string
	ProducerID      int64
	State           State
}

// List is Kafka's listTransactionStates for this partition, in id
// order: COORDINATOR_LOAD_IN_PROGRESS while loading, nothing if the
// partition is not served here.
func (c *Coordinator) List(now time.Time, f ListFilter) ([]Listing, int16) {
	switch c.status {
	case loading:
		return nil, kerr.CoordinatorLoadInProgress.Code
	case active:
	default:
		return nil, 0
	}
	var out []Listing
	for _, id := range c.sortedIDs() {
		m := c.txns[id]
		if f.keeps(m, now) {
			out = append(out, Listing{TransactionalID: id, ProducerID: m.producerID, State: m.state})
		}
	}
	return out, 0
}

func (f ListFilter) keeps(m *meta, now time.Time) bool {
	switch {
	case len(f.States) > 0 && !slices.Contains(f.States, m.state):
		return false
	case len(f.ProducerIDs) > 0 && !slices.Contains(f.ProducerIDs, m.producerID):
		return false
	case f.MinDuration > 0 && now.UnixMilli()-m.start < f.MinDuration.Milliseconds():
		return false
	case f.Match != nil && !f.Match(m.id):
		return false
	}
	return true
}
