package txn

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// State is a transactional id's state: Kafka's TransactionState, with
// the numbers its __transaction_state records store.
type State int8

const (
	Empty             State = 0 // a producer id and epoch, no transaction open
	Ongoing           State = 1 // partitions added, neither committed nor aborted
	PrepareCommit     State = 2 // EndTxn(commit) written; markers being written
	PrepareAbort      State = 3 // EndTxn(abort) or expiry written; markers being written
	CompleteCommit    State = 4 // every commit marker written
	CompleteAbort     State = 5 // every abort marker written
	Dead              State = 6 // expired; its tombstone written
	PrepareEpochFence State = 7 // the epoch bumped to fence the producer before aborting (never stored)
)

var stateNames = [...]string{"Empty", "Ongoing", "PrepareCommit", "PrepareAbort",
	"CompleteCommit", "CompleteAbort", "Dead", "PrepareEpochFence"}

// String is Kafka's name for the state (TransactionState.name), as
// DescribeTransactions and ListTransactions show it.
func (s State) String() string {
	if s < 0 || int(s) >= len(stateNames) {
		return fmt.Sprintf("State(%d)", int8(s))
	}
	return stateNames[s]
}

// ParseState is the state Kafka names name.
func ParseState(name string) (State, bool) {
	for i, n := range stateNames {
		if n == name {
			return State(i), true
		}
	}
	return 0, false
}

// previous lists, for each state, the states it may be entered from
// (Kafka's TransactionState.validPreviousStates).
var previous = map[State][]State{
	Empty:             {Empty, CompleteCommit, CompleteAbort},
	Ongoing:           {Ongoing, Empty, CompleteCommit, CompleteAbort},
	PrepareCommit:     {Ongoing},
	PrepareAbort:      {Ongoing, PrepareEpochFence, Empty, CompleteCommit, CompleteAbort}, // the last three: version 2's empty abort
	CompleteCommit:    {PrepareCommit},
	CompleteAbort:     {PrepareAbort},
	Dead:              {Empty, CompleteCommit, CompleteAbort},
	PrepareEpochFence: {Ongoing},
}

// canTransition reports whether Kafka allows from -> to.
func canTransition(from, to State) bool {
	for _, p := range previous[to] {
		if p == from {
			return true
		}
	}
	return false
}

// preparing reports whether markers of s's outcome are being written.
func (s State) preparing() bool { return s == PrepareCommit || s == PrepareAbort }

// complete reports whether s ends a transaction.
func (s State) complete() bool { return s == CompleteCommit || s == CompleteAbort }

// kmsgState converts for the record encoder.
func (s State) kmsgState() kmsg.TransactionState { return kmsg.TransactionState(s) }
