package cluster_test

import (
	"bytes"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"
)

// kcat -G is librdkafka's balanced consumer (the KafkaConsumer with the
// classic protocol, range and roundrobin assignors, auto-commit). Two of
// them in one group read a four-partition topic to the end (-e): every
// record is printed once, by one of them, and both take part.
func TestKcatBalancedConsumers(t *testing.T) {
	kcat := kcatPath(t)
	// The initial rebalance delay puts both consumers in the first
	// generation, as it does for applications starting together. It
	// must: kcat -e counts partition ends across a rebalance, so a
	// consumer that read one partition to its end in a first generation
	// of its own, then got it back beside another, exits at the second
	// end without reading the other. With 1 s, a loaded machine started
	// the second kcat late enough for that (300 of 400), and with Kafka's
	// default of 3 s it still did now and then under a load average of
	// 20-30; 6 s leaves room.
	b := startBroker(t, t.TempDir(), groupProps(map[string]string{"group.initial.rebalance.delay.ms": "6000"}))
	createTopic(t, b.addr, "kcat-group", 4, nil)
	const total = 400
	produceSpread(t, b.addr, "kcat-group", 4, total)

	outs := make([]bytes.Buffer, 2)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i := range outs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var stderr bytes.Buffer
			cmd := exec.Command(kcat, "-b", b.addr, "-G", "kcat-balanced", "kcat-group", "-e", "-q",
				"-f", "%p %o %s\n", "-X", "auto.offset.reset=earliest",
				"-X", "heartbeat.interval.ms=200", "-X", "session.timeout.ms=6000")
			cmd.Stdout, cmd.Stderr = &outs[i], &stderr
			done := make(chan error, 1)
			if errs[i] = cmd.Start(); errs[i] != nil {
				return
			}
			go func() { done <- cmd.Wait() }()
			select {
			case errs[i] = <-done:
			case <-time.After(60 * time.Second):
				cmd.Process.Kill()
				errs[i] = fmt.Errorf("kcat did not exit: %s", stderr.String())
			}
			if errs[i] != nil {
				errs[i] = fmt.Errorf("%w: %s", errs[i], stderr.String())
			}
		}()
	}
	wg.Wait()
	seen := map[string]int{}
	for i, out := range outs {
		if errs[i] != nil {
			t.Fatalf("kcat %d: %v", i, errs[i])
		}
		text := strings.TrimSpace(out.String())
		if text == "" {
			t.Fatalf("kcat %d printed nothing: both consumers must share the topic", i)
		}
		for _, l := range strings.Split(text, "\n") {
			f := strings.Fields(l)
			seen[f[len(f)-1]]++
		}
	}
	for v, n := range seen {
		if n != 1 {
			t.Errorf("record %s printed %d times", v, n)
		}
	}
	if len(seen) != total {
		t.Fatalf("%d distinct records printed, want %d", len(seen), total)
	}
}
