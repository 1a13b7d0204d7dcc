package cluster_test

import (
	"crypto/rand"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// throttledBroker starts a broker over two log dirs whose moves copy at
// rate bytes per second, measured over windows windows of 1 s (two:
// Kafka's initial allowance is one window, not ten). It returns the
// broker, the dir topic's partition 0 is created in, and the other.
func throttledBroker(t *testing.T, topic, rate, windows string) (*testBroker, string, string) {
	t.Helper()
	d1, d2 := t.TempDir(), t.TempDir()
	d1, _ = filepath.Abs(d1)
	d2, _ = filepath.Abs(d2)
	b := startBroker(t, d1, map[string]string{"log.dirs": d1 + "," + d2,
		"replica.alter.log.dirs.io.max.bytes.per.second": rate,
		"alter.log.dirs.replication.quota.window.num":    windows})
	createTopic(t, b.addr, topic, 1, map[string]*string{"segment.bytes": ptr("262144")})
	src := describeReplicas(t, b.addr, topic, 0)[0].dir
	if src == d2 {
		return b, d2, d1
	}
	return b, d1, d2
}

func produceBulk(t *testing.T, prod *kgo.Client, n, size int) {
	t.Helper()
	var bulk []*kgo.Record
	for i := 0; i < n; i++ {
		v := make([]byte, size) // random: the client's compression keeps the size
		rand.Read(v)
		bulk = append(bulk, &kgo.Record{Value: fmt.Appendf(nil, "bulk-%d-%x", i, v)})
	}
	produceSync(t, prod, bulk...)
}

// pacedProducer produces one record every 5 ms until stopped, and
// returns what was acknowledged, by offset.
func pacedProducer(t *testing.T, prod *kgo.Client) (stop func() map[int64]string) {
	var mu sync.Mutex
	acked := map[int64]string{}
	var errs []error
	done, quit := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; ; i++ {
			select {
			case <-quit:
				return
			case <-time.After(5 * time.Millisecond):
			}
			r := &kgo.Record{Value: fmt.Appendf(nil, "live-%d", i)}
			if err := prod.ProduceSync(ctx(t), r).FirstErr(); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
				return
			}
			mu.Lock()
			acked[r.Offset] = string(r.Value)
			mu.Unlock()
		}
	}()
	return func() map[int64]string {
		close(quit)
		<-done
		mu.Lock()
		defer mu.Unlock()
		if len(errs) > 0 {
			t.Fatalf("producing during the move: %v", errs)
		}
		return acked
	}
}

// checkMovedWithAll waits for the move to end, then checks every record
// is there at its offset.
func checkMovedWithAll(t *testing.T, b *testBroker, topic, dst string, bulk int, acked map[int64]string) {
	t.Helper()
	waitFor(t, 60*time.Second, "the partition in the destination only", func() bool {
		r := describeReplicas(t, b.addr, topic, 0)
		return len(r) == 1 && r[0].dir == dst && !r[0].future
	})
	got := consumeN(t, b.addr, topic, bulk+len(acked))
	for i, r := range got {
		if r.Offset != int64(i) {
			t.Fatalf("record %d has offset %d", i, r.Offset)
		}
		if want, ok := acked[r.Offset]; ok && string(r.Value) != want {
			t.Fatalf("offset %d: %q, want %q", r.Offset, r.Value, want)
		}
		if i < bulk && !strings.HasPrefix(string(r.Value), fmt.Sprintf("bulk-%d-", i)) {
			t.Fatalf("offset %d: %.20q, want bulk record %d", i, r.Value, i)
		}
	}
}

// Kafka: replica.alter.log.dirs.io.max.bytes.per.second (KIP-113): a
// move copying at 256 KiB/s a 1.3 MB partition that a producer keeps
// appending to is seen under way (its future replica reported by
// DescribeLogDirs) and still ends, with every acknowledged record at
// its offset.
func TestAlterReplicaLogDirsThrottledUnderLiveTraffic(t *testing.T) {
	b, _, dst := throttledBroker(t, "slow", "262144", "2")
	prod := client(t, b.addr, kgo.DefaultProduceTopic("slow"), kgo.RecordRetries(1000), kgo.ProducerBatchMaxBytes(64<<10),
		kgo.RetryBackoffFn(func(int) time.Duration { return 5 * time.Millisecond }))
	produceBulk(t, prod, 3000, 200)
	stop := pacedProducer(t, prod)
	if code := alterLogDirs(t, b.addr, dst, "slow", 0); code != 0 {
		t.Fatalf("alter: code %d", code)
	}
	// At 256 KiB/s the copy takes seconds: the future is seen.
	waitFor(t, 30*time.Second, "the future replica under way", func() bool {
		for _, r := range describeReplicas(t, b.addr, "slow", 0) {
			if r.future && r.dir == dst {
				return true
			}
		}
		return false
	})
	waitFor(t, 60*time.Second, "the move to end", func() bool {
		r := describeReplicas(t, b.addr, "slow", 0)
		return len(r) == 1 && r[0].dir == dst
	})
	acked := stop()
	if len(acked) == 0 {
		t.Fatal("nothing produced during the move")
	}
	checkMovedWithAll(t, b, "slow", dst, 3000, acked)
}

// Kafka: replica.alter.log.dirs.io.max.bytes.per.second is a dynamic
// broker setting (ConfigHandler updates the alter-log-dirs quota): a
// move crawling at 1 B/s (one batch of the 50 copied every 11 s) ends
// once IncrementalAlterConfigs raises the rate, the copy under way
// taking the new rate.
func TestAlterReplicaLogDirsRateChangesLive(t *testing.T) {
	b, _, dst := throttledBroker(t, "crawl", "1", "11")
	prod := client(t, b.addr, kgo.DefaultProduceTopic("crawl"), kgo.ProducerBatchMaxBytes(16<<10))
	produceBulk(t, prod, 2000, 200)
	if code := alterLogDirs(t, b.addr, dst, "crawl", 0); code != 0 {
		t.Fatalf("alter: code %d", code)
	}
	var fut replicaIn
	waitFor(t, 30*time.Second, "the future replica under way", func() bool {
		for _, r := range describeReplicas(t, b.addr, "crawl", 0) {
			if r.future {
				fut = r
				return r.size > 0
			}
		}
		return false
	})
	if fut.lag <= 0 {
		t.Fatalf("at 1 B/s: future %+v, want it lagging", fut)
	}
	mustSetBroker(t, kadm.NewClient(client(t, b.addr)),
		map[string]*string{"replica.alter.log.dirs.io.max.bytes.per.second": sp("104857600")})
	checkMovedWithAll(t, b, "crawl", dst, 2000, nil)
}
