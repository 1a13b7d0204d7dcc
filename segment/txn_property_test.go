package segment_test

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/varve/varve/segment"
)

// txnModel is what the log must say about transactions: the open ones
// (producer -> first offset) and the aborted ones, in marker order.
type txnModel struct {
	open    map[int64]int64
	aborted []segment.AbortedTxn
}

// end applies a marker of pid at offset off.
func (m *txnModel) end(pid, off int64, commit bool) {
	first, ok := m.open[pid]
	if !ok {
		first = off // Kafka: a marker with no open transaction spans itself
	}
	lso := off + 1
	best := int64(-1)
	for p, f := range m.open {
		if p != pid && (best < 0 || f < best) {
			best = f
		}
	}
	if best >= 0 {
		lso = best
	}
	delete(m.open, pid)
	if !commit {
		m.aborted = append(m.aborted, segment.AbortedTxn{ProducerID: pid, FirstOffset: first, LastOffset: off, LastStableOffset: lso})
	}
}

func (m *txnModel) lso(leo int64) int64 {
	for _, f := range m.open {
		leo = min(leo, f)
	}
	return leo
}

func (m *txnModel) overlapping(from, upTo int64) []segment.AbortedTxn {
	var out []segment.AbortedTxn
	for _, a := range m.aborted {
		if a.LastOffset >= from && a.FirstOffset < upTo {
			out = append(out, a)
		}
	}
	return out
}

// Kafka: ProducerStateManager (ongoingTxns, lastStableOffset) and
// TransactionIndex, checked against a model over random interleavings of
// transactional data, plain data, COMMIT and ABORT markers, rolls, clean
// restarts and crashes.
func TestTxnPropertyAgainstModel(t *testing.T) {
	for seed := uint64(1); seed <= 8; seed++ {
		runTxnProperty(t, seed, 120)
	}
}

func runTxnProperty(t *testing.T, seed uint64, steps int) {
	rng := rand.New(rand.NewPCG(seed, 7))
	dir := t.TempDir()
	l := open(t, dir, quietConfig())
	defer func() { l.Close() }()
	m := &txnModel{open: map[int64]int64{}}
	prods := map[int64]*txnProducer{}
	for i := int64(1); i <= 4; i++ {
		prods[i] = &txnProducer{pid: i}
	}
	for step := 0; step < steps; step++ {
		pid := int64(1 + rng.IntN(4))
		p := prods[pid]
		switch op := rng.IntN(20); {
		case op < 8:
			info := p.send(t, l, 1+rng.IntN(3))
			if _, ok := m.open[pid]; !ok {
				m.open[pid] = info.FirstOffset
			}
		case op < 10:
			appendN(t, l, 1, 1+rng.IntN(2), 8, int64(step))
		case op < 15:
			if _, ok := m.open[pid]; !ok && rng.IntN(4) != 0 {
				continue
			}
			commit := rng.IntN(2) == 0
			info := p.end(t, l, commit)
			m.end(pid, info.FirstOffset, commit)
		case op < 17:
			mustRoll(t, l)
		case op < 18:
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			l = open(t, dir, quietConfig())
		default:
			l.Abandon()
			l.CloseFilesAbandoned()
			l = open(t, dir, quietConfig())
		}
		leo := l.EndOffset()
		if got, want := lso(l), m.lso(leo); got != want {
			t.Fatalf("seed %d step %d: LSO %d, model %d (open %v)", seed, step, got, want, m.open)
		}
		if got := l.AbortedTransactions(0, leo); !slices.Equal(got, m.aborted) {
			t.Fatalf("seed %d step %d: aborted\n got %+v\nwant %+v", seed, step, got, m.aborted)
		}
		if leo > 0 {
			from := rng.Int64N(leo)
			upTo := from + 1 + rng.Int64N(leo-from)
			if got, want := l.AbortedTransactions(from, upTo), m.overlapping(from, upTo); !slices.Equal(got, want) {
				t.Fatalf("seed %d step %d: aborted in [%d,%d)\n got %+v\nwant %+v", seed, step, from, upTo, got, want)
			}
		}
	}
}
