package cluster_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/varve/varve/logdir"
	"github.com/varve/varve/segment"
)

// twoDirBroker starts a broker over two log dirs and returns them as
// absolute paths.
func twoDirBroker(t *testing.T) (*testBroker, string, string) {
	t.Helper()
	d1, d2 := t.TempDir(), t.TempDir()
	d1, _ = filepath.Abs(d1)
	d2, _ = filepath.Abs(d2)
	return startBroker(t, d1, map[string]string{"log.dirs": d1 + "," + d2}), d1, d2
}

// alterLogDirs sends AlterReplicaLogDirs for one partition and returns
// its error code.
func alterLogDirs(t *testing.T, addr, dir, topic string, p int32) int16 {
	t.Helper()
	req := kmsg.NewPtrAlterReplicaLogDirsRequest()
	d := kmsg.NewAlterReplicaLogDirsRequestDir()
	d.Dir = dir
	dt := kmsg.NewAlterReplicaLogDirsRequestDirTopic()
	dt.Topic, dt.Partitions = topic, []int32{p}
	d.Topics = append(d.Topics, dt)
	req.Dirs = append(req.Dirs, d)
	// Straight to the broker: kgo would route by partition leader and
	// answer for a partition it finds no leader of itself.
	resp, err := req.RequestWith(ctx(t), client(t, addr).SeedBrokers()[0])
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		t.Fatalf("answer %+v", resp.Topics)
	}
	return resp.Topics[0].Partitions[0].ErrorCode
}

// replicaIn is what DescribeLogDirs says of a partition in one dir.
type replicaIn struct {
	dir    string
	future bool
	lag    int64
	size   int64
}

// describeReplicas asks DescribeLogDirs where topic's partition p is.
func describeReplicas(t *testing.T, addr, topic string, p int32) []replicaIn {
	t.Helper()
	req := kmsg.NewPtrDescribeLogDirsRequest()
	rt := kmsg.NewDescribeLogDirsRequestTopic()
	rt.Topic, rt.Partitions = topic, []int32{p}
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx(t), client(t, addr).SeedBrokers()[0])
	if err != nil {
		t.Fatal(err)
	}
	var out []replicaIn
	for _, d := range resp.Dirs {
		for _, tp := range d.Topics {
			for _, rp := range tp.Partitions {
				out = append(out, replicaIn{dir: d.Dir, future: rp.IsFuture, lag: rp.OffsetLag, size: rp.Size})
			}
		}
	}
	return out
}

// Kafka: ReplicaManager.alterReplicaLogDirs (KIP-113): LOG_DIR_NOT_FOUND
// for a directory that is not one of log.dirs, compared as absolute
// paths; REPLICA_NOT_AVAILABLE for a partition the broker holds no
// replica of; NONE for a replica already in the directory;
// INVALID_TOPIC_EXCEPTION when the future directory's name would be
// longer than 255 bytes.
func TestAlterReplicaLogDirsErrors(t *testing.T) {
	b, d1, d2 := twoDirBroker(t)
	createTopic(t, b.addr, "ae", 1, nil)
	home := describeReplicas(t, b.addr, "ae", 0)
	if len(home) != 1 {
		t.Fatalf("replicas %+v", home)
	}
	for _, tc := range []struct {
		name, dir, topic string
		want             int16
	}{
		{"not a log dir", filepath.Join(d2, "sub"), "ae", kerr.LogDirNotFound.Code},
		{"relative path", filepath.Base(d2), "ae", kerr.LogDirNotFound.Code},
		{"no replica", d2, "nosuch", kerr.ReplicaNotAvailable.Code},
		{"already there", home[0].dir, "ae", 0},
		{"name too long", d1, strings.Repeat("x", 249), kerr.InvalidTopicException.Code},
	} {
		if got := alterLogDirs(t, b.addr, tc.dir, tc.topic, 0); got != tc.want {
			t.Errorf("%s: code %d, want %d", tc.name, got, tc.want)
		}
	}
	if got := describeReplicas(t, b.addr, "ae", 0); len(got) != 1 || got[0] != home[0] {
		t.Errorf("after the refused moves: %+v, was %+v", got, home)
	}
}

