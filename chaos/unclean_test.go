package chaos_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/varve/varve/chaos"
)

// uncleanNodes is the cluster the unclean-election scenario runs on:
// the partition's three replicas, and two more nodes that hold none of
// them, so that the controller quorum keeps a majority (3 of 5 voters)
// while two of the replicas are dead.
// On three combined nodes the ISR could not shrink to the leader alone
// by killing both followers: the controller that shrinks it would have
// lost its quorum with them.
const uncleanNodes = 5

// Kafka: unclean.leader.election.enable (KIP-704 for its KRaft
// form, KIP-841 for the ISR's last member). With
// min.insync.replicas=1 the ISR of a partition can shrink to its leader
// alone, which goes on acknowledging acks=all appends by itself. When
// that leader dies, the other replicas are out of sync. With unclean
// elections off (Kafka's default), the controller keeps the dead leader
// as the ISR's last member and elects no one: the partition is
// unavailable (no leader, no acknowledgement) until the leader comes
// back, and nothing is lost. With them on, it elects an out-of-sync
// replica, which acknowledges new appends at the offsets the old
// leader had acknowledged others at; the old leader truncates to it on
// return, and the appends it acknowledged alone are lost. The checkers
// must say so.
func TestClusterUncleanElection(t *testing.T) {
	if testing.Short() {
		t.Skip("runs five varve server processes twice, killing three")
	}
	skipUnderRace(t)
	for _, unclean := range []bool{false, true} {
		t.Run("unclean="+strconv.FormatBool(unclean), func(t *testing.T) {
			if !chaos.EnterNetns(t) {
				return
			}
			runUncleanScenario(t, unclean)
		})
	}
}

// uncleanRun is one run of the scenario: the cluster, the history, and
// the node indexes of the partition's leader (a) and followers (f1, f2).
type uncleanRun struct {
	t         *testing.T
	ctx       context.Context
	c         *chaos.Cluster
	roles     *chaos.Roles
	h         *chaos.History
	a, f1, f2 int
}

const uncleanTopic = "unclean"

func runUncleanScenario(t *testing.T, unclean bool) {
	c, roles := startFaultClusterOf(t, uncleanNodes)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := chaos.CreateTopicWith(ctx, c.Brokers(), uncleanTopic, 1, 3, map[string]*string{
		"min.insync.replicas":            ptr("1"),
		"unclean.leader.election.enable": ptr(strconv.FormatBool(unclean)),
	}, c.ClientOpts()...); err != nil {
		t.Fatal(err)
	}
	settle(t, ctx, roles, uncleanTopic, 1)
	r := &uncleanRun{t: t, ctx: ctx, c: c, roles: roles, h: chaos.NewHistory()}
	r.a, r.f1, r.f2 = r.replicas()
	w, err := chaos.StartWorkload(r.h, chaos.WorkloadConfig{Brokers: c.Brokers(), Topic: uncleanTopic, Partitions: 1,
		Producers: 2, AppendTimeout: 10 * time.Second, Interval: 2 * time.Millisecond, ClientOpts: c.ClientOpts()})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	r.h.Note("workload started")
	r.waitAcks("workload started", 200, "the full ISR")
	r.shrinkToLeader()
	r.kill(r.a, "leader")
	r.start(r.f1, r.f2)
	if unclean {
		r.uncleanLeader()
	} else {
		r.noLeader()
	}
	r.start(r.a)
	settle(t, ctx, roles, uncleanTopic, 1)
	r.h.Note("every replica in sync again")
	time.Sleep(time.Second)
	w.Stop()
	if r.h.Final, err = chaos.FullRead(ctx, c.Brokers(), uncleanTopic, c.ClientOpts()...); err != nil {
		t.Fatal(err)
	}
	logEvents(t, r.h)
	logHistory(t, r.h)
	requireAcksAfter(t, r.h, "every replica in sync again")
	rep := chaos.Check(r.h)
	if unclean {
		r.checkLoss(rep)
	} else {
		r.checkNoLoss(rep)
	}
}

// replicas returns the node indexes of the partition's leader and of
// its two followers, as node 1 sees them.
func (r *uncleanRun) replicas() (a, b, c int) {
	ps, err := r.roles.Partitions(r.ctx, 0, uncleanTopic)
	if err != nil {
		r.t.Fatal(err)
	}
	p := ps[0]
	var idx []int
	for _, id := range append([]int32{p.Leader}, p.Replicas...) {
		i, err := r.roles.NodeIndex(id)
		if err != nil {
			r.t.Fatal(err)
		}
		if !slices.Contains(idx, i) {
			idx = append(idx, i)
		}
	}
	if len(idx) != 3 {
		r.t.Fatalf("partition 0: leader %d replicas %v: want a leader among three replicas", p.Leader, p.Replicas)
	}
	r.t.Logf("partition 0: leader node%d, followers node%d and node%d", idx[0]+1, idx[1]+1, idx[2]+1)
	return idx[0], idx[1], idx[2]
}

