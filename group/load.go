package group

import (
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/varve/varve/record"
)

// Loading rebuilds a partition's groups from its records (Kafka's
// loadGroupsAndOffsets): the last record of each key wins and a
// tombstone removes its key, exactly what compaction keeps. A group with
// members comes back Stable in its stored generation, with each
// member's session timeout restarted, so that members that kept running
// carry on; one without comes back Empty. Offsets whose group has no
// metadata record belong to an Empty group without a protocol type (a
// simple consumer's).

// loader accumulates a partition's records during a load.
type loader struct {
	offsets map[string]map[topicPartition]committed
	groups  map[string]*kmsg.GroupMetadataValue
	next    int64 // offset after the last batch read
	records int
	skipped int // records of other kinds (KIP-848) or undecodable
	txn     txnOffsets
	cgroups map[string]*cgLoad // KIP-848 consumer groups (consumer_load.go)
}

// LoadReport says what a load read.
type LoadReport struct {
	Records, Skipped, Groups, Offsets int
}

// BeginLoad drops whatever the coordinator holds and starts loading:
// requests get COORDINATOR_LOAD_IN_PROGRESS until FinishLoad.
func (c *Coordinator) BeginLoad() {
	c.Stop()
	c.status = loading
	c.load = &loader{offsets: map[string]map[topicPartition]committed{}, groups: map[string]*kmsg.GroupMetadataValue{},
		txn: newTxnOffsets()}
}

// Load replays buf, whole record batches as the partition's log holds
// them, and returns the offset after the last one. The offsets of a
// transactional batch stay pending until its producer's marker: a COMMIT
// applies them, an ABORT drops them (txn_offsets.go). A batch that fails
// its CRC is an error: the log's own recovery should have cut it.
func (c *Coordinator) Load(buf []byte) (int64, error) {
	ld := c.load
	if ld == nil {
		return 0, errors.New("group: Load without BeginLoad")
	}
	var recs []record.Record
	for pos := 0; pos < len(buf); {
		h, n, err := record.NextBatch(buf[pos:], len(buf)-pos)
		if err != nil {
			return ld.next, fmt.Errorf("__consumer_offsets-%d at byte %d: %w", c.partition, pos, err)
		}
		batch := buf[pos : pos+n]
		pos += n
		ld.next = h.NextOffset()
		if recs, err = record.DecodeBatch(batch, recs); err != nil {
			return ld.next, fmt.Errorf("__consumer_offsets-%d batch at offset %d: %w", c.partition, h.BaseOffset, err)
		}
		switch {
		case h.IsControl():
			ld.replayMarker(h, recs)
		case h.IsTransactional():
			ld.replayTxn(h, recs)
		default:
			for _, r := range recs {
				ld.replay(r.Key, r.Value)
			}
		}
	}
	return ld.next, nil
}

// replay applies one record.
func (ld *loader) replay(key, value []byte) {
	ld.records++
	v, ok := keyVersion(key)
	switch {
	case ok && (v == 0 || v == 1):
		if !ld.replayOffset(key, value) {
			ld.skipped++
		}
	case ok && v == 2:
		if !ld.replayGroup(key, value) {
			ld.skipped++
		}
	case ok && (v == cgMetadataKey || v == cgMemberKey || v == cgTargetMetadataKey || v == cgTargetMemberKey || v == cgCurrentKey || v == cgRegexKey):
		if !ld.replayConsumer(key, value) {
			ld.skipped++
		}
	default:
		ld.skipped++
	}
}

// replayMarker applies a transaction marker to the offsets its producer
// committed in the transaction.
func (ld *loader) replayMarker(h record.BatchHeader, recs []record.Record) {
	ld.records += len(recs)
	commit, ok := controlCommit(recs)
	if !ok {
		ld.skipped += len(recs)
		return
	}
	applyTxn(ld.txn.pending, h.ProducerID, commit, func(group string) map[topicPartition]committed {
		if ld.offsets[group] == nil {
			ld.offsets[group] = map[topicPartition]committed{}
		}
		return ld.offsets[group]
	})
}

// replayTxn keeps a transactional batch's offsets pending, and its
// producer's sequence for the next batch written.
func (ld *loader) replayTxn(h record.BatchHeader, recs []record.Record) {
	ld.txn.seq[h.ProducerID] = producerSeq{epoch: h.ProducerEpoch, next: h.BaseSequence + h.LastOffsetDelta + 1}
	for _, r := range recs {
		ld.records++
		v, ok := keyVersion(r.Key)
		if !ok || v > 1 {
			ld.skipped++
			continue
		}
		var k kmsg.OffsetCommitKey
		var val kmsg.OffsetCommitValue
		if k.ReadFrom(r.Key) != nil || r.Value == nil || val.ReadFrom(r.Value) != nil {
			ld.skipped++
			continue
		}
		byGroup := ld.txn.pending[h.ProducerID]
		if byGroup == nil {
			byGroup = map[string]map[topicPartition]committed{}
			ld.txn.pending[h.ProducerID] = byGroup
		}
		if byGroup[k.Group] == nil {
			byGroup[k.Group] = map[topicPartition]committed{}
		}
		byGroup[k.Group][topicPartition{k.Topic, k.Partition}] = committedFromValue(&val)
	}
}

