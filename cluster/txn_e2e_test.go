package cluster_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// readAll reads topic from the start up to its end at the isolation
// level given, returning the values in order.
func readAll(t *testing.T, addr, topic string, committed bool, want int) []string {
	t.Helper()
	iso := kgo.ReadUncommitted()
	if committed {
		iso = kgo.ReadCommitted()
	}
	c := client(t, addr, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(iso))
	var out []string
	cx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for len(out) < want {
		fs := c.PollFetches(cx)
		if cx.Err() != nil {
			break
		}
		fs.EachError(func(topic string, p int32, err error) { t.Fatalf("fetch %s/%d: %v", topic, p, err) })
		fs.EachRecord(func(r *kgo.Record) { out = append(out, string(r.Value)) })
	}
	// Nothing beyond what was expected arrives.
	extra, cancel2 := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel2()
	c.PollFetches(extra).EachRecord(func(r *kgo.Record) { out = append(out, string(r.Value)) })
	return out
}

func txnProducer(t *testing.T, addr, id, topic string) *kgo.Client {
	return client(t, addr, kgo.TransactionalID(id), kgo.DefaultProduceTopic(topic), kgo.TransactionTimeout(10*time.Second))
}

func inTxn(t *testing.T, p *kgo.Client, commit bool, values ...string) error {
	t.Helper()
	if err := p.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	for _, v := range values {
		if err := p.ProduceSync(ctx(t), &kgo.Record{Value: []byte(v)}).FirstErr(); err != nil {
			return err
		}
	}
	return p.EndTransaction(ctx(t), kgo.TransactionEndTry(commit))
}

// Kafka: KIP-98. Records of committed transactions are read by
// read_committed and read_uncommitted consumers alike; those of an
// aborted one only by read_uncommitted consumers (the fetch returns the
// aborted transactions and the client drops them).
func TestTransactionsCommitAndAbortVisibility(t *testing.T) {
	b := startBroker(t, t.TempDir(), map[string]string{"transaction.state.log.num.partitions": "4"})
	createTopic(t, b.addr, "tx", 1, nil)
	p := txnProducer(t, b.addr, "vis", "tx")
	for _, step := range []struct {
		commit bool
		values []string
	}{{true, []string{"c1", "c2", "c3"}}, {false, []string{"a1", "a2"}}, {true, []string{"c4"}}} {
		if err := inTxn(t, p, step.commit, step.values...); err != nil {
			t.Fatalf("transaction %v: %v", step.values, err)
		}
	}
	if got := readAll(t, b.addr, "tx", true, 4); fmt.Sprint(got) != "[c1 c2 c3 c4]" {
		t.Errorf("read_committed read %v", got)
	}
	if got := readAll(t, b.addr, "tx", false, 6); fmt.Sprint(got) != "[c1 c2 c3 a1 a2 c4]" {
		t.Errorf("read_uncommitted read %v", got)
	}
}

// Kafka: KIP-98 zombie fencing. A second producer with the same
// transactional id fences the first: the first's open transaction is
// aborted and its commit fails with PRODUCER_FENCED (INVALID_PRODUCER_EPOCH
// for older clients); the second's commits.
func TestTransactionsZombieFenced(t *testing.T) {
	b := startBroker(t, t.TempDir(), map[string]string{"transaction.state.log.num.partitions": "4"})
	createTopic(t, b.addr, "zt", 1, nil)
	zombie := txnProducer(t, b.addr, "same-id", "zt")
	if err := zombie.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := zombie.ProduceSync(ctx(t), &kgo.Record{Value: []byte("zombie")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	fresh := txnProducer(t, b.addr, "same-id", "zt")
	if err := inTxn(t, fresh, true, "fresh"); err != nil {
		t.Fatalf("the new producer: %v", err)
	}
	err := zombie.EndTransaction(ctx(t), kgo.TryCommit)
	if !errors.Is(err, kerr.ProducerFenced) && !errors.Is(err, kerr.InvalidProducerEpoch) {
		t.Fatalf("the zombie's commit: %v, want PRODUCER_FENCED", err)
	}
	if got := readAll(t, b.addr, "zt", true, 1); fmt.Sprint(got) != "[fresh]" {
		t.Errorf("read_committed read %v", got)
	}
}

// Kafka: KIP-98/KIP-447 exactly-once consume-transform-produce. A
// GroupTransactSession copies every input record to the output in
// transactions, and the broker is killed -9 in the middle of one; after
// the restart a new session carries on. A read_committed reader of the
// output sees every input exactly once (eosKillRun).
func TestGroupTransactSessionSurvivesKillNine(t *testing.T) {
	if testing.Short() {
		t.Skip("kills and restarts a broker process")
	}
	dir := t.TempDir()
	os.MkdirAll(dir, 0o755)
	c := startChild(t, dir)
	t.Cleanup(func() { c.kill() })
	createTopic(t, c.addr, "eos-in", 2, nil)
	createTopic(t, c.addr, "eos-out", 2, nil)
	r := &eosKillRun{n: 400, partitionBytes: 2000, budget: 120 * time.Second, after: 90 * time.Second,
		seeds: func() []string { return []string{c.addr} },
		// The only broker dies: the cut transaction is not ended.
		kill:    func() bool { c.kill(); return false },
		restart: func() { c = startChildAt(t, dir, c.addr) },
	}
	live := r.run(t)
	// The transaction cut by the kill left its records in the log,
	// aborted: a read_uncommitted reader sees them too.
	all := readAll(t, live, "eos-out", false, r.n+1)
	if len(all) <= r.n {
		t.Fatalf("read_uncommitted read %d records, want more than %d (the aborted transaction's)", len(all), r.n)
	}
	t.Logf("read_uncommitted: %d records", len(all))
}

// committedInput is how many input records the group has committed.
func committedInput(t *testing.T, adm *kadm.Client) int {
	offs, err := adm.FetchOffsets(ctx(t), "eos-group")
	if err != nil {
		return 0
	}
	total := 0
	offs.Each(func(o kadm.OffsetResponse) {
		if o.Err == nil && o.At > 0 {
			total += int(o.At)
		}
	})
	return total
}

func head(s []string) []string {
	if len(s) > 10 {
		return s[:10]
	}
	return s
}
