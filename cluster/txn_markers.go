package cluster

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	vnet "github.com/varve/varve/net"
	"github.com/varve/varve/txn"
)

// Writing a transaction's markers (Kafka's
// TransactionMarkerChannelManager): the partitions are grouped by their
// leader in the metadata image and each leader gets one WriteTxnMarkers
// request (this node's own API called in process, another node's over
// the inter-broker listener). Partitions that fail are tried again with
// a backoff until every one is written, the partition no longer exists
// (the marker is dropped, as Kafka does for a deleted topic), the
// leader says the producer or coordinator epoch is stale, or this node
// stops coordinating the transaction. Then the coordinator is told.

// markerWriter sends one WriteTxnMarkers request to a partition leader.
// It is an interface so that the coordinator works, and is tested,
// whichever node writes the markers and however it does.
type markerWriter interface {
	writeTxnMarkers(ctx context.Context, leader int32, req *kmsg.WriteTxnMarkersRequest) (*kmsg.WriteTxnMarkersResponse, error)
}

const (
	markerRetryBackoff    = 100 * time.Millisecond
	markerRetryBackoffMax = 2 * time.Second
	writeTxnMarkersVer    = 1
)

// errNoMarkerAPI: this node serves no WriteTxnMarkers.
var errNoMarkerAPI = errors.New("WriteTxnMarkers is not served by this node")

// txnMarkers is one coordinator partition's txn.Markers.
type txnMarkers struct {
	tc        *txnCoordinator
	partition int32
}

// Send implements txn.Markers: it starts the goroutine writing r's
// markers and returns.
func (m txnMarkers) Send(r txn.MarkerRequest) {
	if m.tc.stopping() {
		return
	}
	m.tc.done.Add(1)
	go func() {
		defer m.tc.done.Done()
		m.tc.writeMarkers(m.partition, r)
	}()
}

// writeMarkers writes r's markers until done or abandoned, then reports
// to the coordinator of partition p.
func (tc *txnCoordinator) writeMarkers(p int32, r txn.MarkerRequest) {
	pending, backoff := r.Partitions, markerRetryBackoff
	for {
		var abandon bool
		pending, abandon = tc.writeMarkersOnce(r, pending)
		if abandon || !tc.stillCoordinating(p, r.CoordinatorEpoch) {
			return
		}
		if len(pending) == 0 {
			break
		}
		select {
		case <-tc.stop:
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, markerRetryBackoffMax)
	}
	s := tc.shards[p]
	s.do(func(c *txn.Coordinator) {
		c.MarkersWritten(time.Now(), r)
		tc.waiters.wake(r.TransactionalID) // under the mutex: see txn_hold.go
	})
	tc.kick(s)
}

func (tc *txnCoordinator) stillCoordinating(p int32, epoch int32) bool {
	ok := false
	tc.shards[p].do(func(c *txn.Coordinator) { ok = c.Active() && c.Epoch() == epoch })
	return ok && !tc.stopping()
}

// writeMarkersOnce sends each leader its partitions' markers once and
// returns the partitions to try again; abandon is true when a leader
// said the transaction's epochs are stale.
func (tc *txnCoordinator) writeMarkersOnce(r txn.MarkerRequest, tps []txn.TopicPartition) (retry []txn.TopicPartition, abandon bool) {
	img := tc.b.meta.image()
	byLeader := map[int32][]txn.TopicPartition{}
	for _, tp := range tps {
		t, ok := img.Topic(tp.Topic)
		if !ok || int(tp.Partition) >= len(t.Partitions) {
			tc.b.log.Warn("dropping a transaction marker for a partition that no longer exists",
				"transactional_id", r.TransactionalID, "topic", tp.Topic, "partition", tp.Partition)
			continue
		}
		leader := t.Partitions[tp.Partition].Leader
		byLeader[leader] = append(byLeader[leader], tp)
	}
	ctx, cancel := context.WithTimeout(context.Background(), tc.b.cfg.ReplicaSocketTimeoutMs.Duration())
	defer cancel()
	for leader, tps := range byLeader {
		if leader < 0 {
			retry = append(retry, tps...)
			continue
		}
		resp, err := tc.markers.writeTxnMarkers(ctx, leader, markerRequest(r, tps))
		if err != nil {
			tc.b.log.Debug("writing transaction markers failed; retrying", "leader", leader, "err", err)
			retry = append(retry, tps...)
			continue
		}
		again, stale := markerResults(resp, tps)
		if stale {
			return nil, true
		}
		retry = append(retry, again...)
	}
	return retry, false
}

