package chaos_test

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/varve/varve/chaos"
	"github.com/varve/varve/internal/localcluster"
)

const (
	clusterTopic      = "history"
	clusterPartitions = 6
)

// clusterScenarios are the faults every run of the three-node tier
// applies, twice each, in an order drawn from its seed.
var clusterScenarios = []chaos.Fault{
	{Kind: chaos.Kill, Target: chaos.PartitionLeader},
	{Kind: chaos.Kill, Target: chaos.ActiveController},
	{Kind: chaos.Pause, Target: chaos.PartitionLeader},
	{Kind: chaos.Isolate, Target: chaos.PartitionLeader},
	{Kind: chaos.Isolate, Target: chaos.ActiveController},
	{Kind: chaos.Cut, Target: chaos.PartitionLeader, OneWay: true},
	{Kind: chaos.Restart, Target: chaos.PartitionLeader},
	{Kind: chaos.Restart, Target: chaos.ActiveController},
	{Kind: chaos.Kill},
}

// changeScenarios are the faults that strike while a change of a
// partition's state is in flight; every run of the tier applies each
// once (they take longer than a plain fault: each waits for its moment).
var changeScenarios = []chaos.Fault{
	{Kind: chaos.KillAtISRChange, Target: chaos.PartitionLeader},
	{Kind: chaos.KillAtISRChange, Target: chaos.ActiveController},
	{Kind: chaos.DropTailThenKill, Target: chaos.PartitionLeader},
}

// onlyFlag narrows a tier to some kinds of fault, to replay or study
// one scenario: -chaos.only=kill-at-isr-change,drop-tail-then-kill.
var onlyFlag = flag.String("chaos.only", "", "run only the tier's faults of these kinds (comma-separated, as Kind.String names them)")

// only keeps the faults whose kinds -chaos.only names (all of them
// when it is empty).
func only(fs []chaos.Fault) []chaos.Fault {
	if *onlyFlag == "" {
		return fs
	}
	kinds := strings.Split(*onlyFlag, ",")
	return slices.DeleteFunc(slices.Clone(fs), func(f chaos.Fault) bool { return !slices.Contains(kinds, f.Kind.String()) })
}

// clusterScheduleOptions time the tier: a pause outlasts the session
// timeout (3 s) so that the paused node is fenced; a cut outlasts it
// too, often the ISR lag (5 s) as well. The gap between faults is
// short: each fault waits for every ISR to be full anyway.
var clusterScheduleOptions = chaos.ScheduleOptions{Nodes: 3, Partitions: clusterPartitions,
	First: 2 * time.Second, Gap: [2]time.Duration{500 * time.Millisecond, 2 * time.Second},
	Hold: [2]time.Duration{500 * time.Millisecond, 3 * time.Second},
	KindHold: map[chaos.Kind][2]time.Duration{
		chaos.Pause:   {3500 * time.Millisecond, 6 * time.Second},
		chaos.Isolate: {3500 * time.Millisecond, 7 * time.Second},
		chaos.Cut:     {2 * time.Second, 7 * time.Second},
	}}

// Kafka: with acks=all and min.insync.replicas=2 on three replicas,
// whatever happens to one node or one link, no acknowledged record is
// lost, idempotent producers (KIP-98) write nothing twice, every reader
// sees one value at each offset, and polls move forward (KIP-101 and
// KIP-279: followers truncate to the leader's epoch boundaries rather
// than keep a divergent log; KIP-595/631: the controller quorum elects
// a new active controller and fences a broker that stops heartbeating).
// Three varve server processes on 127.0.0.1-3 of the test's network
// namespace run the workload (idempotent acks=all producers, group
// members, assigned readers) while a seeded schedule kills the node of
// a partition leader and of the active controller, pauses a leader past
// its session timeout, isolates a leader and the active controller
// (the quorum leader partitioned from the others), cuts a leader's link
// one way, shuts leaders down cleanly and restarts them; one fault at a
// time, each after every ISR is full again. Then everything heals, the
// ISRs fill, a full read, every checker.
func TestClusterNothingLostUnderFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("runs three varve server processes under faults for ~3 minutes")
	}
	skipUnderRace(t)
	// Beside the reassignment tier (each in its own namespace): most of
	// either's time is spent waiting for timeouts, not computing.
	t.Parallel()
	if !chaos.EnterNetns(t) {
		return
	}
	seed := *seedFlag
	if seed == 0 {
		seed = rand.Uint64()
	}
	t.Logf("fault schedule seed %d (replay: go test -run %s ./chaos -chaos.seed=%d)", seed, t.Name(), seed)
	s := chaos.NewScenarioSchedule(seed, only(slices.Concat(clusterScenarios, clusterScenarios, changeScenarios)), clusterScheduleOptions)
	runClusterSchedule(t, s, faultTopic{clusterTopic, clusterPartitions, 3})
}

