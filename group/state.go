package group

// State is a classic group's state (Kafka's GroupState).
type State int8

// The classic group states, with Kafka's names.
const (
	// Empty: no members, but the group may hold committed offsets. A
	// group using Kafka only for offset storage stays Empty.
	Empty State = iota
	// PreparingRebalance: members are rejoining; JoinGroup responses are
	// held until all known members rejoined or the rebalance timeout.
	PreparingRebalance
	// CompletingRebalance: JoinGroup answered; waiting for the leader's
	// assignment in SyncGroup (Kafka's AwaitingSync).
	CompletingRebalance
	// Stable: the assignment is distributed; members heartbeat.
	Stable
	// Dead: the group was deleted or unloaded and is about to vanish.
	Dead
)

var stateNames = [...]string{"Empty", "PreparingRebalance", "CompletingRebalance", "Stable", "Dead"}

// String is Kafka's name of the state, as DescribeGroups and ListGroups
// answer it.
func (s State) String() string {
	if int(s) < len(stateNames) {
		return stateNames[s]
	}
	return "Unknown"
}

// validPrevious lists, for each state, the states it may be entered
// from (Kafka's GroupState.validPreviousStates).
var validPrevious = map[State][]State{
	Empty:               {PreparingRebalance},
	PreparingRebalance:  {Stable, CompletingRebalance, Empty},
	CompletingRebalance: {PreparingRebalance},
	Stable:              {CompletingRebalance},
	Dead:                {Stable, PreparingRebalance, CompletingRebalance, Empty, Dead},
}

// canEnter reports whether a group in from may transition to to.
func canEnter(from, to State) bool {
	for _, s := range validPrevious[to] {
		if s == from {
			return true
		}
	}
	return false
}
