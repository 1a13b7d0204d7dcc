package cluster

import (
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	vnet "github.com/varve/varve/net"
	"github.com/varve/varve/txn"
)

// Holding a transactional request while the previous transaction ends.
//
// EndTxn is answered once PrepareCommit or PrepareAbort is written; the
// markers are written afterwards, and until CompleteCommit or
// CompleteAbort is written every request of the transactional id gets
// CONCURRENT_TRANSACTIONS, which the client answers by sleeping its
// retry back-off (20 ms in franz-go and in Kafka's Java client) before
// asking again. A small transaction's next request usually arrives in
// that window, so the sleep would be most of its time. Instead the
// request is held: it is registered, under the partition's mutex, with
// the transactional id's waiters, woken when the coordinator completes
// the transaction (or stops coordinating the partition), and then asked
// again, as if it had arrived then. A request is held at most
// txnHoldMax, far below a client's request timeout (30 s by default in
// both clients); past it, the answer stands, CONCURRENT_TRANSACTIONS.
// The coordinator itself (package txn) stays deterministic: it only
// answers CONCURRENT_TRANSACTIONS; the waiting is here.

// txnHoldMax bounds how long a request is held.
var txnHoldMax = 5 * time.Second // a variable for tests

// txnWaiters are the held requests, by transactional id.
type txnWaiters struct {
	mu sync.Mutex
	m  map[string][]chan struct{}
}

// add registers a waiter for id. REQUIRES: the shard mutex of id held,
// so that a completion cannot fall between the answer and the wait.
func (w *txnWaiters) add(id string) <-chan struct{} {
	ch := make(chan struct{})
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.m == nil {
		w.m = map[string][]chan struct{}{}
	}
	w.m[id] = append(w.m[id], ch)
	return ch
}

// wake releases id's waiters.
func (w *txnWaiters) wake(id string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, ch := range w.m[id] {
		close(ch)
	}
	delete(w.m, id)
}

// wakeAll releases every waiter.
func (w *txnWaiters) wakeAll() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, chs := range w.m {
		for _, ch := range chs {
			close(ch)
		}
	}
	w.m = nil
}

// try runs fn on id's coordinator, which reports whether its answer was
// CONCURRENT_TRANSACTIONS; if so, a waiter is registered and returned.
func (tc *txnCoordinator) try(id string, fn func(c *txn.Coordinator) bool) <-chan struct{} {
	var ch <-chan struct{}
	tc.do(id, func(c *txn.Coordinator) {
		if fn(c) {
			ch = tc.waiters.add(id)
		}
	})
	return ch
}

// hold runs fn until its answer is not CONCURRENT_TRANSACTIONS, waiting
// for id's transaction to complete between tries, for at most
// txnHoldMax; it blocks its caller.
func (tc *txnCoordinator) hold(id string, fn func(c *txn.Coordinator) bool) {
	tc.holdFrom(id, tc.try(id, fn), fn)
}

func (tc *txnCoordinator) holdFrom(id string, ch <-chan struct{}, fn func(c *txn.Coordinator) bool) {
	deadline := time.NewTimer(txnHoldMax)
	defer deadline.Stop()
	for ch != nil {
		select {
		case <-ch:
		case <-deadline.C:
			return // the last answer, CONCURRENT_TRANSACTIONS, stands
		case <-tc.stop:
			return
		}
		ch = tc.try(id, fn)
	}
}

// answerHeld answers a coordinator request: at once if fn's first
// answer is final, else later, from a goroutine, once the transaction
// it waits for completes (or the hold ends). fill writes fn's last
// answer into the response, which is then returned or sent.
func (b *Broker) answerHeld(id string, version int16, respond func(vnet.Response), fn func(c *txn.Coordinator) bool,
	fill func() kmsg.Response) kmsg.Response {
	ch := b.txns.try(id, fn)
	if ch == nil {
		return fill()
	}
	b.txns.done.Add(1)
	go func() {
		defer b.txns.done.Done()
		b.txns.holdFrom(id, ch, fn)
		resp := fill()
		resp.SetVersion(version)
		respond(bytesResponse(resp.AppendTo(nil)))
	}()
	return nil
}

// concurrent reports whether code asks the client to retry later.
func concurrent(code int16) bool { return code == kerr.ConcurrentTransactions.Code }
