package cluster_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
)

// BenchmarkTransactionalProduce: 100-byte records produced by franz-go
// through one broker, in transactions of 1, 10 and 1,000 records, and
// without transactions (idempotent, flushed every 1,000 records) as the
// baseline. The cost of a transaction (AddPartitionsToTxn, EndTxn, the
// marker and its Complete record) is paid per transaction, so the ratio
// to the baseline, read off one run, is what to compare:
//
//	go test -run '^$' -bench TransactionalProduce ./cluster
func BenchmarkTransactionalProduce(b *testing.B) {
	br := startBroker(b, b.TempDir(), map[string]string{"transaction.state.log.num.partitions": "1"})
	createTopic(b, br.addr, "bench-txn", 1, nil)
	value := make([]byte, 100)
	for _, per := range []int{0, 1, 10, 1000} {
		name := fmt.Sprintf("records_per_txn=%d", per)
		if per == 0 {
			name = "no_transactions"
		}
		b.Run(name, func(b *testing.B) {
			opts := []kgo.Opt{kgo.DefaultProduceTopic("bench-txn")}
			if per > 0 {
				opts = append(opts, kgo.TransactionalID(name))
			}
			cl := client(b, br.addr, opts...)
			cx := context.Background()
			batch := per
			if per == 0 {
				batch = 1000
			}
			b.SetBytes(int64(len(value)))
			b.ResetTimer()
			for done := 0; done < b.N; {
				n := min(batch, b.N-done)
				if err := produceRound(cx, cl, per > 0, value, n); err != nil {
					b.Fatal(err)
				}
				done += n
			}
		})
	}
}

// produceRound produces n records, in one transaction if txn.
func produceRound(cx context.Context, cl *kgo.Client, txn bool, value []byte, n int) error {
	if txn {
		if err := cl.BeginTransaction(); err != nil {
			return err
		}
	}
	var mu sync.Mutex
	var firstErr error
	for range n {
		cl.Produce(cx, &kgo.Record{Value: value}, func(_ *kgo.Record, err error) {
			mu.Lock()
			defer mu.Unlock()
			if err != nil && firstErr == nil {
				firstErr = err
			}
		})
	}
	if err := cl.Flush(cx); err != nil {
		return err
	}
	mu.Lock()
	defer mu.Unlock()
	if firstErr != nil {
		return firstErr
	}
	if txn {
		return cl.EndTransaction(cx, kgo.TryCommit)
	}
	return nil
}
