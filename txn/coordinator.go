package txn

import (
	"errors"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// status is whether a coordinator serves its partition's transactions.
type status int8

const (
	notCoordinator status = iota // not (yet) this node's: NOT_COORDINATOR
	loading                      // replaying the partition: COORDINATOR_LOAD_IN_PROGRESS
	active                       // serving
	stopped                      // shut down: NOT_COORDINATOR
)

// Coordinator is the transaction coordinator of one __transaction_state
// partition: every transactional id PartitionFor maps there (Kafka's
// TransactionCoordinator and TransactionStateManager, for one
// partition). It is a deterministic state machine: no goroutines, no
// clock, no locks; see the package doc.
type Coordinator struct {
	partition int32
	cfg       Config
	log       Log
	ids       ProducerIDs
	markers   Markers

	status status
	epoch  int32 // coordinator epoch: the partition's leader epoch when loaded
	level  int16 // the cluster's finalized transaction.version
	now    time.Time
	txns   map[string]*meta
	load   *loader

	nextAbortCheck, nextExpireCheck time.Time
	// retry holds the ids whose Complete record failed to be written,
	// tried again at retryAt.
	retry   map[string]bool
	retryAt time.Time
}

// New returns the coordinator of partition, which does not serve until
// it is loaded (BeginLoad, Load, FinishLoad).
func New(partition int32, cfg Config, log Log, ids ProducerIDs, markers Markers) *Coordinator {
	return &Coordinator{partition: partition, cfg: cfg.withDefaults(), log: log, ids: ids, markers: markers,
		txns: map[string]*meta{}, retry: map[string]bool{}}
}

// Partition is the __transaction_state partition this coordinator owns.
func (c *Coordinator) Partition() int32 { return c.partition }

// Active reports whether the coordinator serves requests.
func (c *Coordinator) Active() bool { return c.status == active }

// Epoch is the coordinator epoch its markers carry.
func (c *Coordinator) Epoch() int32 { return c.epoch }

// SetTransactionVersion tells the coordinator the cluster's finalized
// transaction.version (Kafka's TransactionStateManager.transactionVersionLevel):
// it chooses the format of the records written (TransactionLogValue
// version 1 from level 1) and, at level 2, the version of the aborts the
// coordinator starts itself (a fenced or timed-out transaction bumps the
// epoch once more, as KIP-890 part 2's EndTxn does). The version of a
// client's own transaction follows its requests' versions.
func (c *Coordinator) SetTransactionVersion(level int16) { c.level = level }

// Stop unloads every transaction (Kafka's removeTransactionsForTxnTopicPartition):
// later requests get NOT_COORDINATOR, and markers still being written
// complete elsewhere, by the coordinator that loads the partition next.
func (c *Coordinator) Stop() {
	c.txns, c.load, c.retry = map[string]*meta{}, nil, map[string]bool{}
	c.status = stopped
}

// check is whether the coordinator may serve transactionalID now: the
// error code for the client, 0 if it may.
func (c *Coordinator) check(transactionalID string) int16 {
	if transactionalID == "" {
		return kerr.InvalidRequest.Code
	}
	switch c.status {
	case loading:
		return kerr.CoordinatorLoadInProgress.Code
	case active:
		return 0
	}
	return kerr.NotCoordinator.Code
}

// NextDeadline is when Tick next has something to do.
func (c *Coordinator) NextDeadline() (time.Time, bool) {
	if c.status != active {
		return time.Time{}, false
	}
	next := minTime(c.nextAbortCheck, c.nextExpireCheck)
	if len(c.retry) > 0 {
		next = minTime(next, c.retryAt)
	}
	return next, true
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// Tick runs what is due at now: the abort of transactions past their
// timeout, the removal of expired ids, and retries of Complete records
// that failed to be written.
func (c *Coordinator) Tick(now time.Time) {
	c.now = now
	if c.status != active {
		return
	}
	if len(c.retry) > 0 && !now.Before(c.retryAt) {
		c.retryComplete()
	}
	if !now.Before(c.nextAbortCheck) {
		c.abortTimedOut()
		c.nextAbortCheck = now.Add(c.cfg.AbortCheckInterval)
	}
	if !now.Before(c.nextExpireCheck) {
		c.removeExpired()
		c.nextExpireCheck = now.Add(c.cfg.ExpireCheckInterval)
	}
}

// write makes next, a changed copy of the id's state, durable and then
// current: the state changes only once its record is in the log (a
// failed write leaves it as it was). It returns the client's error code.
func (c *Coordinator) write(next *meta) int16 {
	prev := next.producerID
	if cur := c.txns[next.id]; cur != nil {
		prev = cur.producerID
	}
	if cur := c.txns[next.id]; cur != nil && !canTransition(cur.state, next.state) {
		c.cfg.Logger.Error("transaction state machine: forbidden transition", "partition", c.partition,
			"transactional_id", next.id, "from", cur.state, "to", next.state)
		return kerr.UnknownServerError.Code
	}
	next.updated = c.now.UnixMilli()
	var v []byte
	if next.state != Dead {
		v = value(next, prev, c.level)
	}
	batch, err := buildBatch(key(next.id), v, c.now)
	if err == nil {
		err = c.log.Append(batch)
	}
	if err != nil {
		c.cfg.Logger.Warn("writing to "+Topic+" failed", "partition", c.partition, "transactional_id", next.id, "err", err)
		return appendCode(err)
	}
	if next.state == Dead {
		delete(c.txns, next.id)
	} else {
		c.txns[next.id] = next
	}
	return 0
}

// appendCode maps a failed write to what the client is told, as Kafka's
// TransactionStateManager.appendTransactionToLog does: a missing
// partition or too few replicas means try again later, a lost
// leadership or failed disk means find the coordinator again, a
// too-large record is the server's fault. An error without a Kafka code
// is a storage failure.
func appendCode(err error) int16 {
	var ke *kerr.Error
	if !errors.As(err, &ke) {
		return kerr.NotCoordinator.Code
	}
	switch ke {
	case kerr.UnknownTopicOrPartition, kerr.NotEnoughReplicas, kerr.NotEnoughReplicasAfterAppend, kerr.RequestTimedOut:
		return kerr.CoordinatorNotAvailable.Code
	case kerr.NotLeaderForPartition, kerr.KafkaStorageError:
		return kerr.NotCoordinator.Code
	case kerr.MessageTooLarge, kerr.RecordListTooLarge:
		return kerr.UnknownServerError.Code
	}
	return ke.Code
}

// sortedIDs lists the transactional ids in name order, for
// deterministic iteration.
func (c *Coordinator) sortedIDs() []string {
	ids := make([]string, 0, len(c.txns))
	for id := range c.txns {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}
