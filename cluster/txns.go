package cluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/varve/varve/group"
	"github.com/varve/varve/metadata"
	"github.com/varve/varve/txn"
)

// The transaction coordinator's wiring, the twin of the group
// coordinator's (groups.go): one txn.Coordinator per partition of
// __transaction_state, each behind its own mutex, one timer goroutine
// that calls Tick when a deadline is due, a loader goroutine per
// partition this node comes to lead, and one goroutine per transaction
// whose markers are being written (txn_markers.go). The coordinators
// write through the partitions' own append path (AppendAsLeader).

type txnCoordinator struct {
	b       *Broker
	shards  []*txnShard
	markers markerWriter
	// verifier asks other nodes' coordinators about transactional
	// produces (KIP-890 part 1, txn_verify_remote.go).
	verifier *txnVerifier
	// adder asks other nodes' coordinators to add a partition to a
	// transaction for a produce v12 or a TxnOffsetCommit v5 (KIP-890
	// part 2, txn_add.go).
	adder *txnVerifier
	// waiters are the requests held until a transaction completes
	// (txn_hold.go).
	waiters txnWaiters

	create sync.Mutex // serialises creating __transaction_state

	timer *coordinatorTimer // coordinator_timer.go
	stop  chan struct{}
	done  sync.WaitGroup
}

// txnShard is one partition's coordinator and the mutex serialising
// every call into it.
type txnShard struct {
	mu sync.Mutex
	c  *txn.Coordinator
}

func (b *Broker) newTxnCoordinator() *txnCoordinator {
	n := b.cfg.TransactionStateLogNumPartitions
	if t, ok := b.meta.image().Topic(txn.Topic); ok {
		n = len(t.Partitions) // the topic as it exists decides where ids live
	}
	tc := &txnCoordinator{b: b, timer: newCoordinatorTimer(), stop: make(chan struct{})}
	tc.markers = brokerMarkerWriter{b: b}
	tc.verifier = newTxnVerifier(b.sendVerify, b.cfg.ReplicaSocketTimeoutMs.Duration())
	tc.adder = newTxnVerifier(b.sendVerify, b.cfg.ReplicaSocketTimeoutMs.Duration())
	tc.adder.add = true
	b.SetTxnProduceCheck(b.verifyTxnProduce) // txn_verify.go
	b.SetTxnMarkerWritten(func(topic string, p int32, pid int64, _ int16, commit bool) {
		if topic == group.OffsetsTopic { // the offsets a transaction committed there
			b.completeGroupTxn(p, pid, commit)
		}
	})
	if b.ctrl != nil {
		b.repl.mu.Lock()
		prev := b.repl.listener // the group coordinator's
		b.repl.listener = func(topic string, p int32, leader bool, epoch int32) {
			if prev != nil {
				prev(topic, p, leader, epoch)
			}
			tc.onLeadership(topic, p, leader, epoch)
		}
		b.repl.mu.Unlock()
	}
	for p := 0; p < n; p++ {
		tc.shards = append(tc.shards, &txnShard{c: tc.newCoordinator(int32(p))})
	}
	return tc
}

func (tc *txnCoordinator) newCoordinator(p int32) *txn.Coordinator {
	cfg := txn.Config{
		MaxTimeout:   tc.b.cfg.TransactionMaxTimeoutMs.Duration(),
		IDExpiration: time.Duration(tc.b.cfg.TransactionalIDExpirationMs) * time.Millisecond,
		Logger:       tc.b.log.With("component", "transaction-coordinator"),
	}
	return txn.New(p, cfg, txnStateLog{b: tc.b, partition: p}, tc.b.nextProducerID, txnMarkers{tc: tc, partition: p})
}

// txnStateLog appends a coordinator's records to its partition.
type txnStateLog struct {
	b         *Broker
	partition int32
}

func (l txnStateLog) Append(batch []byte) error {
	part, err := l.b.partition(txn.Topic, l.partition)
	if err == nil {
		_, err = part.AppendAsLeader(batch)
	}
	if err != nil {
		return fmt.Errorf("append to %s-%d: %w: %w", txn.Topic, l.partition, kerr.ErrorForCode(errorCode(err)), err)
	}
	return nil
}