// Kafka: KIP-113, ReplicaAlterLogDirsThread and
// replaceCurrentWithFutureLog: a partition moves to the broker's other
// log dir while a producer keeps producing and a consumer keeps
// consuming. While the copy runs DescribeLogDirs shows the future
// replica in the destination (IsFuture, lag = current log end - future
// log end); afterwards the partition is in the destination only, every
// acknowledged record is there at its offset with its timestamp, the
// consumer saw each offset once, and a restart finds it there.
func TestAlterReplicaLogDirsUnderLiveTraffic(t *testing.T) {
	b, d1, d2 := twoDirBroker(t)
	createTopic(t, b.addr, "live", 1, map[string]*string{"segment.bytes": ptr("262144")})
	home := describeReplicas(t, b.addr, "live", 0)
	if len(home) != 1 {
		t.Fatalf("replicas %+v", home)
	}
	src, dst := home[0].dir, d2
	if src == d2 {
		dst = d1
	}
	prod := client(t, b.addr, kgo.DefaultProduceTopic("live"), kgo.RecordRetries(1000), kgo.ProducerBatchMaxBytes(64<<10),
		kgo.RetryBackoffFn(func(int) time.Duration { return 5 * time.Millisecond }))
	var bulk []*kgo.Record
	for i := 0; i < 3000; i++ {
		bulk = append(bulk, &kgo.Record{Value: fmt.Appendf(nil, "bulk-%d-%s", i, strings.Repeat("v", 300))})
	}
	produceSync(t, prod, bulk...)

	held, release := make(chan struct{}), make(chan struct{})
	b.LogDirs().SetMoveHook(func(_ segment.TopicPartition, s logdir.MoveStep) bool {
		if s == logdir.StepCopied {
			close(held)
			<-release
		}
		return true
	})
	live := startLiveTraffic(t, b.addr, prod)
	if code := alterLogDirs(t, b.addr, dst, "live", 0); code != 0 {
		t.Fatalf("alter: code %d", code)
	}
	<-held
	produceSync(t, prod, &kgo.Record{Value: []byte("while held")})
	checkFutureReported(t, b.addr, src, dst)
	close(release)
	waitFor(t, 30*time.Second, "the partition in the destination only", func() bool {
		r := describeReplicas(t, b.addr, "live", 0)
		return len(r) == 1 && r[0].dir == dst && !r[0].future
	})
	acked, seen := live.stop(t)
	checkAllThere(t, b.addr, len(bulk)+1, acked, seen)

	b.stop(t)
	b = startBroker(t, d1, map[string]string{"log.dirs": d1 + "," + d2})
	if r := describeReplicas(t, b.addr, "live", 0); len(r) != 1 || r[0].dir != dst {
		t.Fatalf("after a restart: %+v", r)
	}
	checkAllThere(t, b.addr, len(bulk)+1, acked, nil)
}

func ptr(s string) *string { return &s }

// checkFutureReported checks DescribeLogDirs during a move held after
// its copy: the current replica in src, the future one in dst lagging.
func checkFutureReported(t *testing.T, addr, src, dst string) {
	t.Helper()
	var cur, fut *replicaIn
	r := describeReplicas(t, addr, "live", 0)
	for i := range r {
		switch {
		case r[i].dir == src && !r[i].future:
			cur = &r[i]
		case r[i].dir == dst && r[i].future:
			fut = &r[i]
		}
	}
	if cur == nil || fut == nil || len(r) != 2 {
		t.Fatalf("during the move: %+v, want the current replica in %s and a future one in %s", r, src, dst)
	}
	if fut.lag <= 0 || fut.size <= 0 || cur.lag != 0 {
		t.Fatalf("during the move: current %+v future %+v: want a future lagging by the records produced since", cur, fut)
	}
}

