package replica

// The purgatory's timer: deadlines of delayed operations, in
// milliseconds since the purgatory started (Kafka's SystemTimer ticks in
// milliseconds too). Two implementations share this contract, a
// hierarchical timing wheel (timing_wheel.go, Kafka's TimingWheel) and
// deadlines ordered in a B-tree (timer_btree.go); the package doc says
// which one the purgatory uses and why.
//
// A timer is not safe for concurrent use: the purgatory guards it with
// its own mutex.

// timerEntry is one operation's place in a timer. It is embedded in the
// operation, so that adding it to a timer allocates nothing.
type timerEntry struct {
	deadline int64 // ms since the purgatory's start
	op       *delayed

	// timing wheel: the bucket holding the entry and its neighbours in
	// the bucket's list (nil when in no bucket).
	bucket     *wheelBucket
	prev, next *timerEntry

	// B-tree: insertion sequence (ties between equal deadlines) and
	// whether the entry is in the tree.
	seq    uint64
	inTree bool
}

// timer orders deadlines.
type timer interface {
	// add inserts e, whose deadline is set. An entry already due is
	// added too; the next expire returns it.
	add(e *timerEntry)
	// remove takes e out if it is in the timer; removing an entry
	// twice, or one already expired, does nothing.
	remove(e *timerEntry)
	// expire removes every entry due at now (deadline <= now) and
	// appends it to out.
	expire(now int64, out []*timerEntry) []*timerEntry
	// next is the time at which expire should be called next, when
	// the timer holds anything. It may be earlier than the earliest
	// deadline (a wheel's coarse bucket), never later.
	next() (int64, bool)
	// len is the number of entries held.
	len() int
}
