package cluster_test

import (
	"context"
	"errors"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

var errKilled = errors.New("broker killed mid-transaction")

// eosKillRun is one exactly-once kill test (Kafka: KIP-98 and KIP-447
// consume-transform-produce): a GroupTransactSession copies eos-in, n
// records already produced, to eos-out in transactions; once a third is
// copied, a node is killed -9 in the middle of a transaction, with the
// round's records produced and not committed; the copy carries on until
// the group has committed every input, and a read_committed reader of
// eos-out must see each input exactly once.
type eosKillRun struct {
	n int
	// seeds are the addresses to reach the cluster at now (the nodes
	// left, or the restarted one).
	seeds func() []string
	// partitionBytes is the session's FetchMaxPartitionBytes: small, so
	// the copy takes many transactions.
	partitionBytes int32
	// budget bounds the whole run; after bounds the copy after the kill.
	budget, after time.Duration
	// kill kills the node and says whether the session still ends the
	// cut transaction (another node takes over) or not (the only broker
	// is gone).
	kill func() (endCut bool)
	// restart, if set, brings the cluster back after the kill; the
	// session is then a new one, as an application restarting would
	// make.
	restart func()

	copied int
}

// session is the copier's GroupTransactSession; the group's session
// timeout is short, so a killed member leaves the group at
// group.min.session.timeout.ms.
func (r *eosKillRun) session(t *testing.T) *kgo.GroupTransactSession {
	s, err := kgo.NewGroupTransactSession(kgo.SeedBrokers(r.seeds()...), kgo.TransactionalID("eos-copier"),
		kgo.ConsumerGroup("eos-group"), kgo.ConsumeTopics("eos-in"), kgo.DefaultProduceTopic("eos-out"),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.TransactionTimeout(10*time.Second), kgo.FetchMaxPartitionBytes(r.partitionBytes), kgo.RetryTimeout(60*time.Second),
		kgo.SessionTimeout(6*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// produceInput writes the n input records to eos-in.
func (r *eosKillRun) produceInput(t *testing.T) {
	in := client(t, r.seeds()[0], kgo.DefaultProduceTopic("eos-in"))
	defer in.Close()
	for i := range r.n {
		produceSync(t, in, &kgo.Record{Key: []byte(strconv.Itoa(i % 7)), Value: []byte(strconv.Itoa(i))})
	}
}

// round copies one polled batch in a transaction. With kill, the node
// dies after the records are produced and before End, and the round
// returns errKilled.
func (r *eosKillRun) round(t *testing.T, s *kgo.GroupTransactSession, cx context.Context, kill bool) error {
	fs := s.PollFetches(cx)
	if err := fs.Err0(); err != nil {
		return err
	}
	if err := s.Begin(); err != nil {
		// An End that failed (the coordinator restarting or moving)
		// can leave the session inside its transaction: abort it, so
		// the next round begins a new one.
		s.End(cx, kgo.TryAbort)
		return err
	}
	var recs []*kgo.Record
	fs.EachRecord(func(rec *kgo.Record) { recs = append(recs, &kgo.Record{Key: rec.Key, Value: rec.Value}) })
	if err := s.ProduceSync(cx, recs...).FirstErr(); err != nil {
		s.End(cx, kgo.TryAbort)
		return err
	}
	cut := kill && len(recs) > 0
	if cut && !r.kill() {
		return errKilled
	}
	// After a kill the session ends its transaction against whichever
	// node now coordinates it: committed or aborted, never both.
	committed, err := s.End(cx, kgo.TryCommit)
	if committed {
		r.copied += len(recs)
	}
	if cut {
		t.Logf("the transaction cut by the kill: committed %v, %v", committed, err)
		return errKilled
	}
	return err
}

// run copies, kills, carries on, and checks that read_committed sees
// each input exactly once; it returns the address it read at.
func (r *eosKillRun) run(t *testing.T) string {
	r.produceInput(t)
	s := r.session(t)
	cx, cancel := context.WithTimeout(context.Background(), r.budget)
	defer cancel()
	for r.copied < r.n/3 && cx.Err() == nil {
		if err := r.round(t, s, cx, false); err != nil {
			t.Logf("round before the kill: %v", err)
		}
	}
	// Killed once a round has produced records: they are in the log,
	// their transaction open.
	for cx.Err() == nil {
		if err := r.round(t, s, cx, true); errors.Is(err, errKilled) {
			break
		}
	}
	t.Logf("killed mid-transaction after %d of %d records copied", r.copied, r.n)
	if r.restart != nil {
		s.Close()
		r.restart()
		s = r.session(t)
	}
	defer func() { s.Close() }()
	s = r.carryOn(t, s, cx)
	live := r.seeds()[0]
	r.checkExactlyOnce(t, live)
	return live
}

// carryOn copies until the group has committed every input. If the
// failover outlasted the transaction timeout, the coordinator aborted
// the cut transaction itself and fenced the producer (Kafka: at
// transaction version 2 its epoch is bumped, and the client's late
// EndTxn is PRODUCER_FENCED, fatal to that producer); an application
// then starts a new producer with the same transactional id, and so
// does the test. It returns the session in use.
func (r *eosKillRun) carryOn(t *testing.T, s *kgo.GroupTransactSession, cx context.Context) *kgo.GroupTransactSession {
	adm := kadm.NewClient(client(t, r.seeds()[0]))
	deadline := time.Now().Add(r.after)
	for time.Now().Before(deadline) && committedInput(t, adm) < r.n {
		rctx, rcancel := context.WithTimeout(cx, 5*time.Second)
		err := r.round(t, s, rctx, false)
		if err != nil && !errors.Is(err, context.DeadlineExceeded) {
			t.Logf("round after the kill: %v", err)
		}
		if errors.Is(err, kerr.ProducerFenced) {
			s.Close()
			s = r.session(t)
		}
		rcancel()
	}
	return s
}

// checkExactlyOnce reads eos-out read_committed at addr: every input
// once, nothing else.
func (r *eosKillRun) checkExactlyOnce(t *testing.T, addr string) {
	t.Helper()
	got := readAll(t, addr, "eos-out", true, r.n)
	seen := map[string]int{}
	for _, v := range got {
		seen[v]++
	}
	var missing, dup []string
	for i := range r.n {
		switch seen[strconv.Itoa(i)] {
		case 0:
			missing = append(missing, strconv.Itoa(i))
		case 1:
		default:
			dup = append(dup, strconv.Itoa(i))
		}
	}
	sort.Strings(dup)
	if len(missing) > 0 || len(dup) > 0 || len(got) != r.n {
		t.Fatalf("read_committed output: %d records, %d inputs missing (%v), %d duplicated (%v)",
			len(got), len(missing), head(missing), len(dup), head(dup))
	}
	t.Logf("read_committed: %d records, each input once", len(got))
}
