package cluster

// KIP-890 part 1 across nodes: the leader of a partition asks the
// coordinator of a transactional id, on another node, whether the
// partition is in the producer's ongoing transaction, with
// AddPartitionsToTxn v4 (verify_only) over the inter-broker listener
// (Kafka's AddPartitionsToTxnManager).
//
// The questions are batched per coordinator node: at most one request
// is in flight to a node, and the questions asked meanwhile wait in the
// next batch, which is sent when the answer arrives. In a batch, one
// transactional id is asked once: the partitions of the same producer id
// and epoch are merged; a question with a newer producer (epoch) takes
// the place of an older one, whose askers are answered
// INVALID_PRODUCER_EPOCH, as an older epoch's produce would be by the
// coordinator. A batch that cannot be sent (no connection, the node
// unknown) answers NETWORK_EXCEPTION; a top-level error of the answer
// answers every question with it, but CLUSTER_AUTHORIZATION_FAILED (the
// inter-broker principal lacks ClusterAction) is INVALID_TXN_STATE, as
// Kafka's AddPartitionsToTxnManager says.

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/varve/varve/txn"
)

// verifyVersion is the AddPartitionsToTxn version brokers send to
// verify, addVersion the one they add partitions with: both the latest,
// as Kafka's AddPartitionsToTxnManager sends, so that a partition
// outside the transaction is TRANSACTION_ABORTABLE and the asker maps
// it for its client (verifiedFor).
const (
	verifyVersion = 5
	addVersion    = 5
)

// verifySender sends one verify-only request to a node.
type verifySender func(ctx context.Context, node int32, req *kmsg.AddPartitionsToTxnRequest) (*kmsg.AddPartitionsToTxnResponse, error)

// txnVerifier batches verify-only questions per coordinator node.
type txnVerifier struct {
	send    verifySender
	timeout time.Duration // a request's wait for its answer
	// add sends the questions as additions (verify_only false, version
	// addVersion): KIP-890 part 2's produce v12 and TxnOffsetCommit v5.
	add bool

	mu    sync.Mutex
	nodes map[int32]*verifyNode
}

type verifyNode struct {
	inFlight bool
	next     *verifyBatch // the batch filling while one is in flight; nil if none
}

// verifyBatch is one request's questions and, once done is closed, its
// answers.
type verifyBatch struct {
	txns  map[string]*verifyTxn
	done  chan struct{}
	err   int16 // an error of the whole batch
	codes map[string]map[txn.TopicPartition]int16
}

type verifyTxn struct {
	producerID int64
	epoch      int16
	tps        []txn.TopicPartition
}

func newTxnVerifier(send verifySender, timeout time.Duration) *txnVerifier {
	return &txnVerifier{send: send, timeout: timeout, nodes: map[int32]*verifyNode{}}
}

// verify asks node whether tp is in the ongoing transaction of id with
// the producer id and epoch, and returns its code.
func (v *txnVerifier) verify(node int32, id string, producerID int64, epoch int16, tp txn.TopicPartition) int16 {
	bt, code := v.enqueue(node, id, producerID, epoch, tp)
	if code != 0 {
		return code
	}
	select {
	case <-bt.done:
	case <-time.After(v.timeout + time.Second): // the sender's own timeout comes first
		return kerr.RequestTimedOut.Code
	}
	if bt.err != 0 {
		return bt.err
	}
	if t := bt.txns[id]; t.producerID != producerID || t.epoch != epoch {
		return kerr.InvalidProducerEpoch.Code // a newer producer took its place
	}
	code, ok := bt.codes[id][tp]
	if !ok {
		return kerr.UnknownServerError.Code // the answer left the partition out
	}
	return code
}

// enqueue adds the question to node's next batch and starts its sender
// if none runs.
func (v *txnVerifier) enqueue(node int32, id string, producerID int64, epoch int16, tp txn.TopicPartition) (*verifyBatch, int16) {
	v.mu.Lock()
	defer v.mu.Unlock()
	n := v.nodes[node]
	if n == nil {
		n = &verifyNode{}
		v.nodes[node] = n
	}
	if n.next == nil {
		n.next = &verifyBatch{txns: map[string]*verifyTxn{}, done: make(chan struct{})}
	}
	bt := n.next
	switch t := bt.txns[id]; {
	case t == nil:
		bt.txns[id] = &verifyTxn{producerID: producerID, epoch: epoch, tps: []txn.TopicPartition{tp}}
	case t.producerID == producerID && t.epoch == epoch:
		t.tps = append(t.tps, tp)
	case t.producerID == producerID && epoch < t.epoch:
		return nil, kerr.InvalidProducerEpoch.Code
	default:
		bt.txns[id] = &verifyTxn{producerID: producerID, epoch: epoch, tps: []txn.TopicPartition{tp}}
	}
	if !n.inFlight {
		n.inFlight = true
		go v.run(node, n)
	}
	return bt, 0
}