func (ld *loader) replayOffset(key, value []byte) bool {
	var k kmsg.OffsetCommitKey
	if k.ReadFrom(key) != nil {
		return false
	}
	tp := topicPartition{k.Topic, k.Partition}
	if value == nil {
		delete(ld.offsets[k.Group], tp)
		return true
	}
	var v kmsg.OffsetCommitValue
	if v.ReadFrom(value) != nil {
		return false
	}
	if ld.offsets[k.Group] == nil {
		ld.offsets[k.Group] = map[topicPartition]committed{}
	}
	ld.offsets[k.Group][tp] = committedFromValue(&v)
	return true
}

func committedFromValue(v *kmsg.OffsetCommitValue) committed {
	cm := committed{offset: v.Offset, leaderEpoch: -1, metadata: v.Metadata,
		commitTimestamp: v.CommitTimestamp, expireTimestamp: -1}
	if v.Version >= 3 {
		cm.leaderEpoch = v.LeaderEpoch
	}
	if v.Version == 1 {
		cm.expireTimestamp = v.ExpireTimestamp
	}
	return cm
}

func (ld *loader) replayGroup(key, value []byte) bool {
	var k kmsg.GroupMetadataKey
	if k.ReadFrom(key) != nil {
		return false
	}
	if value == nil {
		delete(ld.groups, k.Group)
		return true
	}
	v := new(kmsg.GroupMetadataValue)
	if v.ReadFrom(value) != nil {
		return false
	}
	ld.groups[k.Group] = v
	return true
}

// FinishLoad installs what was loaded and starts serving.
func (c *Coordinator) FinishLoad(now time.Time) LoadReport {
	c.now = now
	ld := c.load
	c.load = nil
	if ld == nil || c.status != loading {
		return LoadReport{} // stopped while loading
	}
	rep := LoadReport{Records: ld.records, Skipped: ld.skipped}
	for id, v := range ld.groups {
		c.groups[id] = groupFromValue(id, v, c.bounds)
	}
	c.installConsumerGroups(ld, now)
	for id, offs := range ld.offsets {
		if len(offs) == 0 {
			continue
		}
		g := c.groups[id]
		if g == nil {
			g = newGroup(id, time.Time{}, c.bounds)
			c.groups[id] = g
		}
		g.offsets = offs
		rep.Offsets += len(offs)
	}
	for _, byGroup := range ld.txn.pending { // open transactions' groups exist, as when committed
		for id := range byGroup {
			if c.groups[id] == nil {
				c.groups[id] = newGroup(id, time.Time{}, c.bounds)
			}
		}
	}
	c.txn = ld.txn
	rep.Groups = len(c.groups)
	c.status = active
	for _, id := range c.sortedGroupIDs() {
		g := c.groups[id]
		for _, mid := range g.order {
			c.scheduleHeartbeat(g, g.members[mid])
		}
	}
	c.timers.set(retentionKey, now.Add(c.cfg.RetentionCheckInterval))
	return rep
}

// groupFromValue rebuilds a group from its stored metadata.
func groupFromValue(id string, v *kmsg.GroupMetadataValue, b bounds) *group {
	g := newGroup(id, time.Time{}, b)
	if v.CurrentStateTimestamp >= 0 {
		g.stateTime = time.UnixMilli(v.CurrentStateTimestamp)
	}
	g.generation, g.protocolType = v.Generation, v.ProtocolType
	if v.Protocol != nil {
		g.protocol = *v.Protocol
	}
	for _, vm := range v.Members {
		m := &member{id: vm.MemberID, clientID: vm.ClientID, clientHost: vm.ClientHost,
			rebalanceTimeout: vm.RebalanceTimeoutMillis, sessionTimeout: vm.SessionTimeoutMillis,
			protocolType: g.protocolType, assignment: vm.Assignment,
			protocols: []protocol{{name: g.protocol, metadata: vm.Subscription}}}
		if v.Version == 0 || m.rebalanceTimeout < 0 {
			m.rebalanceTimeout = m.sessionTimeout
		}
		if vm.InstanceID != nil {
			m.instanceID = *vm.InstanceID
		}
		g.add(m, nil, 0)
		g.forceSettle(m) // what the log holds is held, bound or not
	}
	if v.Leader != nil && g.has(*v.Leader) {
		g.leader = *v.Leader
	}
	if len(g.members) > 0 {
		g.state = Stable
	}
	g.subscribed = g.computeSubscribed()
	return g
}
