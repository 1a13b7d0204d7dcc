package cluster_test

import (
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/varve/varve/logdir"
	"github.com/varve/varve/segment"
)

// Kafka: ReplicaManager.alterReplicaLogDirs calls abortAndPauseCleaning
// for a partition it makes a future replica of, and
// replaceCurrentWithFutureLog resumes it: a compacted partition is not
// offered to the log cleaner while it moves between log dirs, and is
// again once moved.
func TestAlterReplicaLogDirsPausesCleaning(t *testing.T) {
	b, d1, d2 := twoDirBroker(t)
	createTopic(t, b.addr, "cmp", 1, map[string]*string{"cleanup.policy": ptr("compact")})
	produceSync(t, client(t, b.addr, kgo.DefaultProduceTopic("cmp")), &kgo.Record{Key: []byte("k"), Value: []byte("v")})
	dst := d2
	if describeReplicas(t, b.addr, "cmp", 0)[0].dir == d2 {
		dst = d1
	}
	if !slices.Contains(b.CompactionTargets(), "cmp-0") {
		t.Fatalf("cleaner targets %v, want cmp-0", b.CompactionTargets())
	}
	held, release := make(chan struct{}), make(chan struct{})
	b.LogDirs().SetMoveHook(func(_ segment.TopicPartition, s logdir.MoveStep) bool {
		if s == logdir.StepFutureCreated {
			close(held)
			<-release
		}
		return true
	})
	if code := alterLogDirs(t, b.addr, dst, "cmp", 0); code != 0 {
		t.Fatalf("alter: code %d", code)
	}
	<-held
	during := b.CompactionTargets()
	close(release)
	if slices.Contains(during, "cmp-0") {
		t.Fatalf("cleaner targets during the move %v: cmp-0 offered", during)
	}
	waitFor(t, 30*time.Second, "cmp-0 offered to the cleaner again once moved", func() bool {
		return slices.Contains(b.CompactionTargets(), "cmp-0")
	})
	if r := describeReplicas(t, b.addr, "cmp", 0); len(r) != 1 || r[0].dir != dst {
		t.Fatalf("after the move: %+v", r)
	}
}
