package cluster_test

import (
	"context"
	"maps"
	"net"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// groupProps keep group tests fast: no initial rebalance delay, short
// session timeouts allowed, and a small __consumer_offsets.
func groupProps(extra map[string]string) map[string]string {
	p := map[string]string{
		"group.initial.rebalance.delay.ms": "0",
		"group.min.session.timeout.ms":     "100",
		"offsets.topic.num.partitions":     "5",
	}
	maps.Copy(p, extra)
	return p
}

// memberView follows the partitions kgo assigns one group member.
type memberView struct {
	mu     sync.Mutex
	owned  map[int32]bool
	events int // assignments and revocations seen
}

func newView() *memberView { return &memberView{owned: map[int32]bool{}} }

func (v *memberView) opts() []kgo.Opt {
	return []kgo.Opt{
		kgo.OnPartitionsAssigned(func(_ context.Context, _ *kgo.Client, m map[string][]int32) {
			v.update(m, true)
		}),
		kgo.OnPartitionsRevoked(func(_ context.Context, cl *kgo.Client, m map[string][]int32) {
			v.update(m, false)
		}),
		kgo.OnPartitionsLost(func(_ context.Context, _ *kgo.Client, m map[string][]int32) {
			v.update(m, false)
		}),
	}
}

func (v *memberView) update(m map[string][]int32, add bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	for _, ps := range m {
		for _, p := range ps {
			if add {
				v.owned[p] = true
			} else {
				delete(v.owned, p)
			}
			v.events++
		}
	}
}

func (v *memberView) partitions() []int32 {
	v.mu.Lock()
	defer v.mu.Unlock()
	return slices.Sorted(maps.Keys(v.owned))
}

func (v *memberView) eventCount() int {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.events
}

// groupMember is a kgo group consumer with short timeouts.
func groupMember(t *testing.T, addr, groupID, topic string, v *memberView, extra ...kgo.Opt) *kgo.Client {
	t.Helper()
	opts := []kgo.Opt{
		kgo.ConsumerGroup(groupID), kgo.ConsumeTopics(topic),
		kgo.SessionTimeout(time.Second), kgo.HeartbeatInterval(100 * time.Millisecond),
		kgo.RebalanceTimeout(3 * time.Second), kgo.FetchMaxWait(200 * time.Millisecond),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
	}
	if v != nil {
		opts = append(opts, v.opts()...)
	}
	cl, err := kgo.NewClient(append(append([]kgo.Opt{kgo.SeedBrokers(addr)}, opts...), extra...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// waitFor polls cond until it holds or timeout passes.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// freezer is a kgo dialer whose connections can all be cut at once, so
// that a client goes silent without leaving its group, as a crashed or
// partitioned consumer does.
type freezer struct {
	mu     sync.Mutex
	frozen bool
	conns  []net.Conn
}

func (f *freezer) dial(ctx context.Context, network, host string) (net.Conn, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.frozen {
		return nil, &net.OpError{Op: "dial", Net: network, Err: net.ErrClosed}
	}
	var d net.Dialer
	c, err := d.DialContext(ctx, network, host)
	if err == nil {
		f.conns = append(f.conns, c)
	}
	return c, err
}

func (f *freezer) freeze() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.frozen = true
	for _, c := range f.conns {
		c.Close()
	}
}

// pollUntil polls cl until stop says enough or the deadline passes,
// giving each record to take.
func pollUntil(t *testing.T, cl *kgo.Client, timeout time.Duration, take func(*kgo.Record) bool) {
	t.Helper()
	cx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	for {
		fs := cl.PollFetches(cx)
		if cx.Err() != nil {
			t.Fatalf("poll: deadline passed")
		}
		fs.EachError(func(topic string, p int32, err error) { t.Fatalf("fetch %s/%d: %v", topic, p, err) })
		done := false
		fs.EachRecord(func(r *kgo.Record) {
			if !done && take(r) {
				done = true
			}
		})
		if done {
			return
		}
	}
}
