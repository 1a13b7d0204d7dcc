package replica

import "github.com/google/btree"

// btreeTimer orders entries by (deadline, insertion sequence) in a
// B-tree: adding and removing an entry is O(log n), and expiring walks
// the smallest deadlines.
type btreeTimer struct {
	tree *btree.BTreeG[*timerEntry]
	seq  uint64
}

// btreeDegree suits a few thousand to a million entries: nodes of up to
// 63 pointers, a depth of 3 or 4 at 10,000.
const btreeDegree = 32

func newBTreeTimer() *btreeTimer {
	return &btreeTimer{tree: btree.NewG(btreeDegree, entryLess)}
}

func entryLess(a, b *timerEntry) bool {
	if a.deadline != b.deadline {
		return a.deadline < b.deadline
	}
	return a.seq < b.seq
}

func (t *btreeTimer) add(e *timerEntry) {
	t.seq++
	e.seq, e.inTree = t.seq, true
	t.tree.ReplaceOrInsert(e)
}

func (t *btreeTimer) remove(e *timerEntry) {
	if !e.inTree {
		return
	}
	t.tree.Delete(e)
	e.inTree = false
}

func (t *btreeTimer) expire(now int64, out []*timerEntry) []*timerEntry {
	for {
		e, ok := t.tree.Min()
		if !ok || e.deadline > now {
			return out
		}
		t.tree.DeleteMin()
		e.inTree = false
		out = append(out, e)
	}
}

func (t *btreeTimer) next() (int64, bool) {
	e, ok := t.tree.Min()
	if !ok {
		return 0, false
	}
	return e.deadline, true
}

func (t *btreeTimer) len() int { return t.tree.Len() }
