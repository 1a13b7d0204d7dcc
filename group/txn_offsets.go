package group

import (
	"encoding/binary"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/varve/varve/record"
)

// Transactional offset commits (KIP-98 TxnOffsetCommit, Kafka's
// GroupMetadata.pendingTransactionalOffsetCommits): a transactional
// producer commits a group's offsets inside its transaction. They are
// written at once, in a transactional batch carrying the producer id and
// epoch, but stay pending, invisible to OffsetFetch, until the
// transaction's marker reaches this partition: CompleteTxn applies them
// on COMMIT and drops them on ABORT. A load does the same with the
// markers it finds in the log; transactions still open at its end stay
// pending.

// txnOffsets is the coordinator's transactional state.
type txnOffsets struct {
	// pending: producer id -> group -> the offsets committed in its
	// open transaction.
	pending map[int64]map[string]map[topicPartition]committed
	// seq: producer id -> the epoch and next sequence of the batches
	// this coordinator writes for it, so that the partition's producer
	// checks see an ordinary idempotent producer.
	seq map[int64]producerSeq
}

type producerSeq struct {
	epoch int16
	next  int32
}

func newTxnOffsets() txnOffsets {
	return txnOffsets{pending: map[int64]map[string]map[topicPartition]committed{}, seq: map[int64]producerSeq{}}
}