// markerRequest is the WriteTxnMarkers request for r's partitions tps.
func markerRequest(r txn.MarkerRequest, tps []txn.TopicPartition) *kmsg.WriteTxnMarkersRequest {
	req := kmsg.NewPtrWriteTxnMarkersRequest()
	req.Version = writeTxnMarkersVer
	m := kmsg.NewWriteTxnMarkersRequestMarker()
	m.ProducerID, m.ProducerEpoch, m.Committed, m.CoordinatorEpoch = r.ProducerID, r.ProducerEpoch, r.Commit, r.CoordinatorEpoch
	for _, tp := range tps {
		n := len(m.Topics)
		if n == 0 || m.Topics[n-1].Topic != tp.Topic {
			t := kmsg.NewWriteTxnMarkersRequestMarkerTopic()
			t.Topic = tp.Topic
			m.Topics = append(m.Topics, t)
			n++
		}
		m.Topics[n-1].Partitions = append(m.Topics[n-1].Partitions, tp.Partition)
	}
	req.Markers = []kmsg.WriteTxnMarkersRequestMarker{m}
	return req
}

// markerResults reads a leader's answer (Kafka's
// TransactionMarkerRequestCompletionHandler): written partitions are
// done, a stale producer or coordinator epoch abandons the transaction's
// markers (a newer coordinator or epoch has taken over), anything else,
// including a partition missing from the answer, is tried again.
func markerResults(resp *kmsg.WriteTxnMarkersResponse, tps []txn.TopicPartition) (retry []txn.TopicPartition, stale bool) {
	done := map[txn.TopicPartition]bool{}
	for _, m := range resp.Markers {
		for _, t := range m.Topics {
			for _, p := range t.Partitions {
				switch p.ErrorCode {
				case 0:
					done[txn.TopicPartition{Topic: t.Topic, Partition: p.Partition}] = true
				case kerr.InvalidProducerEpoch.Code, kerr.TransactionCoordinatorFenced.Code:
					return nil, true
				}
			}
		}
	}
	for _, tp := range tps {
		if !done[tp] {
			retry = append(retry, tp)
		}
	}
	return retry, false
}

// brokerMarkerWriter sends WriteTxnMarkers to this node's own handler
// in process, or to another node over the inter-broker listener.
type brokerMarkerWriter struct{ b *Broker }

func (w brokerMarkerWriter) writeTxnMarkers(ctx context.Context, leader int32, req *kmsg.WriteTxnMarkersRequest) (*kmsg.WriteTxnMarkersResponse, error) {
	if leader == w.b.nodeID {
		return w.local(ctx, req)
	}
	c := w.b.repl.client
	if c == nil {
		return nil, fmt.Errorf("no inter-broker client to reach broker %d", leader)
	}
	addr, err := c.leaderAddr(leader)
	if err != nil {
		return nil, err
	}
	pc, err := c.conn(ctx, leader, addr)
	if err != nil {
		return nil, err
	}
	resp := req.ResponseKind().(*kmsg.WriteTxnMarkersResponse)
	if err := c.roundTrip(ctx, pc, req, resp, 0); err != nil {
		pc.c.Close()
		return nil, fmt.Errorf("WriteTxnMarkers to broker %d at %s: %w", leader, addr, err)
	}
	c.release(leader, pc)
	return resp, nil
}

// local calls this node's WriteTxnMarkers handler, waiting for its
// answer if it answers later (markers waiting for acks by the ISR).
func (w brokerMarkerWriter) local(ctx context.Context, req *kmsg.WriteTxnMarkersRequest) (*kmsg.WriteTxnMarkersResponse, error) {
	a := apis[kmsg.WriteTxnMarkers.Int16()]
	if a == nil {
		return nil, errNoMarkerAPI
	}
	r := &vnet.Request{Key: kmsg.WriteTxnMarkers.Int16(), Version: req.Version, ClientID: "varve-txn-coordinator",
		Flexible: req.IsFlexible(), Received: time.Now()}
	later := make(chan vnet.Response, 1)
	kresp := a.serve(w.b, r, req, func(resp vnet.Response) {
		select {
		case later <- resp:
		default:
		}
	})
	var resp *kmsg.WriteTxnMarkersResponse
	var err error
	if kresp != nil {
		var ok bool
		if resp, ok = kresp.(*kmsg.WriteTxnMarkersResponse); !ok {
			return nil, fmt.Errorf("WriteTxnMarkers answered %T", kresp)
		}
	} else {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case vr := <-later:
			if resp, err = decodeLocalResponse(req, vr); err != nil {
				return nil, err
			}
		}
	}
	return resp, nil
}

// decodeLocalResponse decodes a response body a handler sent later.
func decodeLocalResponse(req *kmsg.WriteTxnMarkersRequest, vr vnet.Response) (*kmsg.WriteTxnMarkersResponse, error) {
	var body []byte
	for _, p := range vr.Parts {
		if p.Region != nil {
			return nil, errors.New("WriteTxnMarkers answered with a file region")
		}
		body = append(body, p.Bytes...)
	}
	if vr.Done != nil {
		vr.Done(nil)
	}
	resp := req.ResponseKind().(*kmsg.WriteTxnMarkersResponse)
	resp.SetVersion(req.Version)
	if err := resp.ReadFrom(body); err != nil {
		return nil, fmt.Errorf("decode WriteTxnMarkers response: %w", err)
	}
	return resp, nil
}