// faultTopic is the topic a tier's workload writes and its faults
// strike.
type faultTopic struct {
	name       string
	partitions int
	rf         int16
}

// skipUnderRace skips the three-node tier in a test binary built with
// -race: CI runs the tier in its plain pass over every package, and
// the race pass would run it again for minutes with nothing new to
// find (the servers are not built with -race; the harness's own
// concurrency is covered by the single-node tests under -race).
func skipUnderRace(t *testing.T) {
	t.Helper()
	if raceEnabled {
		t.Skip("the three-node fault tier runs in the plain test pass, not again under -race")
	}
}

// runClusterSchedule runs the workload on topic tp of a fresh
// three-node cluster under s, heals, and checks.
func runClusterSchedule(t *testing.T, s chaos.Schedule, tp faultTopic) {
	t.Log(s)
	c, roles := startFaultCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	brokers := c.Brokers()
	if err := chaos.CreateTopicWith(ctx, brokers, tp.name, int32(tp.partitions), tp.rf,
		map[string]*string{"min.insync.replicas": ptr("2")}, c.ClientOpts()...); err != nil {
		t.Fatal(err)
	}
	settle(t, ctx, roles, tp.name, tp.partitions)
	h := chaos.NewHistory()
	w, err := chaos.StartWorkload(h, chaos.WorkloadConfig{Brokers: brokers, Topic: tp.name, Partitions: int32(tp.partitions),
		Producers: 4, GroupConsumers: 2, AssignedConsumers: 1, Group: tp.name + "-readers",
		AppendTimeout: 15 * time.Second, Interval: 2 * time.Millisecond, ClientOpts: c.ClientOpts()})
	if err != nil {
		t.Fatal(err)
	}
	runErr := c.FaultRunner(h, roles, tp.name, tp.partitions, time.Minute).Run(ctx, s)
	if runErr != nil {
		t.Errorf("seed %d: %v", s.Seed, runErr) // before the heal, which may fail on its account
		logEvents(t, h)
	}
	if err := c.Net.HealAll(); err != nil {
		t.Error(err)
	}
	h.Note("healed everything")
	settle(t, ctx, roles, tp.name, tp.partitions)
	time.Sleep(3 * time.Second) // appends and reads after the last fault
	awaitAcksAfter(h, "healed everything", 30*time.Second)
	w.Stop()
	if runErr != nil {
		t.Fatalf("seed %d: %v", s.Seed, runErr)
	}
	if h.Final, err = chaos.FullRead(ctx, brokers, tp.name, c.ClientOpts()...); err != nil {
		t.Fatal(err)
	}
	logEvents(t, h)
	logHistory(t, h)
	if r := chaos.Check(h); !r.OK() {
		t.Fatalf("seed %d: %s", s.Seed, r)
	} else {
		t.Log(r)
	}
	requireAcksAfter(t, h, "healed everything")
}

// startFaultCluster starts three nodes with ShortTimeouts in the test's
// namespace; their logs are printed if the test fails.
func startFaultCluster(t *testing.T) (*chaos.Cluster, *chaos.Roles) {
	t.Helper()
	return startFaultClusterOf(t, 3)
}

