package chaos

import (
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// Outcome is how an operation completed.
type Outcome uint8

const (
	// Pending: invoked, not yet completed (a history still being written).
	Pending Outcome = iota
	// OK: the broker acknowledged it (an append has its offset).
	OK
	// Failed: the broker answered with a Kafka error; it did not happen.
	Failed
	// Unknown: no answer in time (a timeout or a broken connection); it
	// may or may not have happened.
	Unknown
)

func (o Outcome) String() string {
	return [...]string{"pending", "ok", "failed", "unknown"}[o]
}

// Append is one produce of one unique value to one partition.
type Append struct {
	ID        int
	Client    string
	Partition int32
	Value     string
	Invoke    time.Duration // on the history's monotonic clock
	Complete  time.Duration // zero while pending
	Outcome   Outcome
	Offset    int64  // OK only
	Err       string // Failed or Unknown: what the client said
}

func (a Append) String() string {
	s := fmt.Sprintf("append#%d %s p%d %q [%v,%v] %s", a.ID, a.Client, a.Partition, a.Value,
		a.Invoke.Round(time.Microsecond), a.Complete.Round(time.Microsecond), a.Outcome)
	if a.Outcome == OK {
		s += fmt.Sprintf(" offset=%d", a.Offset)
	}
	if a.Err != "" {
		s += " err=" + a.Err
	}
	return s
}

// Rec is a record as a reader saw it.
type Rec struct {
	Partition int32
	Offset    int64
	Value     string
}

func (r Rec) String() string { return fmt.Sprintf("p%d@%d=%q", r.Partition, r.Offset, r.Value) }

// Poll is one poll of one consumer: the records it returned, in order.
// A poll with Assigned set is not a read: it records that the consumer
// (re)started the listed partitions, at their log start if FromStart is
// set, else at a position of the broker's choosing (a group's committed
// offset), so the checkers forget what it read of them before.
type Poll struct {
	ID        int
	Consumer  string
	Invoke    time.Duration
	Complete  time.Duration
	Records   []Rec
	Assigned  []int32
	FromStart bool
	Err       string
}

func (p Poll) String() string {
	if p.Assigned != nil {
		return fmt.Sprintf("poll#%d %s at %v: assigned %v", p.ID, p.Consumer, p.Complete.Round(time.Microsecond), p.Assigned)
	}
	return fmt.Sprintf("poll#%d %s [%v,%v] %d records", p.ID, p.Consumer,
		p.Invoke.Round(time.Microsecond), p.Complete.Round(time.Microsecond), len(p.Records))
}

// Event is a fault or another note on the history's clock.
type Event struct {
	At   time.Duration
	What string
}

// History is everything a run did, on one monotonic clock. Record
// methods are safe for concurrent use; the checkers read a History once
// the run is over and nothing records any more.
type History struct {
	start time.Time // carries Go's monotonic reading

	mu struct {
		sync.Mutex
		appends []Append
		polls   []Poll
		events  []Event
	}
	// Final is a full read of every partition from its start, taken
	// after the run; nil until the harness (or a test) sets it.
	Final map[int32][]Rec
}

// NewHistory starts the clock.
func NewHistory() *History { return &History{start: time.Now()} }

// Now is the time since the history started, from the monotonic clock.
func (h *History) Now() time.Duration { return time.Since(h.start) }

// Invoke records the start of an append and returns its id.
func (h *History) Invoke(client string, partition int32, value string) int {
	at := h.Now()
	h.mu.Lock()
	defer h.mu.Unlock()
	id := len(h.mu.appends)
	h.mu.appends = append(h.mu.appends, Append{ID: id, Client: client, Partition: partition, Value: value, Invoke: at})
	return id
}

// Complete records how append id ended: err nil with its offset, or the
// client's error, classified by Classify.
func (h *History) Complete(id int, offset int64, err error) {
	at := h.Now()
	h.mu.Lock()
	defer h.mu.Unlock()
	a := &h.mu.appends[id]
	a.Complete, a.Outcome = at, Classify(err)
	if err == nil {
		a.Offset = offset
	} else {
		a.Err = err.Error()
	}
}

// AddPoll records one poll (its ID is assigned here).
func (h *History) AddPoll(p Poll) {
	h.mu.Lock()
	defer h.mu.Unlock()
	p.ID = len(h.mu.polls)
	h.mu.polls = append(h.mu.polls, p)
}

// Note records an event (a fault, a restart) at the current time.
func (h *History) Note(format string, args ...any) {
	at := h.Now()
	h.mu.Lock()
	defer h.mu.Unlock()
	h.mu.events = append(h.mu.events, Event{At: at, What: fmt.Sprintf(format, args...)})
}

// Appends returns a copy of the appends, by id.
func (h *History) Appends() []Append {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]Append(nil), h.mu.appends...)
}

// Polls returns a copy of the polls, by id (the order they completed).
func (h *History) Polls() []Poll {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]Poll(nil), h.mu.polls...)
}

// Events returns a copy of the events, in time order.
func (h *History) Events() []Event {
	h.mu.Lock()
	defer h.mu.Unlock()
	ev := append([]Event(nil), h.mu.events...)
	sort.SliceStable(ev, func(i, j int) bool { return ev[i].At < ev[j].At })
	return ev
}

// Classify maps a produce error to an outcome. A Kafka error code from
// the broker that is not retriable means the write was refused; every
// other error (a timeout, a canceled context, a connection that broke
// after the request was sent, a retriable code the client gave up on)
// leaves the write indeterminate.
func Classify(err error) Outcome {
	if err == nil {
		return OK
	}
	var ke *kerr.Error
	if errors.As(err, &ke) && !ke.Retriable {
		return Failed
	}
	return Unknown
}
