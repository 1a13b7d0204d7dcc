package replica

import "slices"

// FetchPartition is one partition a delayed fetch reads.
type FetchPartition struct {
	Partition *Partition
	Offset    int64 // the fetch offset
	MaxBytes  int32 // the partition's PartitionMaxBytes
	// ToLogEnd: a follower's fetch, which reads up to the log end
	// rather than the high watermark.
	ToLogEnd bool
}

// DelayedFetch is a Fetch waiting for min.bytes of records below the
// high watermark of its partitions (Kafka's DelayedFetch). It completes
// when enough bytes are there, when a partition can no longer be read
// as asked (deleted, leadership lost, its fetch offset truncated away or
// past the high watermark), or when its max.wait.ms expires; Complete
// then builds the response from the logs.
type DelayedFetch struct {
	Parts    []FetchPartition
	MinBytes int32
	MaxBytes int32 // the response's max_bytes; <= 0 is unbounded
	// Online reports whether a partition is still hosted here (a deleted
	// one is not); nil means always.
	Online func(*Partition) bool
	// HeldBack reports whether the leader's replication quota holds
	// back a partition's records from this follower's fetch (KIP-73):
	// they do not count towards MinBytes. nil holds back none.
	HeldBack func(*Partition) bool
	// Complete answers the fetch; expired says max.wait.ms ran out.
	Complete func(expired bool)
}

// Keys are the watch lists of the fetch's partitions, each once.
func (f *DelayedFetch) Keys() []*WatchList {
	return watchKeys(len(f.Parts), func(i int) *Partition { return f.Parts[i].Partition })
}

// watchKeys returns the watch lists of n partitions, each once.
func watchKeys(n int, part func(int) *Partition) []*WatchList {
	keys := make([]*WatchList, 0, n)
	var seen map[*WatchList]struct{} // past a few partitions
	for i := range n {
		k := part(i).Watchers()
		if n <= 8 {
			if !slices.Contains(keys, k) {
				keys = append(keys, k)
			}
			continue
		}
		if seen == nil {
			seen = make(map[*WatchList]struct{}, n)
		}
		if _, dup := seen[k]; !dup {
			seen[k] = struct{}{}
			keys = append(keys, k)
		}
	}
	return keys
}

// TryComplete counts the bytes a response would carry now, within the
// partitions' and the response's bounds (a first batch larger than them
// counts whole, KIP-74), and reports whether they reach MinBytes or a
// partition must answer at once (Kafka's DelayedFetch.tryComplete cases
// A to F).
func (f *DelayedFetch) TryComplete() bool {
	budget := int64(f.MaxBytes)
	if budget <= 0 {
		budget = 1 << 62
	}
	var total int64
	for _, fp := range f.Parts {
		n, now := f.available(fp, min(int64(fp.MaxBytes), budget), total == 0)
		if now {
			return true
		}
		total += n
		budget -= n
	}
	return total >= int64(f.MinBytes)
}

// available is the bytes fp could return within limit, or now when the
// fetch must answer at once for fp's sake.
func (f *DelayedFetch) available(fp FetchPartition, limit int64, minOneBatch bool) (n int64, now bool) {
	p := fp.Partition
	if !p.IsLeader() || !p.Online() || f.Online != nil && !f.Online(p) {
		return 0, true // cases A, B and E: not leader, partition gone, or its log directory offline
	}
	upTo := p.HighWatermark()
	if fp.ToLogEnd {
		upTo = p.EndOffset()
	}
	if fp.Offset > upTo || fp.Offset < p.StartOffset() {
		return 0, true // cases C and F: truncated, or out of range
	}
	if fp.Offset == upTo || f.HeldBack != nil && f.HeldBack(p) {
		return 0, false
	}
	if f.MinBytes <= 1 && minOneBatch {
		return 1, false // a whole batch is there: enough, no need to read its size
	}
	r, err := p.readTo(fp.Offset, int(max(limit, 0)), upTo, minOneBatch)
	if err != nil {
		return 0, true // case D: the read fails; the response says why
	}
	return r.Len, false
}

// OnComplete implements Operation.
func (f *DelayedFetch) OnComplete(expired bool) { f.Complete(expired) }