// TxnCommitOffsets handles TxnOffsetCommit (Kafka's
// handleTxnCommitOffsets): partitions unknown or with metadata over
// offset.metadata.max.bytes get their error; the rest are written as one
// transactional batch and kept pending. A committer naming a member or
// generation (v3+, KIP-447) must be that member of this generation; an
// anonymous one may commit to any group. A group that does not exist is
// created, Empty.
func (c *Coordinator) TxnCommitOffsets(now time.Time, req *kmsg.TxnOffsetCommitRequest) *kmsg.TxnOffsetCommitResponse {
	c.now = now
	resp := req.ResponseKind().(*kmsg.TxnOffsetCommitResponse)
	codes := map[topicPartition]int16{}
	var valid []topicPartition
	commits := map[topicPartition]committed{}
	for _, t := range req.Topics {
		for _, p := range t.Partitions {
			tp := topicPartition{t.Topic, p.Partition}
			cm := committed{offset: p.Offset, leaderEpoch: max(p.LeaderEpoch, -1), commitTimestamp: now.UnixMilli(), expireTimestamp: -1}
			if p.Metadata != nil {
				cm.metadata = *p.Metadata
			}
			switch {
			case c.cfg.KnownPartition != nil && !c.cfg.KnownPartition(t.Topic, p.Partition):
				codes[tp] = kerr.UnknownTopicOrPartition.Code
			case len(cm.metadata) > c.cfg.OffsetMetadataMaxBytes:
				codes[tp] = kerr.OffsetMetadataTooLarge.Code
			default:
				valid = append(valid, tp)
				commits[tp] = cm
			}
		}
	}
	code := c.txnCommit(req, valid, commits)
	for _, tp := range valid {
		codes[tp] = code
	}
	for _, t := range req.Topics {
		rt := kmsg.NewTxnOffsetCommitResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewTxnOffsetCommitResponseTopicPartition()
			rp.Partition, rp.ErrorCode = p.Partition, codes[topicPartition{t.Topic, p.Partition}]
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

func (c *Coordinator) txnCommit(req *kmsg.TxnOffsetCommitRequest, valid []topicPartition, commits map[topicPartition]committed) int16 {
	if len(valid) == 0 {
		return 0
	}
	if code := c.check(req.Group, kmsg.TxnOffsetCommit); code != 0 {
		return code
	}
	g := c.groups[req.Group]
	if g == nil {
		g = newGroup(req.Group, c.now, c.bounds)
		c.groups[req.Group] = g
	}
	instanceID := ""
	if req.InstanceID != nil {
		instanceID = *req.InstanceID
	}
	switch {
	case g.is(Dead):
		return kerr.CoordinatorNotAvailable.Code
	case g.cons != nil && (req.Generation >= 0 || req.MemberID != ""):
		if code := validateConsumerTxnCommit(g, req.MemberID, req.Generation); code != 0 { // consumer_offsets.go
			return code
		}
	case req.Generation >= 0 || req.MemberID != "" || instanceID != "":
		if code := validateCommit(g, req.Generation, req.MemberID, instanceID); code != 0 {
			return code
		}
	}
	return c.storeTxnOffsets(g, req.ProducerID, req.ProducerEpoch, valid, commits)
}

// storeTxnOffsets writes the commits as one transactional batch of the
// producer and keeps them pending once written.
func (c *Coordinator) storeTxnOffsets(g *group, pid int64, epoch int16, valid []topicPartition, commits map[topicPartition]committed) int16 {
	entries := make([]entry, 0, len(valid))
	for _, tp := range valid {
		entries = append(entries, entry{key: offsetKey(g.id, tp), value: offsetValue(commits[tp])})
	}
	seq := c.txn.seq[pid]
	if seq.epoch != epoch {
		seq = producerSeq{epoch: epoch}
	}
	batch, err := buildTxnBatch(entries, c.now, pid, epoch, seq.next)
	if err == nil {
		err = c.log.Append(batch)
	}
	if err != nil {
		c.cfg.Logger.Warn("writing transactional offsets to __consumer_offsets failed", "partition", c.partition, "err", err)
		return appendCode(err, true)
	}
	c.txn.seq[pid] = producerSeq{epoch: epoch, next: seq.next + int32(len(entries))}
	byGroup := c.txn.pending[pid]
	if byGroup == nil {
		byGroup = map[string]map[topicPartition]committed{}
		c.txn.pending[pid] = byGroup
	}
	if byGroup[g.id] == nil {
		byGroup[g.id] = map[topicPartition]committed{}
	}
	for _, tp := range valid {
		byGroup[g.id][tp] = commits[tp]
	}
	return 0
}

// CompleteTxn applies (commit) or drops (abort) the offsets producerID
// committed in its transaction, once the transaction's marker is written
// to this partition (Kafka's handleTxnCompletion). A producer with
// nothing pending here is a no-op, so a repeated marker is harmless.
func (c *Coordinator) CompleteTxn(now time.Time, producerID int64, commit bool) {
	c.now = now
	if c.status != active {
		return
	}
	applyTxn(c.txn.pending, producerID, commit, func(id string) map[topicPartition]committed {
		g := c.groups[id]
		if g == nil || g.is(Dead) {
			return nil
		}
		return g.offsets
	})
}

// applyTxn moves producerID's pending offsets into the groups' offsets
// (commit) or drops them (abort).
func applyTxn(pending map[int64]map[string]map[topicPartition]committed, producerID int64, commit bool,
	offsetsOf func(group string) map[topicPartition]committed) {
	if commit {
		for id, offs := range pending[producerID] {
			if dst := offsetsOf(id); dst != nil {
				for tp, cm := range offs {
					dst[tp] = cm
				}
			}
		}
	}
	delete(pending, producerID)
}

// unstable reports whether groupID has a transactional offset of tp not
// yet committed or aborted (OffsetFetch's require_stable, KIP-447).
func (c *Coordinator) unstable(groupID string, tp topicPartition) bool {
	for _, byGroup := range c.txn.pending {
		if _, ok := byGroup[groupID][tp]; ok {
			return true
		}
	}
	return false
}

// buildTxnBatch makes one uncompressed transactional v2 batch of the
// producer's offset commits.
func buildTxnBatch(entries []entry, now time.Time, pid int64, epoch int16, seq int32) ([]byte, error) {
	b := record.NewBatchBuilder(record.CompressionNone)
	b.SetProducer(pid, epoch, seq)
	b.SetTransactional(true)
	for _, e := range entries {
		b.Append(record.Record{Key: e.key, Value: e.value, Timestamp: now.UnixMilli()})
	}
	out, err := b.Build()
	if err != nil {
		return nil, fmt.Errorf("build transactional __consumer_offsets batch: %w", err)
	}
	return out, nil
}

// controlCommit reads a control batch's marker: true for COMMIT (Kafka's
// ControlRecordType 1), false for ABORT (0); ok is false when the batch
// holds no readable marker (compaction may empty it).
func controlCommit(recs []record.Record) (commit, ok bool) {
	if len(recs) == 0 || len(recs[0].Key) < 4 {
		return false, false
	}
	switch binary.BigEndian.Uint16(recs[0].Key[2:]) {
	case 0:
		return false, true
	case 1:
		return true, true
	}
	return false, false
}
