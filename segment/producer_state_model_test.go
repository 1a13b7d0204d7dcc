package segment_test

import (
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/varve/varve/segment"
)

// pBatch is a batch in the model's log; pid -1 is a batch without a
// producer.
type pBatch struct {
	pid         int64
	epoch       int16
	firstSeq    int32
	lastSeq     int32
	first, last int64
	idem        idem
}

// pEntry is the model's state of one producer: its epoch and its
// remembered batches, oldest first.
type pEntry struct {
	epoch   int16
	batches []pBatch
}

func (e *pEntry) push(b pBatch) {
	if b.epoch != e.epoch {
		e.epoch, e.batches = b.epoch, nil
	}
	e.batches = append(e.batches, b)
	if len(e.batches) > segment.NumBatchesToRetain {
		e.batches = e.batches[1:]
	}
}

// producerModel is what the property test expects of the log, written
// from Kafka's rules directly: the checks of ProducerAppendInfo, a
// snapshot that keeps each producer's epoch and last batch, and a
// rebuild that loads the latest snapshot and replays the log after it.
type producerModel struct {
	log   []pBatch // every batch in the log, in order
	end   int64
	bases []int64 // segment base offsets
	snaps []int64 // snapshot files
	state map[int64]*pEntry
}

func newProducerModel() *producerModel {
	return &producerModel{bases: []int64{0}, state: map[int64]*pEntry{}}
}

// outcome is what an append should give.
type outcome struct {
	err         error // nil, ErrInvalidProducerEpoch or ErrOutOfOrderSequence
	dup         bool
	first, last int64
}

func (m *producerModel) expect(b idem) outcome {
	e := m.state[b.pid]
	if e == nil {
		return outcome{first: m.end, last: m.end + int64(b.n) - 1}
	}
	if b.epoch == e.epoch {
		for _, x := range e.batches {
			if x.firstSeq == b.seq && x.lastSeq == b.lastSeq() {
				return outcome{dup: true, first: x.first, last: x.last}
			}
		}
	}
	switch {
	case b.epoch < e.epoch:
		return outcome{err: segment.ErrInvalidProducerEpoch}
	case b.epoch != e.epoch && b.seq != 0:
		return outcome{err: segment.ErrOutOfOrderSequence}
	case b.epoch == e.epoch && b.seq != lastSeqOf(e)+1:
		return outcome{err: segment.ErrOutOfOrderSequence}
	}
	return outcome{first: m.end, last: m.end + int64(b.n) - 1}
}

func lastSeqOf(e *pEntry) int32 {
	if len(e.batches) == 0 {
		return -1
	}
	return e.batches[len(e.batches)-1].lastSeq
}

func (m *producerModel) appended(b pBatch) {
	m.log = append(m.log, b)
	m.end = b.last + 1
	if b.pid < 0 {
		return
	}
	if m.state[b.pid] == nil {
		m.state[b.pid] = &pEntry{epoch: b.epoch}
	}
	m.state[b.pid].push(b)
}

func (m *producerModel) addSnap(off int64) {
	if off > 0 && !slices.Contains(m.snaps, off) {
		m.snaps = append(m.snaps, off)
		slices.Sort(m.snaps)
	}
}

func (m *producerModel) roll() {
	if m.end > m.bases[len(m.bases)-1] {
		m.bases = append(m.bases, m.end)
		m.addSnap(m.end)
	}
}

// rebuild is the state from the latest snapshot at or below the end,
// plus a replay of the batches after it; then a snapshot at the end.
func (m *producerModel) rebuild() {
	m.snaps = slices.DeleteFunc(m.snaps, func(o int64) bool { return o > m.end })
	s := int64(0)
	if len(m.snaps) > 0 {
		s = m.snaps[len(m.snaps)-1]
	}
	m.state = map[int64]*pEntry{}
	for _, b := range m.log { // the snapshot: epoch and last batch before s
		if b.pid >= 0 && b.last < s {
			m.state[b.pid] = &pEntry{epoch: b.epoch, batches: []pBatch{b}}
		}
	}
	for _, b := range m.log {
		if b.pid >= 0 && b.first >= s {
			if m.state[b.pid] == nil {
				m.state[b.pid] = &pEntry{epoch: b.epoch}
			}
			m.state[b.pid].push(b)
		}
	}
	if m.end > s {
		m.addSnap(m.end)
	}
}

// reopen is Close (a snapshot at the end) or a crash, then Open: stray
// snapshots go (all but the largest past every base), then the rebuild.
func (m *producerModel) reopen(clean bool) {
	if clean {
		m.addSnap(m.end)
	}
	var strays []int64
	for _, o := range m.snaps {
		if !slices.Contains(m.bases, o) {
			strays = append(strays, o)
		}
	}
	if n := len(strays); n > 0 {
		keep := strays[n-1]
		if keep < slices.Max(m.bases) {
			keep = -1
		}
		m.snaps = slices.DeleteFunc(m.snaps, func(o int64) bool { return slices.Contains(strays, o) && o != keep })
	}
	m.rebuild()
}

// truncate keeps the first k batches.
func (m *producerModel) truncate(k int) {
	m.end = m.log[k].first
	m.log = m.log[:k]
	m.bases = slices.DeleteFunc(m.bases, func(b int64) bool { return b > m.end })
	m.rebuild()
}

