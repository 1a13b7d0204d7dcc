package cluster

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/varve/varve/metadata"
)

// Metrics of a node in a cluster, computed at each scrape from the
// metadata image and the replicas, under Kafka's MBean names:
// kafka.controller:KafkaController ActiveControllerCount,
// OfflinePartitionsCount (reported by the active controller only, as
// Kafka does, so a sum over the cluster counts each partition once),
// FencedBrokerCount, ActiveBrokerCount; kafka.server:ReplicaManager
// UnderReplicatedPartitions, LeaderCount, PartitionCount. On a single
// node they read 0 (controller) and the replica counts.
func clusterCollectors(b *Broker) []prometheus.Collector {
	img := func() *metadata.Image { return b.meta.image() }
	gauge := func(name, help string, f func() float64) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, f)
	}
	return []prometheus.Collector{
		gauge("varve_controller_active_controller_count", "1 on the node that is the active controller (Kafka ActiveControllerCount).",
			func() float64 { return boolFloat(b.IsActiveController()) }),
		gauge("varve_controller_offline_partitions_count", "Partitions without a leader, on the active controller (Kafka OfflinePartitionsCount).",
			func() float64 {
				if !b.IsActiveController() {
					return 0
				}
				n := 0
				for t := range img().Topics() {
					for _, p := range t.Partitions {
						if p.Leader == metadata.NoLeader {
							n++
						}
					}
				}
				return float64(n)
			}),
		gauge("varve_controller_fenced_broker_count", "Registered brokers that are fenced, on the active controller (Kafka FencedBrokerCount).",
			func() float64 { return float64(brokerCount(b, img(), true)) }),
		gauge("varve_controller_active_broker_count", "Registered brokers that are not fenced, on the active controller (Kafka ActiveBrokerCount).",
			func() float64 { return float64(brokerCount(b, img(), false)) }),
		gauge("varve_replica_under_replicated_partitions", "Partitions this node leads whose ISR is smaller than their replicas (Kafka UnderReplicatedPartitions).",
			func() float64 { n, _, _ := b.replicaCounts(img()); return float64(n) }),
		gauge("varve_replica_leader_count", "Partitions this node leads (Kafka LeaderCount).",
			func() float64 { _, n, _ := b.replicaCounts(img()); return float64(n) }),
		gauge("varve_replica_partition_count", "Partitions this node has a replica of (Kafka PartitionCount).",
			func() float64 { _, _, n := b.replicaCounts(img()); return float64(n) }),
	}
}

// replicaCounts counts, from the image, the partitions this node leads
// with fewer in-sync replicas than replicas, the ones it leads, and the
// ones it has a replica of.
func (b *Broker) replicaCounts(img *metadata.Image) (under, leading, hosted int) {
	for t := range img.Topics() {
		for _, p := range t.Partitions {
			for _, r := range p.Replicas {
				if r == b.nodeID {
					hosted++
					break
				}
			}
			if p.Leader == b.nodeID {
				leading++
				if len(p.ISR) < len(p.Replicas) {
					under++
				}
			}
		}
	}
	return under, leading, hosted
}

func brokerCount(b *Broker, img *metadata.Image, fenced bool) int {
	if !b.IsActiveController() {
		return 0
	}
	n := 0
	for _, br := range img.Brokers() {
		if br.Fenced == fenced {
			n++
		}
	}
	return n
}

func boolFloat(v bool) float64 {
	if v {
		return 1
	}
	return 0
}
