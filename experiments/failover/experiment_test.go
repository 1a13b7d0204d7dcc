package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/varve/varve/experiments/internal/harness"
	"github.com/varve/varve/internal/localcluster"
)

func TestFlagsQuickAndLists(t *testing.T) {
	c, err := parseFlags([]string{"-quick", "-systems", "kafka"})
	if err != nil {
		t.Fatal(err)
	}
	if c.trials != 3 || !slices.Equal(c.systems, []string{sysKafka}) || len(c.scenarios) != 3 {
		t.Errorf("-quick -systems kafka: trials %d systems %v scenarios %v", c.trials, c.systems, c.scenarios)
	}
	if c, _ := parseFlags([]string{"-quick", "-trials", "7"}); c.trials != 7 {
		t.Errorf("-trials given with -quick: %d, want 7", c.trials)
	}
	if c, _ := parseFlags(nil); c.trials != 20 || c.profile.sessionTimeout != 3*time.Second {
		t.Errorf("defaults: trials %d session timeout %v", c.trials, c.profile.sessionTimeout)
	}
	for _, bad := range [][]string{{"-systems", "redpanda"}, {"-scenarios", "kill-everything"},
		{"-heartbeat-interval", "5s"}, {"-trials", "0"}} {
		if _, err := parseFlags(bad); err == nil {
			t.Errorf("%v: no error", bad)
		}
	}
}

// Kafka: a KRaft combined node names every voter by id@host:port of its
// CONTROLLER listener and takes the profile's Kafka property names.
func TestKafkaPropsThreeVotersAndProfile(t *testing.T) {
	c, err := localcluster.New(localcluster.Options{Nodes: 3, Dir: t.TempDir(), BasePort: 19092})
	if err != nil {
		t.Fatal(err)
	}
	cfg, _ := parseFlags(nil)
	p := kafkaProps(c, c.Node(2), cfg.profile)
	want := map[string]string{
		"node.id":                      "2",
		"process.roles":                "broker,controller",
		"controller.quorum.voters":     "1@127.0.0.1:19093,2@127.0.0.2:19093,3@127.0.0.3:19093",
		"listeners":                    "PLAINTEXT://127.0.0.2:19092,CONTROLLER://127.0.0.2:19093",
		"broker.session.timeout.ms":    "3000",
		"broker.heartbeat.interval.ms": "500",
		"auto.leader.rebalance.enable": "false",
	}
	for k, v := range want {
		if p[k] != v {
			t.Errorf("%s=%q, want %q", k, p[k], v)
		}
	}
	for k, v := range cfg.profile.props() { // both systems get the same profile
		if p[k] != v {
			t.Errorf("kafka lacks the profile's %s=%s", k, v)
		}
	}
}

func TestSeqValues(t *testing.T) {
	v := encodeSeq(12345)
	if got, ok := decodeSeq(v); !ok || got != 12345 || len(v) != 16 {
		t.Errorf("round trip of 12345 via %q: %d %v", v, got, ok)
	}
	if _, ok := decodeSeq([]byte("x")); ok {
		t.Error("a foreign value decoded")
	}
}

// Kafka: KIP-580, retry.backoff.ms=100 doubling up to retry.backoff.max.ms=1000.
func TestJavaBackoff(t *testing.T) {
	var got []time.Duration
	for tries := 1; tries <= 6; tries++ {
		got = append(got, javaBackoff(tries))
	}
	want := []time.Duration{100, 200, 400, 800, 1000, 1000}
	for i := range want {
		want[i] *= time.Millisecond
	}
	if !slices.Equal(got, want) {
		t.Errorf("backoff %v, want %v", got, want)
	}
}

func TestCheckCountsLossDuplicatesAndMoves(t *testing.T) {
	acks := []ack{{seq: 1, offset: 0}, {seq: 2, offset: 1}, {seq: 3, offset: 2}, {seq: 4, offset: 3}}
	read := map[uint64][]stored{
		1: {{offset: 0}},
		2: {{offset: 1}, {offset: 5}}, // duplicated
		4: {{offset: 2}},              // moved; 3 is missing
		9: {{offset: 4}},              // never acknowledged (a timed-out produce): fine
	}
	v := check(acks, read)
	if v.acked != 4 || v.stored != 4 || v.missing != 1 || v.duplicated != 1 || v.moved != 1 {
		t.Errorf("verdict %+v", v)
	}
}