// check compares the log's producer state with the model's.
func (m *producerModel) check(rt *rapid.T, l *segment.Log, what string) {
	if l.EndOffset() != m.end {
		rt.Fatalf("%s: end %d, model %d", what, l.EndOffset(), m.end)
	}
	for _, pid := range []int64{1, 2} {
		got, ok := l.ProducerState(pid)
		want := m.state[pid]
		if ok != (want != nil) {
			rt.Fatalf("%s: producer %d known %v, model %v", what, pid, ok, want != nil)
		}
		if !ok {
			continue
		}
		var wantBatches []segment.ProducerBatch
		for _, b := range want.batches {
			wantBatches = append(wantBatches, segment.ProducerBatch{FirstSequence: b.firstSeq, LastSequence: b.lastSeq,
				FirstOffset: b.first, LastOffset: b.last, MaxTimestamp: b.idem.ts})
		}
		if got.Epoch != want.epoch || fmt.Sprint(got.Batches) != fmt.Sprint(wantBatches) {
			rt.Fatalf("%s: producer %d: epoch %d batches %v; model epoch %d batches %v", what, pid, got.Epoch, got.Batches, want.epoch, wantBatches)
		}
	}
}

// drawBatch picks the next producer batch: the expected next one, a
// retry of an earlier one, a gap, a new epoch, or an old epoch.
func (m *producerModel) drawBatch(rt *rapid.T, history map[int64][]idem, ts int64) idem {
	pid := rapid.Int64Range(1, 2).Draw(rt, "pid")
	e := m.state[pid]
	b := idem{pid: pid, n: rapid.IntRange(1, 3).Draw(rt, "records"), ts: ts}
	if e != nil {
		b.epoch, b.seq = e.epoch, lastSeqOf(e)+1
	}
	switch rapid.IntRange(0, 5).Draw(rt, "kind") {
	case 0, 1: // the next batch
	case 2:
		if h := history[pid]; len(h) > 0 {
			return h[rapid.IntRange(0, len(h)-1).Draw(rt, "retry")]
		}
	case 3:
		b.seq += rapid.Int32Range(1, 3).Draw(rt, "gap")
	case 4:
		b.epoch++
		b.seq = rapid.Int32Range(0, 2).Draw(rt, "new epoch seq")
	case 5:
		b.epoch = max(b.epoch-1, 0)
	}
	return b
}

// Kafka: the idempotent producer rules (ProducerAppendInfo), the
// five-batch window, snapshots at rolls and closes holding one batch
// per producer, and the rebuild on Open and truncation, checked by a
// property test of random appends, retries, rolls, truncations and
// clean and unclean reopens against producerModel.
func TestProducerStateMatchesModel(t *testing.T) {
	root := t.TempDir()
	n := 0
	rapid.Check(t, func(rt *rapid.T) {
		n++
		dir := filepath.Join(root, fmt.Sprintf("pmodel-%d", n))
		cfg := segment.DefaultConfig()
		cfg.FS = noSyncFS()
		cfg.Logger = slog.New(slog.DiscardHandler)
		l, err := segment.Open(dir, cfg)
		if err != nil {
			rt.Fatal(err)
		}
		defer func() { l.Close() }()
		m := newProducerModel()
		history := map[int64][]idem{}
		ts := time.Now().UnixMilli()
		reopen := func(clean bool) {
			if clean {
				if err := l.Close(); err != nil {
					rt.Fatal(err)
				}
			} else {
				l.Abandon()
			}
			if l, err = segment.Open(dir, cfg); err != nil {
				rt.Fatal(err)
			}
			m.reopen(clean)
		}
		steps := rapid.IntRange(1, 40).Draw(rt, "steps")
		for i := 0; i < steps; i++ {
			var what string
			switch op := rapid.IntRange(0, 11).Draw(rt, "op"); {
			case op == 0:
				what = "roll"
				if err := l.Roll(); err != nil {
					rt.Fatal(err)
				}
				m.roll()
			case op == 1 || op == 2:
				what = fmt.Sprintf("reopen clean=%v", op == 1)
				reopen(op == 1)
			case op == 3 && len(m.log) > 0:
				k := rapid.IntRange(0, len(m.log)-1).Draw(rt, "keep")
				what = fmt.Sprintf("truncate to %d", m.log[k].first)
				if err := l.TruncateTo(m.log[k].first); err != nil {
					rt.Fatal(err)
				}
				m.truncate(k)
			case op == 4:
				what = "plain append"
				info, err := l.Append(buildRT(rt, idem{pid: -1, seq: -1, epoch: -1, n: 1, ts: ts}))
				if err != nil {
					rt.Fatal(err)
				}
				m.appended(pBatch{pid: -1, first: info.FirstOffset, last: info.LastOffset})
			default:
				b := m.drawBatch(rt, history, ts)
				what = fmt.Sprintf("append %+v", b)
				m.appendAndCompare(rt, l, b, history)
			}
			m.check(rt, l, what)
		}
	})
}

// appendAndCompare appends b and compares the outcome with the model's.
func (m *producerModel) appendAndCompare(rt *rapid.T, l *segment.Log, b idem, history map[int64][]idem) {
	want := m.expect(b)
	info, err := l.Append(buildRT(rt, b))
	switch {
	case want.err != nil:
		if !errors.Is(err, want.err) {
			rt.Fatalf("append %+v: got %+v, %v; model says %v", b, info, err, want.err)
		}
		return
	case err != nil:
		rt.Fatalf("append %+v: %v; model says %+v", b, err, want)
	case info.Duplicate != want.dup || info.FirstOffset != want.first || info.LastOffset != want.last:
		rt.Fatalf("append %+v: got %+v; model says %+v", b, info, want)
	}
	if !want.dup {
		m.appended(pBatch{pid: b.pid, epoch: b.epoch, firstSeq: b.seq, lastSeq: b.lastSeq(),
			first: info.FirstOffset, last: info.LastOffset, idem: b})
		history[b.pid] = append(history[b.pid], b)
	}
}

func buildRT(rt *rapid.T, b idem) []byte {
	out, err := b.bytes()
	if err != nil {
		rt.Fatal(err)
	}
	return out
}
