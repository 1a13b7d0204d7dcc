package cluster_test

import (
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/varve/varve/cluster"
	"github.com/varve/varve/config"
	"github.com/varve/varve/record"
)

const (
	childEnv     = "VARVE_TEST_BROKER_DIR"
	childAddrEnv = "VARVE_TEST_BROKER_ADDR"
)

// TestMain runs a broker child process for the kill tests when asked to.
func TestMain(m *testing.M) {
	if dir := os.Getenv(childEnv); dir != "" {
		runChildBroker(dir)
		return
	}
	os.Exit(m.Run())
}

// runChildBroker serves dir until killed, with every append fsynced
// before it is acknowledged, and writes its address to dir/addr.
func runChildBroker(dir string) {
	cfg, err := config.Parse(map[string]string{
		"log.dirs": filepath.Join(dir, "data"), "listeners": "PLAINTEXT://" + os.Getenv(childAddrEnv),
		"varve.metrics.listener": "", "log.flush.interval.messages": "1",
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	b, err := cluster.New(cfg, slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	if err == nil {
		err = b.Start()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	tmp := filepath.Join(dir, "addr.tmp")
	os.WriteFile(tmp, []byte(b.Addr().String()), 0o644)
	os.Rename(tmp, filepath.Join(dir, "addr"))
	select {}
}

// child is a broker process.
type child struct {
	cmd  *exec.Cmd
	addr string
}

func startChild(t *testing.T, dir string) *child { return startChildAt(t, dir, "127.0.0.1:0") }

// startChildAt starts the child broker listening on addr (a restarted
// broker comes back at the same address, so clients find it again).
func startChildAt(t *testing.T, dir, addr string) *child {
	t.Helper()
	os.Remove(filepath.Join(dir, "addr"))
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), childEnv+"="+dir, childAddrEnv+"="+addr)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		if a, err := os.ReadFile(filepath.Join(dir, "addr")); err == nil {
			return &child{cmd: cmd, addr: string(a)}
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("child broker did not start")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (c *child) kill() {
	c.cmd.Process.Signal(syscall.SIGKILL)
	c.cmd.Wait()
}

// Kafka: with flush.messages=1 an acknowledged record survives the
// broker's death. A producer writes while the broker is killed with -9
// at a random moment; after a restart every acknowledged record is at its
// acknowledged offset.
func TestKillNineLosesNoAcknowledgedRecord(t *testing.T) {
	dir := t.TempDir()
	acked := map[int64]string{}
	var mu sync.Mutex
	for round := 0; round < 3; round++ {
		c := startChild(t, dir)
		if round == 0 {
			createTopic(t, c.addr, "durable", 1, nil)
		}
		p, err := kgo.NewClient(kgo.SeedBrokers(c.addr), kgo.DefaultProduceTopic("durable"),
			kgo.RecordRetries(0), kgo.RequestRetries(0), kgo.ProducerLinger(0))
		if err != nil {
			t.Fatal(err)
		}
		stop := time.After(time.Duration(200+rand.IntN(400)) * time.Millisecond)
		var wg sync.WaitGroup
	produce:
		for i := 0; ; i++ {
			select {
			case <-stop:
				break produce
			default:
			}
			v := fmt.Sprintf("r%d-%d", round, i)
			wg.Add(1)
			p.Produce(ctx(t), &kgo.Record{Value: []byte(v)}, func(r *kgo.Record, err error) {
				defer wg.Done()
				if err == nil {
					mu.Lock()
					acked[r.Offset] = string(r.Value)
					mu.Unlock()
				}
			})
			if i%50 == 49 {
				time.Sleep(time.Millisecond)
			}
		}
		c.kill()
		p.Close()
		wg.Wait()
	}
	if len(acked) < 50 {
		t.Fatalf("only %d records acknowledged: the test did not exercise anything", len(acked))
	}
	c := startChild(t, dir)
	defer c.kill()
	var maxOff int64
	for o := range acked {
		maxOff = max(maxOff, o)
	}
	got := map[int64]string{}
	cons := client(t, c.addr, kgo.ConsumeTopics("durable"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	cx := ctx(t)
	for {
		fs := cons.PollFetches(cx)
		if cx.Err() != nil {
			break
		}
		done := false
		fs.EachRecord(func(r *kgo.Record) {
			got[r.Offset] = string(r.Value)
			done = done || r.Offset >= maxOff
		})
		if done {
			break
		}
	}
	for off, v := range acked {
		if got[off] != v {
			t.Fatalf("acknowledged record %q at offset %d reads back as %q", v, off, got[off])
		}
	}
	t.Logf("%d acknowledged records survived 3 kills", len(acked))
}

// Kafka: producer state is snapshotted at roll and rebuilt from the log
// after a crash, so an idempotent producer's retry of a batch written
// just before a kill -9 is recognised as a duplicate and not written
// twice. The producer here keeps its id and sequence across the restart,
// as franz-go does while it retries.
func TestIdempotentRetryAfterKillNineIsNotDuplicated(t *testing.T) {
	dir := t.TempDir()
	c := startChild(t, dir)
	createTopic(t, c.addr, "idem", 1, nil)
	p, err := kgo.NewClient(kgo.SeedBrokers(c.addr), kgo.DefaultProduceTopic("idem"), kgo.ProducerLinger(0),
		kgo.RequestRetries(100), kgo.RetryBackoffFn(func(int) time.Duration { return 50 * time.Millisecond }))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	for i := 0; i < 100; i++ {
		produceSync(t, p, &kgo.Record{Value: []byte(fmt.Sprintf("before-%d", i))})
	}
	// Produce asynchronously while the broker dies and comes back: the
	// client retries whatever was in flight with the same sequence numbers.
	done := make(chan error, 1)
	var wg sync.WaitGroup
	for i := 0; i < 200; i++ {
		wg.Add(1)
		p.Produce(ctx(t), &kgo.Record{Value: []byte(fmt.Sprintf("during-%d", i))}, func(_ *kgo.Record, err error) {
			defer wg.Done()
			if err != nil {
				select {
				case done <- err:
				default:
				}
			}
		})
		if i == 50 {
			c.kill()
			c = startChildAt(t, dir, c.addr)
		}
	}
	wg.Wait()
	defer c.kill()
	select {
	case err := <-done:
		t.Fatalf("a record failed across the restart: %v", err)
	default:
	}
	got := consumeN(t, c.addr, "idem", 300)
	seen := map[string]int{}
	for _, r := range got {
		seen[string(r.Value)]++
	}
	for v, n := range seen {
		if n > 1 {
			t.Fatalf("%q stored %d times: a retried batch was written again", v, n)
		}
	}
	if len(seen) != 300 {
		t.Fatalf("%d distinct records, want 300", len(seen))
	}
}

// The same, deterministically, with raw requests: the batch acknowledged
// last before kill -9 is sent again after the restart and must be
// answered with its original offset and not stored twice; the next
// sequence is then accepted.
func TestDuplicateBatchAfterKillNineGetsItsOriginalOffset(t *testing.T) {
	dir := t.TempDir()
	c := startChild(t, dir)
	createTopic(t, c.addr, "dedup", 1, nil)
	cl := client(t, c.addr)
	init := kmsg.NewPtrInitProducerIDRequest()
	ir, err := init.RequestWith(ctx(t), cl)
	if err != nil || ir.ErrorCode != 0 {
		t.Fatalf("init producer id: %v %v", err, ir)
	}
	produce := func(cl *kgo.Client, seq int32) (int64, int16) {
		b := record.NewBatchBuilder(record.CompressionNone)
		b.SetProducer(ir.ProducerID, ir.ProducerEpoch, seq)
		b.Append(record.Record{Value: []byte(fmt.Sprintf("seq-%d", seq))})
		batch, err := b.Build()
		if err != nil {
			t.Fatal(err)
		}
		req := kmsg.NewPtrProduceRequest()
		req.Acks, req.TimeoutMillis = -1, 5000
		rt := kmsg.NewProduceRequestTopic()
		rt.Topic = "dedup"
		rp := kmsg.NewProduceRequestTopicPartition()
		rp.Records = batch
		rt.Partitions = []kmsg.ProduceRequestTopicPartition{rp}
		req.Topics = []kmsg.ProduceRequestTopic{rt}
		resp, err := req.RequestWith(ctx(t), cl)
		if err != nil {
			t.Fatal(err)
		}
		pr := resp.Topics[0].Partitions[0]
		return pr.BaseOffset, pr.ErrorCode
	}
	for seq := int32(0); seq < 5; seq++ {
		if off, code := produce(cl, seq); code != 0 || off != int64(seq) {
			t.Fatalf("seq %d: offset %d, error %d", seq, off, code)
		}
	}
	c.kill()
	c = startChildAt(t, dir, c.addr)
	defer c.kill()
	cl2 := client(t, c.addr)
	if off, code := produce(cl2, 4); code != 0 || off != 4 {
		t.Fatalf("the retried seq 4 after kill -9: offset %d, error %d; want offset 4, no error", off, code)
	}
	if off, code := produce(cl2, 5); code != 0 || off != 5 {
		t.Fatalf("seq 5 after the retry: offset %d, error %d", off, code)
	}
	if _, code := produce(cl2, 7); code != kerr.OutOfOrderSequenceNumber.Code {
		t.Fatalf("a sequence gap: error %d, want OUT_OF_ORDER_SEQUENCE_NUMBER", code)
	}
	got := consumeN(t, c.addr, "dedup", 6)
	for i, r := range got {
		if string(r.Value) != fmt.Sprintf("seq-%d", i) {
			t.Fatalf("offset %d holds %q", i, r.Value)
		}
	}
}