// shrinkToLeader kills both followers and waits for the ISR to be the
// leader alone (the controller fences them after the session timeout)
// and for the leader to acknowledge appends by itself.
func (r *uncleanRun) shrinkToLeader() {
	r.kill(r.f1, "follower")
	r.kill(r.f2, "follower")
	want := []int32{int32(r.a + 1)}
	start := time.Now()
	for {
		ps, err := r.roles.Partitions(r.ctx, r.a, uncleanTopic)
		if err == nil && slices.Equal(ps[0].ISR, want) {
			break
		}
		if time.Since(start) > 20*time.Second {
			r.t.Fatalf("the ISR did not shrink to node%d within 20s: %v %v", r.a+1, ps, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	r.h.Note("isr [node%d]", r.a+1)
	r.t.Logf("the ISR shrank to node%d %v after the second kill", r.a+1, time.Since(start).Round(time.Millisecond))
	r.waitAcks("isr [node"+strconv.Itoa(r.a+1)+"]", 200, "the leader alone")
}

// waitAcks waits up to 15 s for n appends acknowledged after the event
// since, and fails the test if they do not come.
func (r *uncleanRun) waitAcks(since string, n int, by string) {
	for deadline := time.Now().Add(15 * time.Second); r.acksSince(since) < n; {
		if time.Now().After(deadline) {
			r.t.Fatalf("%s acknowledged fewer than %d appends in 15s after %q", by, n, since)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (r *uncleanRun) kill(i int, role string) {
	r.h.Note("kill node%d (%s)", i+1, role)
	if err := r.c.Local.Nodes()[i].Kill(); err != nil {
		r.t.Fatal(err)
	}
}

func (r *uncleanRun) start(is ...int) {
	for _, i := range is {
		r.h.Note("start node%d", i+1)
		if err := r.c.Local.Nodes()[i].Start(); err != nil {
			r.t.Fatal(err)
		}
	}
}

// acksSince counts the appends acknowledged after the event what.
func (r *uncleanRun) acksSince(what string) int {
	at := eventAt(r.t, r.h, what)
	n := 0
	for _, a := range r.h.Appends() {
		if a.Outcome == chaos.OK && a.Complete > at {
			n++
		}
	}
	return n
}

func eventAt(t *testing.T, h *chaos.History, what string) time.Duration {
	t.Helper()
	for _, e := range h.Events() {
		if e.What == what {
			return e.At
		}
	}
	t.Fatalf("no event %q", what)
	return 0
}

// livePartition is partition 0 as the live node i's Metadata shows it.
func (r *uncleanRun) livePartition(i int) (chaos.PartitionState, error) {
	ps, err := r.roles.Partitions(r.ctx, i, uncleanTopic)
	if err != nil {
		return chaos.PartitionState{}, err
	}
	return ps[0], nil
}

// noLeader waits for the live nodes to show partition 0 without a
// leader (the dead leader fenced, the last member of its ISR), then
// checks for a few seconds that no live node shows another leader:
// unclean elections off, no out-of-sync replica may take over. (A node
// just started may still show the dead leader until it has replayed
// the metadata log; that is no election.)
func (r *uncleanRun) noLeader() {
	start := time.Now()
	for {
		p, err := r.livePartition(r.f1)
		if err == nil && p.Leader == -1 {
			r.h.Note("no leader")
			killed := eventAt(r.t, r.h, fmt.Sprintf("kill node%d (leader)", r.a+1))
			r.t.Logf("node%d shows no leader (isr %v) %v after the leader's kill", r.f1+1, p.ISR,
				(r.h.Now() - killed).Round(time.Millisecond))
			break
		}
		if time.Since(start) > 20*time.Second {
			r.t.Fatalf("node%d still shows a leader 20s after the leader's kill: %+v %v", r.f1+1, p, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	for end := time.Now().Add(4 * time.Second); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
		for i := range uncleanNodes {
			if i == r.a {
				continue
			}
			if p, err := r.livePartition(i); err == nil && p.Leader != -1 && int(p.Leader-1) != r.a {
				r.t.Fatalf("node%d shows leader %d (isr %v) with unclean elections off", i+1, p.Leader, p.ISR)
			}
		}
	}
}

// uncleanLeader waits for one of the out-of-sync followers to be
// elected and to acknowledge appends.
func (r *uncleanRun) uncleanLeader() {
	start := time.Now()
	for {
		p, err := r.livePartition(r.f1)
		if err == nil && p.Leader > 0 && int(p.Leader-1) != r.a {
			r.h.Note("unclean election")
			r.t.Logf("node%d elected (isr %v, epoch %d) %v after the followers started", p.Leader, p.ISR, p.Epoch,
				time.Since(start).Round(time.Millisecond))
			break
		}
		if time.Since(start) > 20*time.Second {
			r.t.Fatalf("no follower elected within 20s with unclean elections on: %+v %v", p, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	r.waitAcks("unclean election", 200, "the uncleanly elected leader")
}

// checkNoLoss: unclean elections off, the checkers find nothing, and
// no append was acknowledged from the leader's death to its return.
func (r *uncleanRun) checkNoLoss(rep chaos.Report) {
	if !rep.OK() {
		r.t.Fatalf("%s", rep)
	}
	r.t.Log(rep)
	// From when the leader is gone (the followers start once its Kill has
	// returned; an answer sent before the signal may arrive just after
	// the kill's note) to its start.
	killed := eventAt(r.t, r.h, fmt.Sprintf("start node%d", r.f1+1))
	back := eventAt(r.t, r.h, fmt.Sprintf("start node%d", r.a+1))
	for _, a := range r.h.Appends() {
		if a.Outcome == chaos.OK && a.Complete > killed && a.Complete < back {
			r.t.Errorf("acknowledged while the only in-sync replica was dead: %s", a)
		}
	}
	r.t.Logf("no acknowledgement for %v, from the leader's death to its return",
		(back - killed).Round(time.Millisecond))
}

// uncleanExpected are the checkers that may report the loss an unclean
// election allows: the lost appends themselves, their offsets now
// holding the new leader's records, and the history of acknowledged
// offsets no longer fitting one log. Any other anomaly is a bug.
var uncleanExpected = []string{"lost", "inconsistent-offsets", "linearizable"}

// checkLoss: unclean elections on, the checkers must report lost
// acknowledged appends, each acknowledged after the first follower's
// kill (when the ISR began to shrink) and before the leader was gone,
// and no anomaly of another kind.
func (r *uncleanRun) checkLoss(rep chaos.Report) {
	r.t.Logf("%d anomalies: %s", len(rep.Anomalies), countByChecker(rep))
	lost := rep.Of("lost")
	if len(lost) == 0 {
		r.t.Fatal("the checkers found no lost record after an unclean election over an ISR of one")
	}
	for _, a := range rep.Anomalies {
		if !slices.Contains(uncleanExpected, a.Checker) {
			r.t.Errorf("unexpected anomaly: %s", a)
		}
	}
	from := eventAt(r.t, r.h, fmt.Sprintf("kill node%d (follower)", r.f1+1))
	// The kill is noted just before the signal, so an answer already on
	// its way may complete just after the note: the window ends when the
	// leader is gone (the followers are started once Kill has returned).
	to := eventAt(r.t, r.h, fmt.Sprintf("start node%d", r.f1+1))
	inFinal := map[string]bool{}
	for _, rec := range r.h.Final[0] {
		inFinal[rec.Value] = true
	}
	n, kept := 0, 0
	for _, a := range r.h.Appends() {
		if a.Outcome == chaos.OK && a.Complete < from && inFinal[a.Value] {
			kept++
		}
		if a.Outcome != chaos.OK || inFinal[a.Value] {
			continue
		}
		n++
		if a.Complete < from || a.Complete > to {
			r.t.Errorf("lost an append acknowledged outside the ISR's shrinking (%v to %v): %s", from, to, a)
		}
	}
	if kept == 0 {
		r.t.Error("no append acknowledged by the full ISR survived: the run shows no line between kept and lost")
	}
	r.t.Logf("%d acknowledged appends lost (%d lost anomalies), all acknowledged while the ISR shrank to node%d; "+
		"the %d acknowledged by the full ISR kept", n, len(lost), r.a+1, kept)
}

// countByChecker summarises a report too long to print: how many
// anomalies each checker found, and its first one.
func countByChecker(rep chaos.Report) string {
	n, first := map[string]int{}, map[string]chaos.Anomaly{}
	for _, a := range rep.Anomalies {
		if n[a.Checker]++; n[a.Checker] == 1 {
			first[a.Checker] = a
		}
	}
	var b strings.Builder
	for _, c := range rep.Checked {
		if n[c] > 0 {
			fmt.Fprintf(&b, "\n  %s: %d, the first: %s", c, n[c], first[c])
		}
	}
	return b.String()
}