// liveTraffic is a producer and a consumer running during a move.
type liveTraffic struct {
	stopCh chan struct{}
	cancel context.CancelFunc // ends a poll waiting for records
	wg     sync.WaitGroup
	mu     sync.Mutex
	acked  map[int64]*kgo.Record // by offset
	seen   map[int64]int         // offsets the live consumer got, and how often
	errs   []error
}

func startLiveTraffic(t *testing.T, addr string, prod *kgo.Client) *liveTraffic {
	cx, cancel := context.WithCancel(ctx(t))
	lt := &liveTraffic{stopCh: make(chan struct{}), cancel: cancel, acked: map[int64]*kgo.Record{}, seen: map[int64]int{}}
	lt.wg.Add(2)
	go func() {
		defer lt.wg.Done()
		for i := 0; ; i++ {
			select {
			case <-lt.stopCh:
				return
			default:
			}
			r := &kgo.Record{Value: fmt.Appendf(nil, "live-%d", i)}
			if err := prod.ProduceSync(cx, r).FirstErr(); err != nil {
				if cx.Err() == nil {
					lt.fail(err)
				}
				return
			}
			lt.mu.Lock()
			lt.acked[r.Offset] = r
			lt.mu.Unlock()
		}
	}()
	cons := client(t, addr, kgo.ConsumeTopics("live"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.RetryBackoffFn(func(int) time.Duration { return 5 * time.Millisecond }))
	go func() {
		defer lt.wg.Done()
		for {
			select {
			case <-lt.stopCh:
				return
			default:
			}
			fs := cons.PollRecords(cx, 1000)
			fs.EachRecord(func(r *kgo.Record) {
				lt.mu.Lock()
				lt.seen[r.Offset]++
				lt.mu.Unlock()
			})
			if cx.Err() != nil {
				return
			}
		}
	}()
	return lt
}

func (lt *liveTraffic) fail(err error) {
	lt.mu.Lock()
	lt.errs = append(lt.errs, err)
	lt.mu.Unlock()
}

// stop ends the traffic once the consumer caught up with the producer.
func (lt *liveTraffic) stop(t *testing.T) (map[int64]*kgo.Record, map[int64]int) {
	t.Helper()
	time.Sleep(200 * time.Millisecond) // some traffic after the swap
	close(lt.stopCh)
	lt.cancel()
	lt.wg.Wait()
	lt.mu.Lock()
	defer lt.mu.Unlock()
	if len(lt.errs) > 0 {
		t.Fatalf("live traffic: %v", lt.errs)
	}
	if len(lt.acked) == 0 {
		t.Fatal("nothing produced during the move")
	}
	t.Logf("during the move: %d records produced, %d consumed live", len(lt.acked), len(lt.seen))
	return lt.acked, lt.seen
}

// checkAllThere consumes the partition from the start and checks every
// acknowledged live record at its offset, with its timestamp and value,
// and that the live consumer saw no offset twice.
func checkAllThere(t *testing.T, addr string, before int, acked map[int64]*kgo.Record, seen map[int64]int) {
	t.Helper()
	var last int64
	for off := range acked {
		last = max(last, off)
	}
	got := consumeN(t, addr, "live", int(last)+1)
	byOffset := map[int64]*kgo.Record{}
	for i, r := range got {
		if r.Offset != int64(i) {
			t.Fatalf("record %d has offset %d", i, r.Offset)
		}
		byOffset[r.Offset] = r
	}
	for off, want := range acked {
		r := byOffset[off]
		if r == nil || string(r.Value) != string(want.Value) || !r.Timestamp.Equal(want.Timestamp) {
			t.Fatalf("offset %d: got %v, want value %q at %v", off, r, want.Value, want.Timestamp)
		}
	}
	for off, n := range seen {
		if n != 1 {
			t.Fatalf("the live consumer got offset %d %d times", off, n)
		}
	}
	if before+len(acked) != int(last)+1 {
		t.Fatalf("%d records before the live ones and %d live, but the last ends at %d", before, len(acked), last+1)
	}
}
