package cluster_test

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/varve/varve/internal/localcluster"
)

// Three `varve server` processes as an operator runs them (one per
// loopback address, Kafka's KRaft combined-mode properties), and kcat
// (librdkafka) as the client: a replication-factor-3 topic, acks=all,
// the leader's process killed with SIGKILL mid-way, and every line kcat
// was told was delivered is consumed exactly once; the killed node comes
// back and rejoins the ISR.
func TestKcatThreeProcessesSurviveLeaderKill(t *testing.T) {
	if testing.Short() {
		t.Skip("builds varve and runs three server processes")
	}
	kcat := kcatPath(t)
	dir := t.TempDir()
	bin := filepath.Join(dir, "varve")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/varve/varve/cmd/varve").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	c, err := localcluster.Up(localcluster.Options{Dir: filepath.Join(dir, "cluster"), Binary: bin, LogLevel: "info",
		Props: map[string]string{
			"broker.session.timeout.ms":    "3000",
			"broker.heartbeat.interval.ms": "500",
			"replica.lag.time.max.ms":      "5000",
			"min.insync.replicas":          "2",
		}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			for _, n := range c.Nodes() {
				log, _ := n.Log()
				t.Logf("%s's log:\n%s", n.Name(), tail(string(log), 40))
			}
		}
		c.Stop()
	})
	boot := c.BootstrapServers()
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(boot, ",")...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := adm.CreateTopic(ctx(t), 1, 3, nil, "kc3")
		if err == nil && resp.Err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("create: %v %v", err, resp.Err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	lines := func(from, to int) []byte {
		var b strings.Builder
		for i := from; i < to; i++ {
			fmt.Fprintf(&b, "line-%d\n", i)
		}
		return []byte(b.String())
	}
	produce := func(from, to int) {
		runKcat(t, kcat, lines(from, to), "-b", boot, "-t", "kc3", "-P", "-X", "acks=all",
			"-X", "enable.idempotence=true", "-X", "message.timeout.ms=60000")
	}
	produce(0, 300)

	leader := func() int32 {
		m, err := adm.Metadata(ctx(t), "kc3")
		if err != nil || len(m.Topics["kc3"].Partitions) == 0 {
			return -1
		}
		return m.Topics["kc3"].Partitions[0].Leader
	}
	old := leader()
	if old < 1 {
		t.Fatalf("no leader: %d", old)
	}
	if err := c.Node(int(old)).Kill(); err != nil {
		t.Fatal(err)
	}
	var live []string
	for _, n := range c.Nodes() {
		if n.Running() {
			live = append(live, n.Addr())
		}
	}
	start := time.Now()
	runKcat(t, kcat, lines(300, 600), "-b", strings.Join(live, ","), "-t", "kc3", "-P", "-X", "acks=all",
		"-X", "enable.idempotence=true", "-X", "message.timeout.ms=60000")
	t.Logf("300 lines delivered %v after the leader's SIGKILL", time.Since(start).Round(time.Millisecond))

	out := runKcat(t, kcat, nil, "-b", strings.Join(live, ","), "-t", "kc3", "-C", "-e", "-q", "-o", "beginning")
	seen := map[string]int{}
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		seen[l]++
	}
	for i := range 600 {
		if n := seen[fmt.Sprintf("line-%d", i)]; n != 1 {
			t.Errorf("line-%d consumed %d times", i, n)
		}
	}

	if err := c.Node(int(old)).Start(); err != nil {
		t.Fatal(err)
	}
	deadline = time.Now().Add(30 * time.Second)
	for {
		m, err := adm.Metadata(ctx(t), "kc3")
		if err == nil && len(m.Topics["kc3"].Partitions[0].ISR) == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the restarted node did not rejoin the ISR: %v %v", m.Topics["kc3"].Partitions[0], err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func tail(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
