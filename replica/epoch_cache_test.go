package replica

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Kafka: LeaderEpochFileCache.assign, endOffsetFor, truncateFromEnd,
// truncateFromStart.
func TestEpochCacheAssignKeepsEntriesIncreasing(t *testing.T) {
	c := &EpochCache{}
	c.Assign(1, 0)
	c.Assign(1, 5) // same epoch, later offset: nothing changes
	c.Assign(3, 10)
	c.Assign(2, 7) // an older epoch starting earlier replaces the later ones
	want := []EpochEntry{{1, 0}, {2, 7}}
	if diff := cmp.Diff(want, c.Entries()); diff != "" {
		t.Fatalf("entries (-want +got):\n%s", diff)
	}
}

func TestEpochCacheEndOffsetFor(t *testing.T) {
	c := &EpochCache{}
	c.Assign(2, 10)
	c.Assign(4, 20)
	c.Assign(7, 30)
	for _, tc := range []struct {
		requested int32
		epoch     int32
		end       int64
	}{
		{7, 7, 42},                           // the latest epoch ends at the log end
		{4, 4, 30},                           // a cached epoch ends where the next starts
		{5, 4, 30},                           // an epoch this log never had: the largest below it
		{1, 1, 10},                           // below the first entry: the data was removed; replicate from its start
		{8, UndefinedEpoch, UndefinedOffset}, // above every entry
		{UndefinedEpoch, UndefinedEpoch, UndefinedOffset},
	} {
		e, o := c.EndOffsetFor(tc.requested, 42)
		if e != tc.epoch || o != tc.end {
			t.Errorf("EndOffsetFor(%d) = (%d, %d), want (%d, %d)", tc.requested, e, o, tc.epoch, tc.end)
		}
	}
}

func TestEpochCacheTruncation(t *testing.T) {
	c := &EpochCache{}
	c.Assign(2, 10)
	c.Assign(4, 20)
	c.Assign(7, 30)
	c.TruncateFromEnd(30) // an entry starting at the cut goes
	c.TruncateFromStart(25)
	if diff := cmp.Diff([]EpochEntry{{4, 25}}, c.Entries()); diff != "" {
		t.Fatalf("entries (-want +got):\n%s", diff)
	}
}

// The leader-epoch-checkpoint format of Kafka's CheckpointFile: version 0,
// a count, "epoch offset" lines.
func TestEpochCheckpointFormat(t *testing.T) {
	const file = "0\n3\n0 0\n2 1042\n5 77109\n"
	c, err := UnmarshalEpochCheckpoint([]byte(file))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]EpochEntry{{0, 0}, {2, 1042}, {5, 77109}}, c.Entries()); diff != "" {
		t.Fatalf("entries (-want +got):\n%s", diff)
	}
	if got := string(c.MarshalCheckpoint()); got != file {
		t.Fatalf("round trip: %q, want %q", got, file)
	}
	for _, bad := range []string{"", "1\n0\n", "0\n2\n1 0\n", "0\n1\n1\n", "0\n2\n3 10\n2 20\n", "0\n1\n-1 0\n", "0\nx\n"} {
		if _, err := UnmarshalEpochCheckpoint([]byte(bad)); err == nil {
			t.Errorf("%q was accepted", bad)
		}
	}
}