// start loads the partitions of __transaction_state if it exists (on a
// single node; in a cluster onLeadership loads those this node leads)
// and starts the timer goroutine.
func (tc *txnCoordinator) start() {
	tc.done.Add(1)
	go tc.timerLoop()
	if tc.b.ctrl != nil {
		return
	}
	if _, ok := tc.b.meta.image().Topic(txn.Topic); !ok {
		return // created on the first FindCoordinator for a transaction, as Kafka does
	}
	for p := range tc.shards {
		tc.beginLoad(int32(p), tc.leaderEpoch(int32(p)))
	}
}

// leaderEpoch is partition p's leader epoch here, the coordinator epoch
// of a single node's coordinators (0 if the partition is missing).
func (tc *txnCoordinator) leaderEpoch(p int32) int32 {
	part, err := tc.b.partition(txn.Topic, p)
	if err != nil {
		return 0
	}
	return part.LeaderEpoch()
}

// beginLoad starts loading partition p as coordinator epoch epoch, in
// the background.
func (tc *txnCoordinator) beginLoad(p int32, epoch int32) {
	s := tc.shards[p]
	s.do(func(c *txn.Coordinator) { c.BeginLoad(epoch) })
	tc.done.Add(1)
	go func() {
		defer tc.done.Done()
		if err := tc.load(s, p); err != nil && !tc.stopping() {
			tc.b.log.Error("loading a __transaction_state partition failed; its transactions are unavailable",
				"partition", p, "epoch", epoch, "err", err)
		}
	}()
}

// load replays one partition into its coordinator, chunk by chunk; the
// coordinator answers COORDINATOR_LOAD_IN_PROGRESS meanwhile.
func (tc *txnCoordinator) load(s *txnShard, p int32) error {
	part, err := tc.b.partition(txn.Topic, p)
	if err != nil {
		return fmt.Errorf("%s-%d: %w", txn.Topic, p, err)
	}
	start := time.Now()
	end := part.EndOffset() // the log end, as for __consumer_offsets (groups.go)
	for off := part.StartOffset(); off < end; {
		if tc.stopping() {
			return nil
		}
		buf, err := part.ReadBytes(off, offsetsLoadBufferBytes)
		if err != nil {
			return fmt.Errorf("read %s-%d at %d: %w", txn.Topic, p, off, err)
		}
		next := off
		s.do(func(c *txn.Coordinator) { next, err = c.Load(buf) })
		if err != nil {
			return err
		}
		if next <= off || len(buf) == 0 {
			break
		}
		off = next
	}
	var rep txn.LoadReport
	s.do(func(c *txn.Coordinator) { rep = c.FinishLoad(time.Now()) })
	tc.kick(s)
	level := slog.LevelDebug
	if rep.Records > 0 {
		level = slog.LevelInfo
	}
	tc.b.log.Log(context.Background(), level, "loaded transaction coordinator partition", "partition", p,
		"transactions", rep.Transactions, "pending", rep.Pending, "records", rep.Records, "skipped", rep.Skipped,
		"took", time.Since(start))
	return nil
}

// ensureTopic creates __transaction_state (Kafka's
// TransactionStateManager.transactionTopicConfigs) if it does not exist
// yet, and on a single node makes this node the coordinator of its
// partitions.
func (tc *txnCoordinator) ensureTopic() error {
	tc.create.Lock()
	defer tc.create.Unlock()
	if _, ok := tc.b.meta.image().Topic(txn.Topic); ok {
		return nil
	}
	// transaction.state.log.replication.factor and .min.isr are capped at
	// the live brokers (one, on a single node), as for __consumer_offsets.
	rf := int16(1)
	if tc.b.ctrl != nil {
		rf = int16(min(tc.b.cfg.TransactionStateLogReplicationFactor, max(liveBrokers(tc.b.meta.image()), 1)))
	}
	configs := map[string]string{
		"cleanup.policy":                 "compact",
		"compression.type":               "uncompressed",
		"unclean.leader.election.enable": "false",
		"segment.bytes":                  strconv.Itoa(tc.b.cfg.TransactionStateLogSegmentBytes),
		"min.insync.replicas":            strconv.Itoa(min(tc.b.cfg.TransactionStateLogMinIsr, int(rf))),
	}
	_, err := tc.b.createTopic(topicSpec{name: txn.Topic, partitions: int32(len(tc.shards)), rf: rf, configs: configs})
	if err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
		return err
	}
	if tc.b.ctrl != nil {
		return nil // onLeadership loads the partitions this node leads
	}
	now := time.Now()
	for _, s := range tc.shards {
		s.do(func(c *txn.Coordinator) {
			if !c.Active() {
				c.BeginLoad(tc.leaderEpoch(c.Partition()))
				c.FinishLoad(now)
			}
		})
		tc.kick(s)
	}
	return nil
}

