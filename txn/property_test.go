package txn

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/twmb/franz-go/pkg/kerr"
	"pgregory.net/rapid"
)

// Random sequences of requests, marker reports, clock ticks, failed
// writes and reloads over a few transactional ids. After every step:
//   - the state a reload of the log rebuilds is the coordinator's
//     (Kafka: the log is the state; loadTransactionsForTxnTopicPartition);
//   - a producer id's epoch never goes down (zombie fencing depends on it);
//   - an id in PrepareCommit or PrepareAbort has exactly one marker
//     request outstanding or, its markers written, its Complete record
//     waiting to be written again; no other id has either.
func TestCoordinatorRandomSequences(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		m := newModel()
		ids := []string{"a", "b", "c"}
		for step := 0; step < 60; step++ {
			id := rapid.SampledFrom(ids).Draw(rt, "id")
			switch op := rapid.IntRange(0, 8).Draw(rt, "op"); op {
			case 0, 1:
				m.init(id, rapid.Bool().Draw(rt, "kip360"))
			case 2, 3:
				m.add(id, rapid.IntRange(0, 3).Draw(rt, "partition"))
			case 4:
				m.end(id, rapid.Bool().Draw(rt, "commit"))
			case 5:
				m.written(rapid.IntRange(0, 4).Draw(rt, "which"))
			case 6:
				m.advance(time.Duration(rapid.IntRange(1, 40).Draw(rt, "seconds")) * time.Second)
			case 7:
				m.log.Fail = nil
				if rapid.IntRange(0, 3).Draw(rt, "fail") == 0 {
					m.log.Fail = kerr.NotEnoughReplicas
				}
			case 8:
				m.log.Fail = nil
				m.reload()
			}
			m.check(rt)
		}
	})
}

type model struct {
	c      *Coordinator
	log    *MemoryLog
	now    time.Time
	next   int64
	sent   []MarkerRequest
	epochs map[int64]int16 // highest epoch seen per producer id
	known  map[string]InitResult
}

func newModel() *model {
	m := &model{log: &MemoryLog{}, now: time.UnixMilli(1_700_000_000_000), next: 10,
		epochs: map[int64]int16{}, known: map[string]InitResult{}}
	m.c = m.coordinator()
	m.c.BeginLoad(0)
	m.c.FinishLoad(m.now)
	return m
}

func (m *model) Send(r MarkerRequest) { m.sent = append(m.sent, r) }

func (m *model) coordinator() *Coordinator {
	cfg := Config{AbortCheckInterval: 5 * time.Second, IDExpiration: 2 * time.Minute, ExpireCheckInterval: 30 * time.Second}
	return New(0, cfg, m.log, func() (int64, error) { m.next++; return m.next - 1, nil }, m)
}

func (m *model) init(id string, kip360 bool) {
	pid, epoch := int64(-1), int16(-1)
	if k, ok := m.known[id]; ok && kip360 {
		pid, epoch = k.ProducerID, k.Epoch
	}
	if r := m.c.InitProducerID(m.now, id, 10_000, pid, epoch); r.Code == 0 {
		m.known[id] = r
	}
}

func (m *model) add(id string, p int) {
	k := m.known[id]
	m.c.AddPartitions(m.now, id, k.ProducerID, k.Epoch, []TopicPartition{{"t", int32(p)}}, 0)
}

func (m *model) end(id string, commit bool) {
	k := m.known[id]
	m.c.EndTxn(m.now, id, k.ProducerID, k.Epoch, commit, 0)
}

func (m *model) written(i int) {
	if len(m.sent) == 0 {
		return
	}
	i %= len(m.sent)
	r := m.sent[i]
	m.sent = append(m.sent[:i], m.sent[i+1:]...)
	m.c.MarkersWritten(m.now, r)
}

func (m *model) advance(d time.Duration) {
	m.now = m.now.Add(d)
	m.c.Tick(m.now)
}

func (m *model) reload() {
	m.sent = nil
	m.c = m.coordinator()
	m.c.BeginLoad(m.c.Epoch() + 1)
	if _, err := m.c.Load(m.log.Bytes()); err != nil {
		panic(err)
	}
	m.c.FinishLoad(m.now)
}

func (m *model) check(rt *rapid.T) {
	// The log rebuilds the state.
	r := New(0, Config{}, &MemoryLog{}, nil, &recordingMarkers{})
	r.BeginLoad(0)
	if _, err := r.Load(m.log.Bytes()); err != nil {
		rt.Fatal(err)
	}
	r.FinishLoad(m.now)
	want, got := describeAll(m.c), describeAll(r)
	if d := cmp.Diff(want, got); d != "" {
		rt.Fatalf("reloaded state differs (-coordinator +reloaded):\n%s", d)
	}
	outstanding := map[string]int{}
	for _, s := range m.sent {
		if s.CoordinatorEpoch == m.c.Epoch() {
			outstanding[s.TransactionalID]++
		}
	}
	for id, tm := range m.c.txns {
		if e, ok := m.epochs[tm.producerID]; ok && tm.epoch < e {
			rt.Fatalf("%s: producer %d epoch went from %d down to %d", id, tm.producerID, e, tm.epoch)
		}
		m.epochs[tm.producerID] = tm.epoch
		// Markers outstanding, or written with the Complete record to
		// be written again after a failure: one or the other.
		n, retrying := outstanding[id], m.c.retry[id]
		if tm.state.preparing() != (n+btoi(retrying) == 1) || n+btoi(retrying) > 1 {
			rt.Fatalf("%s in %s with %d marker requests outstanding, Complete retried: %v", id, tm.state, n, retrying)
		}
	}
}

func describeAll(c *Coordinator) []string {
	var out []string
	for _, id := range c.sortedIDs() {
		d := c.Describe(id)
		out = append(out, fmt.Sprintf("%s %s pid=%d epoch=%d timeout=%d start=%d %v", id, d.State, d.ProducerID, d.Epoch, d.TimeoutMs, d.StartTimestamp, d.Partitions))
	}
	return out
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
