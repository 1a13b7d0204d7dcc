package cluster_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Kafka: KIP-226 DynamicThreadPool and SocketServer.resizeProcessorCount:
// num.io.threads and num.network.threads change on a running node, per
// node and at the cluster default, while producers and consumers run;
// nothing is lost or duplicated and the node reports the new counts.
func TestDynamicThreadCountsUnderLoad(t *testing.T) {
	b := startBroker(t, t.TempDir(), nil) // num.io.threads 4, num.network.threads 2
	createTopic(t, b.addr, "threads", 3, nil)
	adm := kadm.NewClient(client(t, b.addr))
	checkThreads(t, b, 4, 2)

	pctx, stop := context.WithCancel(context.Background())
	defer stop()
	var wg sync.WaitGroup
	var mu sync.Mutex
	produced := 0
	for p := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cl := client(t, b.addr, kgo.DefaultProduceTopic("threads"))
			for i := 0; pctx.Err() == nil; i++ {
				v := strconv.Itoa(p) + "-" + strconv.Itoa(i)
				if err := cl.ProduceSync(ctx(t), &kgo.Record{Value: []byte(v)}).FirstErr(); err != nil {
					t.Errorf("produce %s: %v", v, err)
					return
				}
				mu.Lock()
				produced++
				mu.Unlock()
			}
		}()
	}
	seen := map[string]int{}
	var cwg sync.WaitGroup
	cctx, cstop := context.WithCancel(context.Background())
	defer cstop()
	cwg.Add(1)
	go func() {
		defer cwg.Done()
		c := client(t, b.addr, kgo.ConsumeTopics("threads"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
		for cctx.Err() == nil {
			fs := c.PollFetches(cctx)
			for _, r := range fs.Records() {
				mu.Lock()
				seen[string(r.Value)]++
				mu.Unlock()
			}
		}
	}()

	steps := []struct {
		kv      map[string]*string
		brokers []int32
		io, net int64
	}{
		{map[string]*string{"num.io.threads": sp("8"), "num.network.threads": sp("4")}, []int32{1}, 8, 4},
		{map[string]*string{"num.io.threads": sp("5"), "num.network.threads": sp("3")}, nil, 8, 4}, // the node's own win
		{map[string]*string{"num.io.threads": nil, "num.network.threads": nil}, []int32{1}, 5, 3},
		{map[string]*string{"num.io.threads": sp("3"), "num.network.threads": sp("2")}, nil, 3, 2},
	}
	for _, s := range steps {
		time.Sleep(150 * time.Millisecond)
		mustSetBroker(t, adm, s.kv, s.brokers...)
		checkThreads(t, b, s.io, s.net)
		if c, _ := brokerConfig(t, adm, "num.io.threads", 1); c.MaybeValue() != strconv.Itoa(int(s.io)) {
			t.Errorf("described num.io.threads = %q, want %d", c.MaybeValue(), s.io)
		}
	}
	time.Sleep(150 * time.Millisecond)
	stop()
	wg.Wait()
	deadline := time.Now().Add(20 * time.Second)
	for {
		mu.Lock()
		n, want := len(seen), produced
		mu.Unlock()
		if n == want {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("consumed %d distinct records of %d produced", n, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
	cstop()
	cwg.Wait()
	for v, n := range seen {
		if n != 1 {
			t.Errorf("record %s consumed %d times", v, n)
		}
	}
	if produced < 10 {
		t.Errorf("only %d records produced during the changes", produced)
	}
}

// checkThreads waits for the node's servers to report the counts: the
// handler pool's shrink finishes as handlers end their requests.
func checkThreads(t *testing.T, b *testBroker, io, network int64) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		st := b.NetStats()
		if st.IOThreads == io && st.IOThreadsRunning == io && st.NetworkThreads == network && int64(len(st.Processors)) == network {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("io threads %d (running %d), network threads %d (%d processors); want %d and %d",
				st.IOThreads, st.IOThreadsRunning, st.NetworkThreads, len(st.Processors), io, network)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Kafka: DynamicThreadPool.validateReconfiguration: a new thread count
// must be at least half and at most twice the current one, refused
// INVALID_REQUEST with Kafka's message; the count stays as it was.
func TestDynamicThreadCountsBounds(t *testing.T) {
	b := startBroker(t, t.TempDir(), nil) // num.io.threads 4, num.network.threads 2
	adm := kadm.NewClient(client(t, b.addr))
	cases := []struct {
		name, value string
		brokers     []int32
		msg         string
	}{
		{"num.io.threads", "9", []int32{1}, "Dynamic thread count update validation failed for num.io.threads=9, value should not be greater than double the current value 4"},
		{"num.io.threads", "1", nil, "Dynamic thread count update validation failed for num.io.threads=1, value should be at least half the current value 4"},
		{"num.network.threads", "5", nil, "Dynamic thread count update validation failed for num.network.threads=5, value should not be greater than double the current value 2"},
		{"num.network.threads", "0", []int32{1}, "Invalid value 0 for configuration num.network.threads"},
	}
	for _, c := range cases {
		err, msg := setBroker(t, adm, map[string]*string{c.name: sp(c.value)}, c.brokers...)
		if !errors.Is(err, kerr.InvalidRequest) || !strings.Contains(msg, c.msg) {
			t.Errorf("set %s=%s on %v: %v %q, want INVALID_REQUEST %q", c.name, c.value, c.brokers, err, msg, c.msg)
		}
	}
	checkThreads(t, b, 4, 2)
	// The bounds: half (integer division) and twice.
	mustSetBroker(t, adm, map[string]*string{"num.io.threads": sp("2"), "num.network.threads": sp("1")}, 1)
	checkThreads(t, b, 2, 1)
	mustSetBroker(t, adm, map[string]*string{"num.io.threads": sp("4"), "num.network.threads": sp("2")}, 1)
	checkThreads(t, b, 4, 2)
}

// Kafka: KIP-226: dynamic settings outlive a restart; the node starts
// with the thread counts stored, not its static ones.
func TestDynamicThreadCountsAfterRestart(t *testing.T) {
	dir := t.TempDir()
	b := startBroker(t, dir, nil) // num.io.threads 4, num.network.threads 2
	mustSetBroker(t, kadm.NewClient(client(t, b.addr)), map[string]*string{"num.io.threads": sp("6"), "num.network.threads": sp("3")}, 1)
	checkThreads(t, b, 6, 3)
	b.stop(t)
	b = startBroker(t, dir, nil)
	checkThreads(t, b, 6, 3)
	cl := client(t, b.addr, kgo.DefaultProduceTopic("after"), kgo.AllowAutoTopicCreation())
	produceSync(t, cl, &kgo.Record{Value: []byte("v")})
}
