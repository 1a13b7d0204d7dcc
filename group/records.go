package group

import (
	"encoding/binary"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/varve/varve/record"
)

// Record key versions in __consumer_offsets (the key's first int16):
// 0 and 1 are offset commits (same layout; Kafka writes 1), 2 is group
// metadata. Versions 3 and up are the KIP-848 consumer group records,
// which this coordinator neither writes nor reads.
const (
	offsetKeyVersion   = 1
	groupKeyVersion    = 2
	groupValueVersion  = 3 // with group.instance.id (KIP-345)
	offsetValueVersion = 3 // with the leader epoch (KIP-320)
	offsetValueExpiry  = 1 // with an explicit expire timestamp (OffsetCommit v2-v4 retention)
)

// offsetKey encodes an OffsetCommitKey.
func offsetKey(groupID string, tp topicPartition) []byte {
	k := kmsg.NewOffsetCommitKey()
	k.Version, k.Group, k.Topic, k.Partition = offsetKeyVersion, groupID, tp.topic, tp.partition
	return k.AppendTo(nil)
}

// offsetValue encodes an OffsetCommitValue: version 3, or version 1 when
// the commit carries an expire timestamp, as Kafka's
// GroupMetadataManager.offsetCommitValue chooses.
func offsetValue(c committed) []byte {
	v := kmsg.NewOffsetCommitValue()
	v.Version, v.Offset, v.LeaderEpoch = offsetValueVersion, c.offset, c.leaderEpoch
	v.Metadata, v.CommitTimestamp = c.metadata, c.commitTimestamp
	if c.expireTimestamp >= 0 {
		v.Version, v.ExpireTimestamp = offsetValueExpiry, c.expireTimestamp
	}
	return v.AppendTo(nil)
}

// groupKey encodes a GroupMetadataKey.
func groupKey(groupID string) []byte {
	k := kmsg.NewGroupMetadataKey()
	k.Version, k.Group = groupKeyVersion, groupID
	return k.AppendTo(nil)
}

// groupValue encodes a GroupMetadataValue of g with the given
// assignment per member (Kafka's groupMetadataValue).
func groupValue(g *group, assignment map[string][]byte) []byte {
	v := kmsg.NewGroupMetadataValue()
	v.Version, v.ProtocolType, v.Generation = groupValueVersion, g.protocolType, g.generation
	v.Protocol, v.Leader = nullable(g.protocol), nullable(g.leader)
	v.CurrentStateTimestamp = -1
	if !g.stateTime.IsZero() {
		v.CurrentStateTimestamp = g.stateTime.UnixMilli()
	}
	for _, id := range g.order {
		m := g.members[id]
		vm := kmsg.NewGroupMetadataValueMember()
		vm.MemberID, vm.InstanceID, vm.ClientID, vm.ClientHost = m.id, m.instanceIDPtr(), m.clientID, m.clientHost
		vm.RebalanceTimeoutMillis, vm.SessionTimeoutMillis = m.rebalanceTimeout, m.sessionTimeout
		vm.Subscription, vm.Assignment = m.metadata(g.protocol), assignment[m.id]
		if vm.Subscription == nil {
			vm.Subscription = []byte{}
		}
		if vm.Assignment == nil {
			vm.Assignment = []byte{}
		}
		v.Members = append(v.Members, vm)
	}
	return v.AppendTo(nil)
}

func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// entry is one record to write: a nil value is a tombstone.
type entry struct{ key, value []byte }

// buildBatch makes one uncompressed v2 batch of entries stamped now, as
// Kafka's coordinator writes them (no producer id, CreateTime).
func buildBatch(entries []entry, now time.Time) ([]byte, error) {
	b := record.NewBatchBuilder(record.CompressionNone)
	for _, e := range entries {
		b.Append(record.Record{Key: e.key, Value: e.value, Timestamp: now.UnixMilli()})
	}
	out, err := b.Build()
	if err != nil {
		return nil, fmt.Errorf("build __consumer_offsets batch: %w", err)
	}
	return out, nil
}

// keyVersion reads the version that opens every __consumer_offsets key.
func keyVersion(key []byte) (int16, bool) {
	if len(key) < 2 {
		return 0, false
	}
	return int16(binary.BigEndian.Uint16(key)), true
}