// Kafka: KIP-101, each batch carries the leader epoch of the leader that
// appended it; an acknowledgement the old leader sent after the fault
// (a controlled shutdown still leading) is not the new leader's.
func TestFirstNewLeaderAck(t *testing.T) {
	t0 := time.Unix(1000, 0)
	acks := []ack{
		{seq: 1, at: t0.Add(-time.Second)},
		{seq: 2, at: t0.Add(100 * time.Millisecond)}, // old leader, after the signal
		{seq: 3, at: t0.Add(900 * time.Millisecond)}, // new leader
		{seq: 4, at: t0.Add(950 * time.Millisecond)},
	}
	read := map[uint64][]stored{1: {{0, 4}}, 2: {{1, 4}}, 3: {{2, 5}}, 4: {{3, 5}}}
	trials := []trial{
		{Scenario: scnTerm, OldEpoch: 4, Start: t0, ackFrom: 1},
		{Scenario: scnKill, OldEpoch: 5, Start: t0, ackFrom: 1}, // no later epoch: no figure
		{Scenario: scnController, Start: t0, Ack: -1},
	}
	firstNewLeaderAcks(trials, acks, read)
	if trials[0].Ack != 900*time.Millisecond || trials[0].Err != "" {
		t.Errorf("controlled shutdown: ack %v err %q, want 900ms", trials[0].Ack, trials[0].Err)
	}
	if trials[1].Ack != -1 || trials[1].Err == "" {
		t.Errorf("no new leader's ack: ack %v err %q", trials[1].Ack, trials[1].Err)
	}
	if trials[2].Ack != -1 || trials[2].Err != "" {
		t.Errorf("controller trial changed: %+v", trials[2])
	}
}

func TestFullISR(t *testing.T) {
	for _, c := range []struct {
		st   partState
		want bool
	}{
		{partState{leader: 1, replicas: []int32{1, 2, 3}, isr: []int32{3, 1, 2}}, true},
		{partState{leader: 1, replicas: []int32{1, 2, 3}, isr: []int32{1, 2}}, false},
		{partState{leader: -1, replicas: []int32{1, 2, 3}, isr: []int32{1, 2, 3}}, false},
		{partState{leader: 1, replicas: []int32{1, 2, 3}, isr: []int32{1, 2, 4}}, false},
	} {
		if got := fullISR(c.st); got != c.want {
			t.Errorf("fullISR(%+v) = %v", c.st, got)
		}
	}
}

func TestWriteResults(t *testing.T) {
	dir := t.TempDir()
	s := &harness.Session{Out: dir, Started: time.Now(), Ended: time.Now()}
	cfg, _ := parseFlags([]string{"-quick"})
	var trials []trial
	for i, d := range []time.Duration{3100, 3500, 4200} {
		trials = append(trials, trial{System: sysKafka, Scenario: scnKill, N: i + 1, Victim: 1,
			Moved: d * time.Millisecond, Ack: (d + 200) * time.Millisecond, Exit: -1})
	}
	trials = append(trials, trial{System: sysKafka, Scenario: scnController, N: 1, Moved: -1, Ack: -1, Exit: -1, Err: "timed out"})
	outs := []outcome{{system: sysKafka, settings: "three nodes", trials: trials, verdict: verdict{acked: 10, stored: 10}}}
	if err := writeResults(s, cfg, outs); err != nil {
		t.Fatal(err)
	}
	sum, _ := os.ReadFile(filepath.Join(dir, "summary.md"))
	for _, want := range []string{"| SIGKILL leader → first ack by a new leader | 3700 | 4400 |", "0 missing", "broker.session.timeout.ms=3000"} {
		if !strings.Contains(string(sum), want) {
			t.Errorf("summary.md lacks %q:\n%s", want, sum)
		}
	}
	csv, _ := os.ReadFile(filepath.Join(dir, "summary.csv"))
	if !strings.Contains(string(csv), "kafka,kill-leader,first-ack,3,3700,4400,3300,4400") {
		t.Errorf("summary.csv:\n%s", csv)
	}
	for _, f := range []string{"trials.csv", "failover.png", "failover.svg"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
}

// The first consumer read past a fault is the first record received at
// or after the fault from a batch of a later leader epoch: records the
// old leader appended, even read after the fault, do not count.
func TestFirstNewLeaderReads(t *testing.T) {
	t0 := time.Now()
	reads := []read{{t0.Add(-time.Second), 3}, {t0.Add(100 * time.Millisecond), 2}, {t0.Add(700 * time.Millisecond), 3},
		{t0.Add(900 * time.Millisecond), 3}}
	trials := []trial{
		{Scenario: scnKill, Start: t0, OldEpoch: 2},
		{Scenario: scnTerm, Start: t0, OldEpoch: 3},
		{Scenario: scnController, Start: t0, OldEpoch: 1},
	}
	firstNewLeaderReads(trials, reads)
	if trials[0].Read != 700*time.Millisecond || trials[1].Read != -1 || trials[2].Read != 0 {
		t.Fatalf("reads: %v %v %v", trials[0].Read, trials[1].Read, trials[2].Read)
	}
	if readOf(trials[1]) != -1 || readOf(trial{}) != -1 || readOf(trials[0]) != 700*time.Millisecond {
		t.Fatal("readOf")
	}
}
