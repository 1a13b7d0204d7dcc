package replica

import "sync"

// WatchList is a key of a Purgatory: the operations waiting for an
// event on one thing (Kafka's Watchers, one per partition). A Partition
// has one; an event on it calls CheckAndComplete. The zero value is an
// empty list. A WatchList serves one purgatory.
type WatchList struct {
	mu struct {
		sync.Mutex
		ops        []*delayed // completed ones stay until tried or purged
		registered bool       // in its purgatory's lists
	}
}

// add watches d on w.
func (w *WatchList) add(d *delayed, pg *Purgatory) {
	w.mu.Lock()
	w.mu.ops = append(w.mu.ops, d)
	register := !w.mu.registered
	w.mu.registered = true
	w.mu.Unlock()
	if register {
		pg.lists.Lock()
		pg.lists.m[w] = struct{}{}
		pg.lists.Unlock()
	}
}

// CheckAndComplete tries every operation watching w, after an event
// that may satisfy them, and returns how many it completed (Kafka's
// checkAndComplete). The operations are tried without w's lock held, on
// the caller's goroutine, which runs the completions too.
func (w *WatchList) CheckAndComplete() int {
	w.mu.Lock()
	if len(w.mu.ops) == 0 {
		w.mu.Unlock()
		return 0
	}
	ops := make([]*delayed, len(w.mu.ops))
	copy(ops, w.mu.ops)
	w.mu.Unlock()
	n := 0
	for _, d := range ops {
		if d.maybeTryComplete() {
			n++
		}
	}
	w.purge()
	return n
}

// purge drops completed operations and returns how many remain; an
// empty list leaves its purgatory's lists (it rejoins on the next add).
func (w *WatchList) purge() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	ops := w.mu.ops[:0]
	for _, d := range w.mu.ops {
		if !d.done.Load() {
			ops = append(ops, d)
		}
	}
	clear(w.mu.ops[len(ops):])
	if cap(ops) > 2*len(ops)+16 { // give back a burst's array
		ops = append([]*delayed(nil), ops...)
	}
	w.mu.ops = ops
	if len(ops) == 0 {
		w.mu.registered = false
	}
	return len(ops)
}

// Len is the number of entries in the list, completed operations not
// yet purged included.
func (w *WatchList) Len() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.mu.ops)
}