// startFaultClusterOf is startFaultCluster with nodes nodes, every one a
// broker and a controller quorum voter.
func startFaultClusterOf(t *testing.T, nodes int) (*chaos.Cluster, *chaos.Roles) {
	t.Helper()
	dir := t.TempDir()
	bin, err := chaos.BuildVarve(dir)
	if err != nil {
		t.Fatal(err)
	}
	c, err := chaos.StartCluster(localcluster.Options{Nodes: nodes, Dir: filepath.Join(dir, "cluster"), Binary: bin,
		LogLevel: "info", Props: chaos.ShortTimeouts()})
	if err != nil {
		t.Fatal(err)
	}
	roles, err := c.Roles()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		roles.Close()
		if err := c.Close(); err != nil {
			t.Error(err)
		}
		keepLogs(t, c)
		if t.Failed() {
			for _, n := range c.Local.Nodes() {
				b, _ := n.Log()
				t.Logf("%s log (last 150 lines):\n%s", n.Name(), tail(b, 150))
			}
		}
	})
	return c, roles
}

func settle(t *testing.T, ctx context.Context, roles *chaos.Roles, topic string, partitions int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	start := time.Now()
	if err := roles.FullISR(ctx, topic, partitions); err != nil {
		t.Fatalf("the cluster did not recover: %v", err)
	}
	t.Logf("every ISR of %s full after %v", topic, time.Since(start).Round(time.Millisecond))
}

// awaitAcksAfter waits up to max for an append invoked after the event
// what to be acknowledged: producers that backed off during the last
// fault may take a while to come back.
func awaitAcksAfter(h *chaos.History, what string, max time.Duration) {
	for deadline := time.Now().Add(max); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if ackedAfter(h, what) {
			return
		}
	}
}

// ackedAfter reports whether an append invoked after the event what
// was acknowledged.
func ackedAfter(h *chaos.History, what string) bool {
	var at time.Duration = -1
	for _, e := range h.Events() {
		if e.What == what {
			at = e.At
		}
	}
	for _, a := range h.Appends() {
		if a.Outcome == chaos.OK && a.Invoke > at && at >= 0 {
			return true
		}
	}
	return false
}

// requireAcksAfter fails the test if no append was acknowledged after
// the event what: the cluster must serve writes again once healed.
func requireAcksAfter(t *testing.T, h *chaos.History, what string) {
	t.Helper()
	if !ackedAfter(h, what) {
		t.Fatalf("no append acknowledged after %q", what)
	}
}

func logEvents(t *testing.T, h *chaos.History) {
	t.Helper()
	var b strings.Builder
	for _, e := range h.Events() {
		b.WriteString("\n  " + e.At.Round(time.Millisecond).String() + " " + e.What)
	}
	t.Logf("events:%s", b.String())
}

