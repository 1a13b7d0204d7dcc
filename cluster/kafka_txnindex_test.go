package cluster_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
)

// kafkaTxnFixture is a log dir a Kafka 4.4.0 broker left at a clean
// shutdown with partition txnfixture-0: four transactions of one
// producer, the second aborted, its .txnindex naming it
// (internal/kafkafixtures/README.md).
const kafkaTxnFixture = "../internal/kafkafixtures/testdata/kafka-4.4.0-txn"

// Kafka: a read_committed fetch returns the aborted transactions of the
// fetched range from the segments' .txnindex files
// (UnifiedLog.collectAbortedTransactions), and the consumer drops their
// records (KIP-98). A Kafka partition copied into a Varve node is
// served the same way: with Kafka's clean-shutdown marker beside it
// Varve trusts Kafka's .txnindex as it is; without, it recovers the
// segment and rebuilds the index from the markers. Either way a
// read_committed consumer sees the three committed transactions and not
// the aborted one among them, and a read_uncommitted one sees all.
func TestKafkaTxnIndexServedToReadCommitted(t *testing.T) {
	committed := []string{"txn0-committed-0", "txn0-committed-1", "txn0-committed-2",
		"txn2-committed-0", "txn2-committed-1", "txn2-committed-2"}
	for i := range 3 { // the fourth transaction's, padded to 2,000 bytes
		v := fmt.Sprintf("txn3-committed-%d-", i)
		committed = append(committed, v+strings.Repeat("x", 2000-len(v)))
	}
	all := slices.Concat(committed[:3], []string{"txn1-aborted-0", "txn1-aborted-1", "txn1-aborted-2"}, committed[3:])
	for _, tc := range []struct {
		name   string
		marker bool
	}{{"clean shutdown: Kafka's index trusted", true}, {"no marker: index rebuilt", false}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			src := filepath.Join(kafkaTxnFixture, "txnfixture-0")
			if err := os.CopyFS(filepath.Join(dir, "txnfixture-0"), os.DirFS(src)); err != nil {
				t.Fatal(err)
			}
			if tc.marker {
				data, err := os.ReadFile(filepath.Join(kafkaTxnFixture, ".kafka_cleanshutdown"))
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, ".kafka_cleanshutdown"), data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			b := startBroker(t, dir, nil)
			if got := consumeValues(t, b.addr, "txnfixture", len(committed), kgo.ReadCommitted()); !slices.Equal(got, committed) {
				t.Errorf("read_committed consumed %q, want %q", got, committed)
			}
			if got := consumeValues(t, b.addr, "txnfixture", len(all), kgo.ReadUncommitted()); !slices.Equal(got, all) {
				t.Errorf("read_uncommitted consumed %q, want %q", got, all)
			}
		})
	}
}