// run sends node's batches one at a time until none is waiting.
func (v *txnVerifier) run(node int32, n *verifyNode) {
	for {
		v.mu.Lock()
		bt := n.next
		n.next = nil
		if bt == nil {
			n.inFlight = false
			v.mu.Unlock()
			return
		}
		v.mu.Unlock()
		v.sendBatch(node, bt)
		close(bt.done)
	}
}

func (v *txnVerifier) sendBatch(node int32, bt *verifyBatch) {
	req := kmsg.NewPtrAddPartitionsToTxnRequest()
	req.Version = verifyVersion
	if v.add {
		req.Version = addVersion
	}
	for id, t := range bt.txns {
		rt := kmsg.NewAddPartitionsToTxnRequestTransaction()
		rt.TransactionalID, rt.ProducerID, rt.ProducerEpoch, rt.VerifyOnly = id, t.producerID, t.epoch, !v.add
		for _, tp := range t.tps {
			n := len(rt.Topics)
			if n == 0 || rt.Topics[n-1].Topic != tp.Topic {
				rt.Topics = append(rt.Topics, kmsg.AddPartitionsToTxnRequestTransactionTopic{Topic: tp.Topic})
				n++
			}
			rt.Topics[n-1].Partitions = append(rt.Topics[n-1].Partitions, tp.Partition)
		}
		req.Transactions = append(req.Transactions, rt)
	}
	ctx, cancel := context.WithTimeout(context.Background(), v.timeout)
	defer cancel()
	resp, err := v.send(ctx, node, req)
	switch {
	case err != nil:
		bt.err = kerr.NetworkException.Code
		return
	case resp.ErrorCode == kerr.ClusterAuthorizationFailed.Code:
		// Kafka: the client is not told of the brokers' own
		// authorization, only that the verification did not complete.
		bt.err = kerr.InvalidTxnState.Code
		return
	case resp.ErrorCode != 0:
		bt.err = resp.ErrorCode
		return
	}
	bt.codes = map[string]map[txn.TopicPartition]int16{}
	for _, rt := range resp.Transactions {
		codes := map[txn.TopicPartition]int16{}
		for _, t := range rt.Topics {
			for _, p := range t.Partitions {
				codes[txn.TopicPartition{Topic: t.Topic, Partition: p.Partition}] = p.ErrorCode
			}
		}
		bt.codes[rt.TransactionalID] = codes
	}
}

// sendVerify is the broker's verifySender: the request goes over the
// inter-broker listener, as the replica fetchers' and the markers' do.
func (b *Broker) sendVerify(ctx context.Context, node int32, req *kmsg.AddPartitionsToTxnRequest) (*kmsg.AddPartitionsToTxnResponse, error) {
	c := b.repl.client
	if c == nil {
		return nil, fmt.Errorf("no inter-broker client to reach broker %d", node)
	}
	addr, err := c.leaderAddr(node)
	if err != nil {
		return nil, err
	}
	pc, err := c.conn(ctx, node, addr)
	if err != nil {
		return nil, err
	}
	resp := req.ResponseKind().(*kmsg.AddPartitionsToTxnResponse)
	if err := c.roundTrip(ctx, pc, req, resp, 0); err != nil {
		pc.c.Close()
		return nil, fmt.Errorf("AddPartitionsToTxn to broker %d at %s: %w", node, addr, err)
	}
	c.release(node, pc)
	return resp, nil
}

// txnCoordinatorNode is the node leading the __transaction_state
// partition of id; false if none does.
func (b *Broker) txnCoordinatorNode(id string) (int32, bool) {
	t, ok := b.meta.image().Topic(txn.Topic)
	if !ok || len(t.Partitions) == 0 {
		return -1, false
	}
	leader := t.Partitions[txn.PartitionFor(id, len(t.Partitions))].Leader
	return leader, leader >= 0
}