// onLeadership makes this node the coordinator of exactly the
// __transaction_state partitions it leads (Kafka's
// TransactionCoordinator.onElection and onResignation), with the
// partition's leader epoch as coordinator epoch.
func (tc *txnCoordinator) onLeadership(topic string, p int32, isLeader bool, epoch int32) {
	if topic != txn.Topic || int(p) >= len(tc.shards) || tc.stopping() {
		return
	}
	if isLeader {
		tc.beginLoad(p, epoch)
		return
	}
	s := tc.shards[p]
	s.do(func(c *txn.Coordinator) {
		c.Stop()
		s.c = tc.newCoordinator(p)
	})
	tc.waiters.wakeAll() // held requests are answered NOT_COORDINATOR
	tc.b.log.Info("no longer the transaction coordinator of a __transaction_state partition", "partition", p)
}

// shutdown refuses new requests and stops the goroutines.
func (tc *txnCoordinator) shutdown() {
	if tc.stopping() {
		return
	}
	close(tc.stop)
	for _, s := range tc.shards {
		s.do(func(c *txn.Coordinator) { c.Stop() })
	}
	tc.waiters.wakeAll()
	tc.done.Wait()
}

func (tc *txnCoordinator) stopping() bool {
	select {
	case <-tc.stop:
		return true
	default:
		return false
	}
}

// do runs fn on the coordinator of transactionalID's partition, which
// is told the cluster's transaction.version first, and wakes the timer
// goroutine if fn brought a deadline forward.
func (tc *txnCoordinator) do(transactionalID string, fn func(c *txn.Coordinator)) {
	s := tc.shards[txn.PartitionFor(transactionalID, len(tc.shards))]
	level := tc.b.transactionVersion()
	s.do(func(c *txn.Coordinator) {
		c.SetTransactionVersion(level)
		fn(c)
	})
	tc.kick(s)
}

// transactionVersion is the cluster's finalized transaction.version.
func (b *Broker) transactionVersion() int16 {
	return b.meta.image().FeatureLevel(metadata.TransactionVersionFeature)
}

func (s *txnShard) do(fn func(c *txn.Coordinator)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	fn(s.c)
}

// kick wakes the timer goroutine when s's next deadline is earlier than
// what it sleeps until.
func (tc *txnCoordinator) kick(s *txnShard) {
	var next time.Time
	var ok bool
	s.do(func(c *txn.Coordinator) { next, ok = c.NextDeadline() })
	tc.timer.kick(next, ok)
}

// timerLoop ticks the partitions as their deadlines come (as
// groupCoordinator.timerLoop).
func (tc *txnCoordinator) timerLoop() {
	defer tc.done.Done()
	tc.timer.loop(tc.stop, tc.tickDue)
}

// tickDue ticks every partition with a deadline at or before now and
// returns the earliest deadline left.
func (tc *txnCoordinator) tickDue(now time.Time) time.Time {
	var earliest time.Time
	level := tc.b.transactionVersion()
	for _, s := range tc.shards {
		s.do(func(c *txn.Coordinator) {
			if next, ok := c.NextDeadline(); ok && !next.After(now) {
				c.SetTransactionVersion(level)
				c.Tick(now)
				tc.waiters.wakeAll() // a retried Complete record may have ended a transaction
			}
			if next, ok := c.NextDeadline(); ok && (earliest.IsZero() || next.Before(earliest)) {
				earliest = next
			}
		})
	}
	return earliest
}
