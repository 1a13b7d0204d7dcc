package replica

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/varve/varve/pagecache"
	"github.com/varve/varve/segment"
)

// Transactions on a partition's replica (KIP-98): the leader appends the
// markers a transaction coordinator sends (WriteTxnMarkers) through the
// same replication path as produced batches, so followers replicate them
// and an acks=all wait covers them; read_committed readers stop at the
// last stable offset and get the aborted transactions of what they read.

// TxnLog is what a Log offers for transactions; *segment.Log has it. A
// log without it (a test's in-memory log) has no transactions: its last
// stable offset is the high watermark and it refuses markers.
type TxnLog interface {
	AppendAsCoordinator(records []byte, leaderEpoch int32) (segment.AppendInfo, error)
	LastStableOffset(highWatermark int64) int64
	AbortedTransactions(from, upTo int64) []segment.AbortedTxn
}

// appendMarkers appends transaction markers to l as the leader.
func appendMarkers(l Log, records []byte, epoch int32) (segment.AppendInfo, error) {
	tl, ok := l.(TxnLog)
	if !ok {
		return segment.AppendInfo{}, fmt.Errorf("%w: the log takes no transaction markers", kerr.UnsupportedVersion)
	}
	return tl.AppendAsCoordinator(records, epoch)
}

// AppendTxnMarkersToLeader writes transaction markers built by
// segment.BuildTxnMarker as the leader (Kafka's appendRecordsToLeader
// with AppendOrigin.COORDINATOR and requiredAcks -1): followers
// replicate them as any batch, and ProduceStatus tells when the in-sync
// replicas have them. A follower answers NOT_LEADER_OR_FOLLOWER.
func (p *Partition) AppendTxnMarkersToLeader(records []byte, minInsync int) (segment.AppendInfo, error) {
	return p.appendToLeader(records, -1, minInsync, true)
}

// LastStableOffset is the offset read_committed consumers read up to:
// the first offset of the earliest unstable transaction, capped by the
// high watermark (Kafka's Partition.fetchOffsetSnapshot).
func (p *Partition) LastStableOffset() int64 {
	hw := p.hw.Load()
	l, err := p.current()
	if err != nil {
		return hw
	}
	if tl, ok := l.(TxnLog); ok {
		return tl.LastStableOffset(hw)
	}
	return hw
}

// AbortedTransactions are the aborted transactions with records in
// [from, upTo), for a read_committed fetch of that range.
func (p *Partition) AbortedTransactions(from, upTo int64) []segment.AbortedTxn {
	l, err := p.current()
	if err != nil {
		return nil
	}
	if tl, ok := l.(TxnLog); ok {
		return tl.AbortedTransactions(from, upTo)
	}
	return nil
}

// ReadCommitted is Read for a read_committed consumer: whole batches
// from offset below the last stable offset, which it returns.
func (p *Partition) ReadCommitted(offset int64, maxBytes int, minOneBatch bool) (pagecache.Region, int64, error) {
	lso := p.LastStableOffset()
	r, err := p.readTo(offset, maxBytes, lso, minOneBatch)
	return r, lso, err
}
