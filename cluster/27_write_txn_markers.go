package cluster

// WriteTxnMarkers, version 1 (Kafka 4.x removed v0, KIP-896).
//
// A transaction coordinator ends a transaction by sending, to the leader
// of every partition the transaction wrote to, a COMMIT or ABORT marker
// for the producer id and epoch, with its coordinator epoch (Kafka's
// KafkaApis.handleWriteTxnMarkersRequest). The leader appends each as a
// control batch through its partition's replication path
// (replica.Partition.AppendTxnMarkersToLeader, Kafka's AppendOrigin
// .COORDINATOR), so followers replicate it, and answers once the in-sync
// replicas have it, as an acks=all produce (replica.DelayedProduce, with
// the broker's request.timeout.ms of 30 s). Per partition errors, as
// Kafka's: UNKNOWN_TOPIC_OR_PARTITION (not hosted here),
// NOT_LEADER_OR_FOLLOWER, NOT_ENOUGH_REPLICAS, INVALID_PRODUCER_EPOCH (a
// marker older than the producer's epoch), TRANSACTION_COORDINATOR_FENCED
// (a coordinator epoch older than the last marker's), REQUEST_TIMED_OUT.
//
// Only a broker may send it: without ClusterAction on the cluster every
// partition is CLUSTER_AUTHORIZATION_FAILED, as Kafka's
// authorizeClusterOperation answers.
//
// A marker ends the producer's transaction in the log: the last stable
// offset moves past it and an ABORT adds an entry to the transaction
// index (segment/txn.go). Once a marker is acknowledged, the function
// set with SetTxnMarkerWritten hears of it: for a __consumer_offsets
// partition, the group coordinator completes the transaction's pending
// offset commits there (Kafka's onTransactionCompleted, called from the
// same callback).

import (
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	vnet "github.com/varve/varve/net"
	"github.com/varve/varve/replica"
	"github.com/varve/varve/segment"
)

func init() {
	register(&api{key: kmsg.WriteTxnMarkers.Int16(), min: 1, max: 1, serve: serveWriteTxnMarkers})
}

// txnMarkerTimeout is Kafka's request.timeout.ms default, the wait the
// broker gives a marker append for the in-sync replicas.
const txnMarkerTimeout = 30 * time.Second

func serveWriteTxnMarkers(b *Broker, r *vnet.Request, kreq kmsg.Request, respond func(vnet.Response)) kmsg.Response {
	req := kreq.(*kmsg.WriteTxnMarkersRequest)
	if refused := b.refuseTxnMarkers(r, req); refused != nil {
		return refused // ClusterAction on the cluster: only brokers write markers
	}
	resp := req.ResponseKind().(*kmsg.WriteTxnMarkersResponse)
	var waits []replica.ProducePartition
	var where [][3]int // marker, topic and partition in resp of each wait
	for mi, m := range req.Markers {
		rm := kmsg.NewWriteTxnMarkersResponseMarker()
		rm.ProducerID = m.ProducerID
		marker := segment.TxnMarker{ProducerID: m.ProducerID, ProducerEpoch: m.ProducerEpoch,
			CoordinatorEpoch: m.CoordinatorEpoch, Commit: m.Committed}
		for ti, mt := range m.Topics {
			rt := kmsg.NewWriteTxnMarkersResponseMarkerTopic()
			rt.Topic = mt.Topic
			for _, p := range mt.Partitions {
				rp := kmsg.NewWriteTxnMarkersResponseMarkerTopicPartition()
				rp.Partition = p
				if w, err := b.writeTxnMarker(mt.Topic, p, marker); err != nil {
					rp.ErrorCode = errorCode(err)
					b.log.Debug("txn marker refused", "topic", mt.Topic, "partition", p, "producer", m.ProducerID, "err", err)
				} else {
					waits = append(waits, w)
					where = append(where, [3]int{mi, ti, len(rt.Partitions)})
				}
				rt.Partitions = append(rt.Partitions, rp)
			}
			rm.Topics = append(rm.Topics, rt)
		}
		resp.Markers = append(resp.Markers, rm)
	}
	if acknowledged(waits) {
		b.markersWritten(req, resp)
		return resp
	}
	d := replica.NewDelayedProduce(waits, b.hosted, func(parts []replica.ProducePartition) {
		for i, pp := range parts {
			if pp.Err != nil {
				at := where[i]
				resp.Markers[at[0]].Topics[at[1]].Partitions[at[2]].ErrorCode = errorCode(pp.Err)
			}
		}
		b.markersWritten(req, resp)
		resp.SetVersion(r.Version)
		respond(bytesResponse(resp.AppendTo(nil)))
	})
	b.purgatory.Watch(d, txnMarkerTimeout, d.Keys()...)
	return nil
}

// TxnMarkerWritten hears of each marker a WriteTxnMarkers request got
// acknowledged, per partition.
type TxnMarkerWritten func(topic string, partition int32, producerID int64, producerEpoch int16, committed bool)

// SetTxnMarkerWritten sets the function told of acknowledged markers;
// nil tells nobody. Safe while serving.
func (b *Broker) SetTxnMarkerWritten(f TxnMarkerWritten) { b.txnMarkerWritten.Store(&f) }

// markersWritten tells the TxnMarkerWritten function of every partition
// whose marker was acknowledged.
func (b *Broker) markersWritten(req *kmsg.WriteTxnMarkersRequest, resp *kmsg.WriteTxnMarkersResponse) {
	p := b.txnMarkerWritten.Load()
	if p == nil || *p == nil {
		return
	}
	for mi, m := range req.Markers {
		for ti, t := range m.Topics {
			for pi, part := range t.Partitions {
				if resp.Markers[mi].Topics[ti].Partitions[pi].ErrorCode == 0 {
					(*p)(t.Topic, part, m.ProducerID, m.ProducerEpoch, m.Committed)
				}
			}
		}
	}
}

// writeTxnMarker appends one marker to the partition this broker leads
// and returns what its acknowledgement waits for.
func (b *Broker) writeTxnMarker(topic string, partition int32, m segment.TxnMarker) (replica.ProducePartition, error) {
	part, err := b.partition(topic, partition)
	if err != nil {
		return replica.ProducePartition{}, err
	}
	batch, err := segment.BuildTxnMarker(m)
	if err != nil {
		return replica.ProducePartition{}, err
	}
	info, err := part.AppendTxnMarkersToLeader(batch, b.topicConfig(topic).MinInsyncReplicas())
	if err != nil {
		return replica.ProducePartition{}, err
	}
	return replica.ProducePartition{Partition: part, RequiredOffset: info.LastOffset + 1}, nil
}
