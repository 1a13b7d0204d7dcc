package chaos_test

import (
	"context"
	"flag"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/varve/varve/chaos"
)

var (
	seedFlag  = flag.Uint64("chaos.seed", 0, "replay the fault schedule drawn from this seed (0: a new seed)")
	killsFlag = flag.Int("chaos.kills", 5, "how many times the single-node test kills the server")
)

// Kafka: with log.flush.interval.messages=1 a record is fsynced before
// it is acknowledged, so kill -9 of the only broker loses nothing that
// was acknowledged; idempotent producers (KIP-98) retrying across the
// restart write nothing twice; offsets are never reused. A workload of
// idempotent acks=all producers, group members and assigned consumers
// runs while the server is killed with SIGKILL and restarted; then a
// full read and every checker.
func TestSingleNodeSurvivesKillNine(t *testing.T) {
	h := runSingleNode(t, []chaos.Kind{chaos.Kill}, *killsFlag, 5*time.Second, 300*time.Millisecond)
	if kills := countEvents(h, "kill node0"); kills != *killsFlag {
		t.Fatalf("%d kills noted, want %d", kills, *killsFlag)
	}
}

// Kafka: a broker paused with SIGSTOP (a long GC pause, a stalled VM)
// and one shut down cleanly (controlled shutdown) lose and duplicate
// nothing either; the same checkers, over a schedule mixing all three.
func TestSingleNodeSurvivesPausesAndRestarts(t *testing.T) {
	h := runSingleNode(t, []chaos.Kind{chaos.Kill, chaos.Pause, chaos.Restart}, 6, time.Second, 2*time.Second)
	if n := countEvents(h, "resumed node0") + countEvents(h, "started node0"); n != 6 {
		t.Fatalf("%d faults healed, want 6", n)
	}
}

// runSingleNode runs the workload against one server under count faults
// of the given kinds, then the full read and the checkers.
func runSingleNode(t *testing.T, kinds []chaos.Kind, count int, appendTimeout, maxHold time.Duration) *chaos.History {
	if testing.Short() {
		t.Skip("starts a varve server process and signals it for ~15s")
	}
	seed := *seedFlag
	if seed == 0 {
		seed = rand.Uint64()
	}
	t.Logf("fault schedule seed %d (replay: go test -run %s ./chaos -chaos.seed=%d)", seed, t.Name(), seed)
	dir := t.TempDir()
	node := startNode(t, dir)
	brokers := []string{node.Addr}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const topic, partitions = "history", 4
	if err := chaos.CreateTopic(ctx, brokers, topic, partitions, 1); err != nil {
		t.Fatal(err)
	}

	h := chaos.NewHistory()
	w, err := chaos.StartWorkload(h, chaos.WorkloadConfig{Brokers: brokers, Topic: topic, Partitions: partitions,
		Producers: 4, GroupConsumers: 2, AssignedConsumers: 1, Group: "history-readers",
		AppendTimeout: appendTimeout, Interval: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	s := chaos.NewSchedule(seed, chaos.ScheduleOptions{Count: count, Kinds: kinds, Nodes: 1,
		First: time.Second, Gap: [2]time.Duration{time.Second, 2 * time.Second}, Hold: [2]time.Duration{0, maxHold}})
	t.Log(s)
	runErr := (&chaos.Runner{Nodes: []chaos.Node{node}, History: h}).Run(ctx, s)
	time.Sleep(2 * time.Second) // let the clients catch up after the last fault
	w.Stop()
	if runErr != nil {
		t.Fatal(runErr)
	}
	if h.Final, err = chaos.FullRead(ctx, brokers, topic); err != nil {
		t.Fatal(err)
	}
	logHistory(t, h)
	if r := chaos.Check(h); !r.OK() {
		t.Fatalf("seed %d: %s", seed, r)
	} else {
		t.Log(r)
	}
	return h
}

// startNode starts a single varve server that fsyncs every append, with
// its log in dir/server.log (printed if the test fails).
func startNode(t *testing.T, dir string) *chaos.Proc {
	t.Helper()
	bin, err := chaos.BuildVarve(dir)
	if err != nil {
		t.Fatal(err)
	}
	node, err := chaos.NewVarveServer("node0", bin, filepath.Join(dir, "data"),
		"log.flush.interval.messages=1", "offsets.topic.replication.factor=1", "group.initial.rebalance.delay.ms=0")
	if err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(dir, "server.log")
	f, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	node.Stderr = f
	if err := node.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := node.Stop(); err != nil {
			t.Error(err)
		}
		f.Close()
		if t.Failed() {
			if b, err := os.ReadFile(logPath); err == nil {
				t.Logf("server log:\n%s", b)
			}
		}
	})
	return node
}

// logHistory reports what the run did and its unavailability windows.
func logHistory(t *testing.T, h *chaos.History) {
	t.Helper()
	inFinal := map[string]bool{}
	var final int
	for _, recs := range h.Final {
		final += len(recs)
		for _, r := range recs {
			inFinal[r.Value] = true
		}
	}
	outcomes, unknownWritten := map[chaos.Outcome]int{}, 0
	for _, a := range h.Appends() {
		outcomes[a.Outcome]++
		if a.Outcome == chaos.Unknown && inFinal[a.Value] {
			unknownWritten++
		}
	}
	var read, assignments int
	for _, p := range h.Polls() {
		read += len(p.Records)
		if p.Assigned != nil {
			assignments++
		}
	}
	t.Logf("appends: %d ok, %d unknown (%d of them written), %d failed, %d pending; %d polls read %d records, %d assignments; final read %d records",
		outcomes[chaos.OK], outcomes[chaos.Unknown], unknownWritten, outcomes[chaos.Failed], outcomes[chaos.Pending],
		len(h.Polls())-assignments, read, assignments, final)
	for _, w := range chaos.Unavailability(h, 100*time.Millisecond) {
		t.Logf("unavailable %s", w)
	}
	if outcomes[chaos.OK] < 200 {
		t.Fatalf("only %d appends acknowledged: the run exercised too little", outcomes[chaos.OK])
	}
}

func countEvents(h *chaos.History, what string) int {
	n := 0
	for _, e := range h.Events() {
		if e.What == what {
			n++
		}
	}
	return n
}
