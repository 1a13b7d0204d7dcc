package cluster

// ListOffsets, versions 0-9.
//
// Timestamp -2 is the log start offset (earliest), -1 the high
// watermark (latest; with IsolationLevel 1, read_committed (v2+), the
// last stable offset, KIP-98), -3 (v7+) the offset of
// the largest timestamp, and any other timestamp the first offset whose
// record timestamp is at least it, or -1 when there is none. Version 0
// answers in the old form (a list of offsets). A CurrentLeaderEpoch
// (v4+) is checked as KIP-320 says (FENCED_LEADER_EPOCH,
// UNKNOWN_LEADER_EPOCH), a broker that does not lead the partition
// answers NOT_LEADER_OR_FOLLOWER, and a new leader whose high watermark
// has not reached the start of its epoch answers OFFSET_NOT_AVAILABLE
// for the latest offset (KIP-207), so that no client sees an offset the
// leader might still lose. For read_committed, a timestamp lookup that
// lands at or past the last stable offset finds nothing (-1), as in
// Kafka's Partition.fetchOffset.

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/varve/varve/acl"
	"github.com/varve/varve/logdir"
	vnet "github.com/varve/varve/net"
	"github.com/varve/varve/replica"
)

func init() {
	register(&api{key: kmsg.ListOffsets.Int16(), min: 0, max: 9, serve: serveListOffsets})
}

func serveListOffsets(b *Broker, r *vnet.Request, kreq kmsg.Request, _ func(vnet.Response)) kmsg.Response {
	req := kreq.(*kmsg.ListOffsetsRequest)
	resp := req.ResponseKind().(*kmsg.ListOffsetsResponse)
	describe := b.topicCheck(r, acl.OpDescribe)
	for _, rt := range req.Topics {
		st := kmsg.NewListOffsetsResponseTopic()
		st.Topic = rt.Topic
		for _, rp := range rt.Partitions {
			sp := kmsg.NewListOffsetsResponseTopicPartition()
			sp.Partition = rp.Partition
			p, err := b.partition(rt.Topic, rp.Partition)
			if authErr := describe.err(rt.Topic); authErr != nil {
				err = authErr
			}
			if err == nil {
				epoch := int32(-1)
				if r.Version >= 4 {
					epoch = rp.CurrentLeaderEpoch
				}
				err = p.CheckLeaderEpoch(epoch)
			}
			if err == nil {
				sp.Timestamp, sp.Offset, err = listOffset(p, rp.Timestamp, r.Version >= 2 && req.IsolationLevel == 1)
			}
			if err == nil && r.Version >= 4 {
				sp.LeaderEpoch = p.LeaderEpoch()
			}
			sp.ErrorCode = errorCode(err)
			if err != nil {
				sp.Timestamp, sp.Offset = -1, -1
			}
			if r.Version == 0 {
				sp.OldStyleOffsets = []int64{sp.Offset}
			}
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return resp
}

func listOffset(p *replica.Partition, ts int64, readCommitted bool) (timestamp, offset int64, err error) {
	if !p.Available() {
		return -1, -1, fmt.Errorf("%s: %w", p.TP, logdir.ErrOffline) // KAFKA_STORAGE_ERROR
	}
	switch ts {
	case -2:
		return -1, p.StartOffset(), nil
	case -1:
		if !p.HighWatermarkKnown() {
			return -1, -1, kerr.OffsetNotAvailable
		}
		if readCommitted {
			return -1, p.LastStableOffset(), nil
		}
		return -1, p.HighWatermark(), nil
	case -3:
		off, rts, _, err := p.MaxTimestampOffset() // KIP-734
		return committedOnly(p, readCommitted, rts, off, err)
	}
	off, rts, _, err := p.OffsetForTime(ts)
	return committedOnly(p, readCommitted, rts, off, err)
}

// committedOnly hides, from a read_committed lookup, an offset at or
// past the last stable offset.
func committedOnly(p *replica.Partition, readCommitted bool, ts, off int64, err error) (int64, int64, error) {
	if err == nil && readCommitted && off >= 0 && off >= p.LastStableOffset() {
		return -1, -1, nil
	}
	return ts, off, err
}
