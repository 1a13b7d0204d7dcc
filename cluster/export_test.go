package cluster

import (
	"github.com/varve/varve/logdir"
	"github.com/varve/varve/metadata"
	"github.com/varve/varve/replica"
)

// SetRecordValidation switches produce validation for the benchmark that
// measures its cost.
func SetRecordValidation(on bool) { skipRecordValidation.Store(!on) }

// Parked is the number of requests waiting in the broker's purgatory.
func (b *Broker) Parked() int { return b.purgatory.Pending() }

// PartitionReplica is the broker's replica of a partition, for tests
// that hold its high watermark back.
func (b *Broker) PartitionReplica(topic string, p int32) *replica.Partition {
	part, _ := b.partition(topic, p)
	return part
}

// Gauge reads one of the broker's gauges by name (0 when it has no
// value).
func (b *Broker) Gauge(name string) float64 {
	mfs, err := b.metrics.reg.Gather()
	if err != nil {
		return -1
	}
	for _, mf := range mfs {
		if mf.GetName() == name && len(mf.GetMetric()) > 0 {
			return mf.GetMetric()[0].GetGauge().GetValue()
		}
	}
	return -1
}

// UsePublisher makes the broker follow pub's images instead of its
// metadata file's, as it will follow the controller quorum's: tests
// publish the images of a cluster. Call it before Start, with a port
// given in listeners (a :0 listener re-registers at Start).
func (b *Broker) UsePublisher(pub *metadata.Publisher) { b.meta.pub = pub }

// ApplyImage applies img to the broker's replicas as the goroutine that
// follows the publisher does, for benchmarks that time it on a broker
// that is not started.
func (b *Broker) ApplyImage(img *metadata.Image) { b.applyImage(img) }

// PartitionsVisited is how many partitions the last image application
// looked at.
func (b *Broker) PartitionsVisited() int { return b.repl.visited }

// Count reads one of the broker's counters by name, or a histogram's
// number of observations, summed over its series (-1 when it has none).
func (b *Broker) Count(name string) float64 {
	mfs, err := b.metrics.reg.Gather()
	if err != nil {
		return -1
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		var sum float64
		for _, m := range mf.GetMetric() {
			if h := m.GetHistogram(); h != nil {
				sum += float64(h.GetSampleCount())
			} else {
				sum += m.GetCounter().GetValue()
			}
		}
		return sum
	}
	return -1
}

// MetadataImage is the broker's current metadata image.
func (b *Broker) MetadataImage() *metadata.Image { return b.meta.image() }

// LogDirs is the log manager under the broker's partitions.
func (b *Broker) LogDirs() *logdir.Manager { return b.parts.LogDirs() }

// CompactionTargets lists the partitions the log cleaner may clean now.
func (b *Broker) CompactionTargets() []string {
	var out []string
	for _, t := range b.compactionTargets() {
		out = append(out, t.Log.TopicPartition().String())
	}
	return out
}

// ReplicationQuotas are the broker's leader and follower replication
// quotas (KIP-73).
func (b *Broker) ReplicationQuotas() (leader, follower *replica.ReplicationQuota) {
	return b.parts.LeaderQuota(), b.parts.FollowerQuota()
}
