package cluster_test

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/varve/varve/cluster"
	"github.com/varve/varve/config"
)

// syncBuffer is a log sink safe for the broker's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// Kafka: a broker whose metadata names a partition its log dirs lack
// recreates it (KRaft's log manager creates the logs the metadata image
// assigns it). A partition directory deleted between two runs must not
// hang start-up: the broker recreates it empty, says so in a WARN line
// naming the directory, and listens.
func TestStartRecreatesMissingPartitionDir(t *testing.T) {
	dir := t.TempDir()
	b := startBroker(t, dir, nil)
	createTopic(t, b.addr, "holes", 2, nil)
	produceSync(t, client(t, b.addr, kgo.RecordPartitioner(kgo.ManualPartitioner())), &kgo.Record{Topic: "holes", Partition: 0, Value: []byte("kept")})
	b.stop(t)
	missing := filepath.Join(dir, "holes-1")
	if err := os.RemoveAll(missing); err != nil {
		t.Fatal(err)
	}

	var logs syncBuffer
	cfg, err := config.Parse(map[string]string{
		"log.dirs": dir, "listeners": "PLAINTEXT://127.0.0.1:0", "varve.metrics.listener": "",
	})
	if err != nil {
		t.Fatal(err)
	}
	started := make(chan *cluster.Broker, 1)
	errs := make(chan error, 1)
	go func() {
		nb, err := cluster.New(cfg, slog.New(slog.NewTextHandler(&logs, nil)))
		if err == nil {
			err = nb.Start()
		}
		if err != nil {
			errs <- err
			return
		}
		started <- nb
	}()
	var nb *cluster.Broker
	select {
	case nb = <-started:
	case err := <-errs:
		t.Fatalf("start: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("start-up did not finish within 10 s with a partition directory missing")
	}
	tb := &testBroker{Broker: nb, dir: dir, addr: nb.Addr().String()}
	defer tb.stop(t)
	if _, err := os.Stat(missing); err != nil {
		t.Fatalf("missing partition directory not recreated: %v", err)
	}
	var warned bool
	for _, line := range strings.Split(logs.String(), "\n") {
		warned = warned || (strings.Contains(line, "level=WARN") && strings.Contains(line, missing))
	}
	if !warned {
		t.Fatalf("no WARN line naming %s in:\n%s", missing, logs.String())
	}
	produceSync(t, client(t, tb.addr, kgo.RecordPartitioner(kgo.ManualPartitioner())), &kgo.Record{Topic: "holes", Partition: 1, Value: []byte("new")})
	if recs := consumeN(t, tb.addr, "holes", 2); len(recs) != 2 {
		t.Fatalf("%d records after restart, want 2", len(recs))
	}
}
