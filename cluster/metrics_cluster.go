package cluster

import (
	"slices"
	"sync"
	"time"

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
	var memo countsMemo
	counts := func() imageCounts { return memo.get(b, img()) }
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
				return float64(counts().offline)
			}),
		gauge("varve_controller_fenced_broker_count", "Registered brokers that are fenced, on the active controller (Kafka FencedBrokerCount).",
			func() float64 { return float64(brokerCount(b, img(), true)) }),
		gauge("varve_controller_active_broker_count", "Registered brokers that are not fenced, on the active controller (Kafka ActiveBrokerCount).",
			func() float64 { return float64(brokerCount(b, img(), false)) }),
		gauge("varve_replica_under_replicated_partitions", "Partitions this node leads whose ISR is smaller than their replicas (Kafka UnderReplicatedPartitions).",
			func() float64 { return float64(counts().under) }),
		gauge("varve_replica_leader_count", "Partitions this node leads (Kafka LeaderCount).",
			func() float64 { return float64(counts().leading) }),
		gauge("varve_replica_partition_count", "Partitions this node has a replica of (Kafka PartitionCount).",
			func() float64 { return float64(counts().hosted) }),
	}
}

// replicationMetrics counts the ISR changes this node's leaders make and the
// elections its active controller makes, under Kafka's names:
// kafka.server:ReplicaManager IsrShrinksPerSec and IsrExpandsPerSec
// (an AlterPartition of this node's accepted by the controller, as
// Kafka's Partition marks them when its change commits: the ISR shrunk
// or grew; the controller's own removals of fenced brokers are not
// counted, as Kafka does not), and kafka.controller:ControllerStats
// LeaderElectionRateAndTimeMs (partitions given a new leader by the
// active controller's entries, observed with the time from the
// operation's start to the entry's application: the histogram's count
// is the rate) and UncleanLeaderElectionsPerSec.
type replicationMetrics struct {
	isrShrinks, isrExpands, unclean prometheus.Counter
	electionTime                    prometheus.Histogram
}

func (r *replicationMetrics) collectors() []prometheus.Collector {
	r.isrShrinks = prometheus.NewCounter(prometheus.CounterOpts{Name: "varve_replica_isr_shrinks_total",
		Help: "ISR shrinks of partitions this node leads, accepted by the controller (Kafka IsrShrinksPerSec)."})
	r.isrExpands = prometheus.NewCounter(prometheus.CounterOpts{Name: "varve_replica_isr_expands_total",
		Help: "ISR expansions of partitions this node leads, accepted by the controller (Kafka IsrExpandsPerSec)."})
	r.unclean = prometheus.NewCounter(prometheus.CounterOpts{Name: "varve_controller_unclean_leader_elections_total",
		Help: "Partitions given a leader from outside their ISR by this node as active controller (Kafka UncleanLeaderElectionsPerSec)."})
	r.electionTime = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "varve_controller_leader_election_duration_seconds",
		Help:    "Partition leader elections by this node as active controller, each observed with the time from its operation's start to its commit (Kafka LeaderElectionRateAndTimeMs).",
		Buckets: prometheus.ExponentialBuckets(100e-6, 2, 18)})
	return []prometheus.Collector{r.isrShrinks, r.isrExpands, r.unclean, r.electionTime}
}

// isrChanged counts an accepted ISR change from old to next: a shrink
// when a member left, else an expansion when one joined.
func (r *replicationMetrics) isrChanged(old, next []int32) {
	for _, id := range old {
		if !slices.Contains(next, id) {
			r.isrShrinks.Inc()
			return
		}
	}
	for _, id := range next {
		if !slices.Contains(old, id) {
			r.isrExpands.Inc()
			return
		}
	}
}

// elections counts the leader elections of one committed entry.
func (r *replicationMetrics) elections(elected, unclean int, took time.Duration) {
	for range elected {
		r.electionTime.Observe(took.Seconds())
	}
	r.unclean.Add(float64(unclean))
}

// imageCounts are the partition counts the gauges report, from one image.
type imageCounts struct {
	under, leading, hosted int // of this node's replicas (replicaCounts)
	offline                int // partitions without a leader
}

// countsMemo keeps the counts of the last image asked for: a scrape
// reads four gauges from the same image, and an image never changes, so
// its partitions are walked once per image rather than once per gauge.
type countsMemo struct {
	mu     sync.Mutex
	img    *metadata.Image
	counts imageCounts
}

func (m *countsMemo) get(b *Broker, img *metadata.Image) imageCounts {
	m.mu.Lock()
	defer m.mu.Unlock()
	if img != m.img {
		var c imageCounts
		c.under, c.leading, c.hosted = b.replicaCounts(img)
		for t := range img.Topics() {
			for _, p := range t.Partitions {
				if p.Leader == metadata.NoLeader {
					c.offline++
				}
			}
		}
		m.img, m.counts = img, c
	}
	return m.counts
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
