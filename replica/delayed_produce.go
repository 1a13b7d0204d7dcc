package replica

import "github.com/twmb/franz-go/pkg/kerr"

// ProducePartition is one partition an acks=all produce waits on.
type ProducePartition struct {
	Partition *Partition
	// RequiredOffset is the offset after the last one appended: the
	// produce is acknowledged once the high watermark reaches it.
	RequiredOffset int64
	// Err is the partition's outcome once the produce completes: nil
	// (acknowledged), NOT_LEADER_OR_FOLLOWER, UNKNOWN_TOPIC_OR_PARTITION,
	// or REQUEST_TIMED_OUT for one still waiting at the timeout.
	Err     error
	pending bool
}

// DelayedProduce is an acks=all Produce waiting, after its append, for
// the high watermark of every partition to pass its last offset (Kafka's
// DelayedProduce). A partition stops waiting when its high watermark
// gets there (NOT_ENOUGH_REPLICAS_AFTER_APPEND if the ISR shrank below
// min.insync.replicas meanwhile: Partition.ProduceStatus), when this
// replica loses its leadership (NOT_LEADER_OR_FOLLOWER) or when it is
// deleted (UNKNOWN_TOPIC_OR_PARTITION); the produce completes when no
// partition waits, or at its timeout, when those still waiting get
// REQUEST_TIMED_OUT.
type DelayedProduce struct {
	Parts []ProducePartition
	// Online reports whether a partition is still hosted here; nil
	// means always.
	Online func(*Partition) bool
	// Complete answers the produce from Parts' outcomes.
	Complete func(parts []ProducePartition)
}

// NewDelayedProduce returns a produce waiting on parts. As in Kafka,
// every partition starts as REQUEST_TIMED_OUT, the answer it gets if the
// timeout comes first.
func NewDelayedProduce(parts []ProducePartition, online func(*Partition) bool, complete func([]ProducePartition)) *DelayedProduce {
	for i := range parts {
		parts[i].Err, parts[i].pending = kerr.RequestTimedOut, true
	}
	return &DelayedProduce{Parts: parts, Online: online, Complete: complete}
}

// Keys are the watch lists of the produce's partitions, each once.
func (d *DelayedProduce) Keys() []*WatchList {
	return watchKeys(len(d.Parts), func(i int) *Partition { return d.Parts[i].Partition })
}

// TryComplete settles every partition it can and reports whether none
// still waits (Kafka's DelayedProduce.tryComplete).
func (d *DelayedProduce) TryComplete() bool {
	waiting := false
	for i := range d.Parts {
		pp := &d.Parts[i]
		if !pp.pending {
			continue
		}
		p := pp.Partition
		if d.Online != nil && !d.Online(p) {
			pp.Err, pp.pending = kerr.UnknownTopicOrPartition, false
			continue
		}
		done, err := p.ProduceStatus(pp.RequiredOffset)
		if done {
			pp.Err, pp.pending = err, false
		}
		waiting = waiting || !done
	}
	return !waiting
}

// OnComplete implements Operation.
func (d *DelayedProduce) OnComplete(bool) { d.Complete(d.Parts) }
