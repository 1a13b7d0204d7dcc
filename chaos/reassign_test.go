package chaos_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/varve/varve/chaos"
)

// reassignTopic is the topic the reassignment tier moves: two replicas
// of each partition on three nodes, so that every partition has a node
// to move to. A four-node cluster would let a three-replica topic move
// too, at the cost of a fourth server process on a machine the tier
// shares; the reassignment's states (replicas being added and removed,
// the ISR that must hold the target before the old replicas go) are
// the same with two.
var reassignTopic = faultTopic{name: "moving", partitions: 3, rf: 2}

// reassignScenarios kill the partition's leader, and the active
// controller, in the middle of a reassignment.
var reassignScenarios = []chaos.Fault{
	{Kind: chaos.KillMidReassign, Target: chaos.PartitionLeader},
	{Kind: chaos.KillMidReassign, Target: chaos.ActiveController},
}

// Kafka: KIP-455. A reassignment adds the target replicas, waits for
// them to join the ISR, then removes the old ones; the controller
// keeps its progress in the metadata log (adding and removing replicas
// in the PartitionRecord), so a dead leader or a new active controller
// picks it up where it stood. Here, with replication factor 2 and
// min.insync.replicas=2, each fault moves a partition from its leader
// to the node that holds none of it, with that node cut from the
// leader so that AddingReplicas stays non-empty, and kills the leader
// (then, in the other scenario, the active controller) while it is:
// the reassignment must complete once the node is back (the fault
// fails if it has not within a minute), and the checkers must find
// nothing lost, duplicated or out of order.
func TestClusterKillDuringReassignment(t *testing.T) {
	if testing.Short() {
		t.Skip("runs three varve server processes and kills two mid-reassignment")
	}
	skipUnderRace(t)
	t.Parallel() // beside the three-node tier
	if !chaos.EnterNetns(t) {
		return
	}
	seed := *seedFlag
	if seed == 0 {
		seed = rand.Uint64()
	}
	t.Logf("fault schedule seed %d (replay: go test -run %s ./chaos -chaos.seed=%d)", seed, t.Name(), seed)
	o := clusterScheduleOptions
	o.Partitions = int32(reassignTopic.partitions)
	o.First, o.Hold = 2*time.Second, [2]time.Duration{500 * time.Millisecond, 2 * time.Second}
	runClusterSchedule(t, chaos.NewScenarioSchedule(seed, reassignScenarios, o), reassignTopic)
}