func tail(b []byte, n int) []byte {
	lines := bytes.Split(bytes.TrimRight(b, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return bytes.Join(lines, []byte("\n"))
}

func ptr(s string) *string { return &s }

// keepLogs copies the nodes' logs next to the test binary's output when
// VARVE_CHAOS_KEEP is set, for a run to be read after it ends.
func keepLogs(t *testing.T, c *chaos.Cluster) {
	dst := os.Getenv("VARVE_CHAOS_KEEP")
	if dst == "" {
		return
	}
	for _, n := range c.Local.Nodes() {
		if b, err := n.Log(); err == nil {
			os.WriteFile(filepath.Join(dst, t.Name()[strings.LastIndex(t.Name(), "/")+1:]+"-"+n.Name()+".log"), b, 0o644)
		}
	}
}

// Kafka: KIP-101 and KIP-595. A leader cut off from the other two
// nodes (a minority of one) still takes appends from the clients that
// reach it, but with acks=all and min.insync.replicas=2 it can
// acknowledge none of them: its followers fetch nothing, and it cannot
// shrink its ISR without the controller. The majority fences it after
// the session timeout and elects a new leader, which the producers
// move to. Once healed, the old leader learns the new epoch, truncates
// its unacknowledged tail to the new leader's log (OffsetForLeaderEpoch)
// and rejoins the ISR: no acknowledged record is lost, and its log
// holds the new leader's records, not its own tail. The partition is
// one whose leader is also the active controller when there is one,
// the harder case: the controller quorum must elect a new leader too.
func TestClusterMinorityLeaderTruncatesItsTail(t *testing.T) {
	if testing.Short() {
		t.Skip("runs three varve server processes and isolates one")
	}
	skipUnderRace(t)
	if !chaos.EnterNetns(t) {
		return
	}
	const topic, partitions = "minority", 3
	c, roles := startFaultCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	brokers := c.Brokers()
	if err := chaos.CreateTopicWith(ctx, brokers, topic, partitions, 3,
		map[string]*string{"min.insync.replicas": ptr("2")}, c.ClientOpts()...); err != nil {
		t.Fatal(err)
	}
	settle(t, ctx, roles, topic, partitions)
	h := chaos.NewHistory()
	w, err := chaos.StartWorkload(h, chaos.WorkloadConfig{Brokers: brokers, Topic: topic, Partitions: partitions,
		Producers: 3, GroupConsumers: 1, AssignedConsumers: 1, Group: "minority-readers",
		AppendTimeout: 10 * time.Second, Interval: 2 * time.Millisecond, ClientOpts: c.ClientOpts()})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	time.Sleep(2 * time.Second)
	p, old := isolatedPartition(t, ctx, roles, topic, partitions)
	oldDir := filepath.Join(c.Local.Nodes()[old].LogDir(), topic+"-"+strconv.Itoa(int(p)))
	h.Note("isolate node%d, leader of partition %d", old+1, p)
	heal, err := c.Net.Isolate(old)
	if err != nil {
		t.Fatal(err)
	}
	// A producer that reaches only the isolated leader (clients are not
	// cut from it) writes a few records it can never have acknowledged:
	// whether the workload's own appends were in flight at the cut is
	// luck, and without a tail there is nothing to truncate.
	go writeUnacknowledgeable(ctx, c, old, topic, p)
	newLeader := waitNewLeader(t, ctx, roles, topic, p, old)
	time.Sleep(3 * time.Second) // acknowledged appends on the new leader
	before := dumpPartition(t, c, oldDir)
	if err := heal(); err != nil {
		t.Fatal(err)
	}
	h.Note("healed")
	settle(t, ctx, roles, topic, partitions)
	time.Sleep(2 * time.Second)
	w.Stop()
	if h.Final, err = chaos.FullRead(ctx, brokers, topic, c.ClientOpts()...); err != nil {
		t.Fatal(err)
	}
	logEvents(t, h)
	logHistory(t, h)
	if r := chaos.Check(h); !r.OK() {
		t.Fatalf("%s", r)
	}
	requireAcksAfter(t, h, "healed")
	final := map[int64]string{}
	for _, r := range h.Final[p] {
		final[r.Offset] = r.Value
	}
	checkTruncated(t, h, p, newLeader, before, dumpPartition(t, c, oldDir), final)
}

// isolatedPartition picks the partition to cut off with its leader: one
// led by the active controller's node if any, else partition 0. It
// returns the partition and its leader's node index.
func isolatedPartition(t *testing.T, ctx context.Context, roles *chaos.Roles, topic string, partitions int32) (int32, int) {
	t.Helper()
	ctrl, err := roles.ActiveController(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ps, err := roles.Partitions(ctx, 0, topic)
	if err != nil {
		t.Fatal(err)
	}
	p := int32(0)
	for q := range partitions {
		if ps[q].Leader == ctrl {
			p = q
			break
		}
	}
	t.Logf("active controller node%d; partition %d led by node%d (epoch %d, isr %v)", ctrl, p, ps[p].Leader, ps[p].Epoch, ps[p].ISR)
	old, err := roles.NodeIndex(ps[p].Leader)
	if err != nil {
		t.Fatal(err)
	}
	return p, old
}

// waitNewLeader waits for the majority's nodes to agree that a node
// other than old leads p, and returns its node index.
func waitNewLeader(t *testing.T, ctx context.Context, roles *chaos.Roles, topic string, p int32, old int) int {
	t.Helper()
	start := time.Now()
	for time.Since(start) < 30*time.Second {
		for i := range 3 {
			if i == old {
				continue
			}
			ps, err := roles.Partitions(ctx, i, topic)
			if err != nil || ps[p].Leader < 0 {
				continue
			}
			if idx, err := roles.NodeIndex(ps[p].Leader); err == nil && idx != old {
				t.Logf("node%d leads partition %d (epoch %d, isr %v) %v after the isolation",
					idx+1, p, ps[p].Epoch, ps[p].ISR, time.Since(start).Round(time.Millisecond))
				return idx
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("no new leader of partition %d within 30s of isolating node%d", p, old+1)
	return 0
}

// dumpPartition reads a partition directory's records with `varve log
// dump --print-records` (a reader of the files only): offset -> value.
func dumpPartition(t *testing.T, c *chaos.Cluster, dir string) map[int64]string {
	t.Helper()
	bin := filepath.Join(filepath.Dir(filepath.Dir(c.Local.Nodes()[0].Dir)), "varve")
	out, err := exec.Command(bin, "log", "dump", "--print-records", dir).Output()
	if err != nil {
		t.Fatalf("varve log dump %s: %v\n%s", dir, err, out)
	}
	recs := map[int64]string{}
	for _, line := range strings.Split(string(out), "\n") {
		if !strings.HasPrefix(line, "| offset: ") {
			continue
		}
		f := strings.Fields(line)
		off, err := strconv.ParseInt(f[2], 10, 64)
		if err != nil {
			t.Fatalf("dump line %q: %v", line, err)
		}
		i := strings.Index(line, " payload: ")
		if i < 0 {
			t.Fatalf("dump line %q has no payload", line)
		}
		v, err := strconv.Unquote(strings.Fields(line[i+len(" payload: "):])[0])
		if err != nil {
			t.Fatalf("dump line %q: payload: %v", line, err)
		}
		recs[off] = v
	}
	return recs
}

// checkTruncated checks the old leader's log: before the heal it held a
// tail the new leader never had (records no one acknowledged); after
// it, it holds exactly the final read's records, none of that tail.
func checkTruncated(t *testing.T, h *chaos.History, p int32, newLeader int, before, after, final map[int64]string) {
	t.Helper()
	ackedAt := map[string]int64{}
	for _, a := range h.Appends() {
		if a.Outcome == chaos.OK && a.Partition == p {
			ackedAt[a.Value] = a.Offset
		}
	}
	var divergent []string
	for _, off := range slices.Sorted(maps.Keys(before)) {
		v := before[off]
		if final[off] == v {
			continue
		}
		// An idempotent producer retries what the old leader never
		// acknowledged; the new leader may acknowledge it, elsewhere.
		at, ok := ackedAt[v]
		divergent = append(divergent, fmt.Sprintf("%d=%s (acknowledged: %v at %d)", off, v, ok, at))
		if ok && at == off {
			t.Errorf("%q was acknowledged at offset %d, which the final read holds %q at", v, off, final[off])
		}
	}
	if len(divergent) == 0 {
		t.Fatalf("the isolated leader's log held no tail of its own (%d records): the test exercised no truncation", len(before))
	}
	t.Logf("the isolated leader's divergent tail (%d records, new leader node%d): %v", len(divergent), newLeader+1, divergent)
	for off, v := range after {
		if fv, ok := final[off]; ok && fv != v {
			t.Errorf("after the heal the old leader holds %q at offset %d, the final read %q", v, off, fv)
		}
	}
	for off, v := range final {
		if av, ok := after[off]; !ok || av != v {
			t.Errorf("after the heal the old leader lacks %q at offset %d (has %q)", v, off, av)
		}
	}
}

// writeUnacknowledgeable sends acks=all records for partition p to node
// alone, which is cut from the other replicas: they land in its log and
// can never be acknowledged. They are not in the history: no client was
// told they were written, so the checkers must not find them either.
func writeUnacknowledgeable(ctx context.Context, c *chaos.Cluster, node int, topic string, p int32) {
	opts := append(c.ClientOpts(), kgo.SeedBrokers(c.Local.Nodes()[node].Addr()), kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.DisableIdempotentWrite(), kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.RecordRetries(0),
		kgo.RecordDeliveryTimeout(3*time.Second))
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return
	}
	defer cl.Close()
	pctx, cancel := context.WithTimeout(ctx, 4*time.Second)
	defer cancel()
	for i := range 5 {
		cl.Produce(pctx, &kgo.Record{Topic: topic, Partition: p, Value: []byte(fmt.Sprintf("unacknowledgeable-%d", i))}, nil)
	}
	cl.Flush(pctx)
}
