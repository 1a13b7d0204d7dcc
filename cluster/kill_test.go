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

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/varve/varve/cluster"
	"github.com/varve/varve/config"
)

const childEnv = "VARVE_TEST_BROKER_DIR"

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
		"log.dirs": filepath.Join(dir, "data"), "listeners": "PLAINTEXT://127.0.0.1:0",
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

func startChild(t *testing.T, dir string) *child {
	t.Helper()
	os.Remove(filepath.Join(dir, "addr"))
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), childEnv+"="+dir)
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
