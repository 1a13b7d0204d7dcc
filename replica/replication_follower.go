package replica

import (
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/varve/varve/record"
)

// NextFetch is the fetch a follower sends its leader for this
// partition: from its log end, naming the epoch of its last batch
// (KIP-595's LastFetchedEpoch) and the leader epoch it follows.
func (r *Replication) NextFetch(nowMs int64) (FetchRequest, bool) {
	if r.role != RoleFollower {
		return FetchRequest{}, false
	}
	// The cache's latest epoch even when no batch of it was appended (an
	// election without appends): the leader's answer then removes it, as
	// Kafka's fetcher does with log.latestEpoch.
	return FetchRequest{ReplicaID: r.cfg.LocalID, FetchOffset: r.log.EndOffset(), LastFetchedEpoch: r.epochs.Latest().Epoch,
		CurrentLeaderEpoch: r.leaderEpoch, NowMs: nowMs}, true
}

// FetchResponse is the leader's answer for this partition.
type FetchResponse struct {
	Err            error
	HighWatermark  int64
	LogStartOffset int64
	Diverging      *EpochEnd
	Records        []byte
}

// HandleFetchResponse applies the leader's answer on a follower. A
// diverging epoch truncates the log (see truncateForDivergence) and the
// next fetch goes on from there; records are appended, the epochs of
// their batches entered in the epoch cache, the high watermark set to
// min(the leader's, the log end) and the log start offset raised to the
// leader's.
func (r *Replication) HandleFetchResponse(resp FetchResponse) error {
	switch {
	case r.role != RoleFollower:
		return fmt.Errorf("%w: a fetch answer reached a %s", kerr.NotLeaderForPartition, r.role)
	case resp.Err != nil:
		return resp.Err
	case resp.Diverging != nil:
		return r.truncateForDivergence(*resp.Diverging)
	}
	if err := r.appendReplicated(resp.Records); err != nil {
		return err
	}
	if resp.LogStartOffset > r.log.StartOffset() && resp.LogStartOffset <= r.log.EndOffset() {
		if err := r.log.SetStartOffset(resp.LogStartOffset); err != nil {
			return err
		}
		r.epochs.TruncateFromStart(resp.LogStartOffset)
	}
	r.hw = max(min(resp.HighWatermark, r.log.EndOffset()), r.log.StartOffset())
	return nil
}

// HandleOutOfRange is Kafka's handleOutOfRangeError on a follower whose
// fetch offset the leader refused with OFFSET_OUT_OF_RANGE: when the
// leader's log starts past this log's end (retention or DeleteRecords
// removed what the follower lacks), the log restarts empty at the
// leader's start offset. It reports whether it did; otherwise the next
// fetch (whose LastFetchedEpoch finds any divergence) decides.
func (r *Replication) HandleOutOfRange(leaderStart int64) (bool, error) {
	if r.role != RoleFollower || leaderStart <= r.log.EndOffset() {
		return false, nil
	}
	if err := r.log.TruncateFullyAndStartAt(leaderStart); err != nil {
		return false, err
	}
	r.epochs.TruncateFromEnd(leaderStart)
	r.epochs.TruncateFromStart(leaderStart)
	r.hw = leaderStart
	return true, nil
}

// truncateForDivergence is Kafka's getOffsetTruncationState for a
// DivergingEpoch (KIP-595, with KIP-279's iteration): when this replica
// has the leader's epoch, truncate to the smaller of where that epoch
// ends here and at the leader; when it does not, truncate to the end of
// its largest smaller epoch and let the next fetch ask again; when it
// knows no epoch at all, take the leader's end offset.
func (r *Replication) truncateForDivergence(d EpochEnd) error {
	end := r.log.EndOffset()
	epoch, local := r.epochs.EndOffsetFor(d.Epoch, end)
	to := min(local, end)
	switch {
	case epoch == UndefinedEpoch:
		to = min(d.EndOffset, end)
	case epoch == d.Epoch:
		to = min(to, d.EndOffset)
	}
	return r.truncateTo(max(to, r.log.StartOffset()))
}

// truncateTo cuts the log at offset. A cut at or past the log end leaves
// the log alone but still drops epoch entries that start at its end: a
// replica that was elected and lost the leadership before appending
// anything has such an entry, and keeping it would make every fetch name
// an epoch the log does not hold, diverging forever (Kafka does the same
// in UnifiedLog.truncateTo).
func (r *Replication) truncateTo(offset int64) error {
	if offset >= r.log.EndOffset() {
		r.epochs.TruncateFromEnd(r.log.EndOffset())
		return nil
	}
	if err := r.log.TruncateTo(offset); err != nil {
		return err
	}
	r.epochs.TruncateFromEnd(offset)
	r.hw = min(r.hw, offset)
	return nil
}

// appendReplicated checks that the batches continue the log, enters each
// new epoch's first offset in the cache and appends them. A partial
// batch at the end (the leader's read stops at the fetch's byte limit,
// in the middle of a batch) is dropped, as Kafka's follower drops it; a
// first batch that is incomplete is an error (KIP-74 has the leader send
// it whole).
func (r *Replication) appendReplicated(b []byte) error {
	next, latest := r.log.EndOffset(), r.epochs.Latest().Epoch
	var starts []EpochEntry
	for p := 0; p < len(b); {
		h, n, err := record.NextBatch(b[p:], 0)
		if errors.Is(err, record.ErrShortBatch) && p > 0 {
			b = b[:p] // a partial tail: the next fetch asks for it whole
			break
		}
		if err != nil {
			return fmt.Errorf("replicated batch at byte %d: %w", p, err)
		}
		if h.BaseOffset != next {
			return fmt.Errorf("%w: replicated batch at offset %d, log ends at %d", kerr.OffsetOutOfRange, h.BaseOffset, next)
		}
		if h.PartitionLeaderEpoch > latest {
			latest = h.PartitionLeaderEpoch
			starts = append(starts, EpochEntry{latest, h.BaseOffset})
		}
		next, p = h.NextOffset(), p+n
	}
	if len(b) == 0 {
		return nil
	}
	if err := r.log.AppendAsFollower(b); err != nil {
		return err
	}
	for _, e := range starts { // only once the batches are in the log
		r.epochs.Assign(e.Epoch, e.StartOffset)
	}
	return nil
}
