package group

import (
	"errors"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/varve/varve/record"
)

// Kafka: OffsetFetch answers -1 for partitions without a commit, and the
// committed offset (with its metadata and leader epoch) for the others.
func TestCommitAndFetch(t *testing.T) {
	h := newHarness(t, testConfig())
	ids := h.stableGroup("g", 1)
	if got := h.fetch("g", "t", 0); got != -1 {
		t.Fatalf("nothing committed yet, fetched %d", got)
	}
	if code := h.commit("g", ids[0], 1, "t", map[int32]int64{0: 42, 1: 7}); code != 0 {
		t.Fatalf("commit: %d", code)
	}
	if a, b := h.fetch("g", "t", 0), h.fetch("g", "t", 1); a != 42 || b != 7 {
		t.Fatalf("fetched %d %d", a, b)
	}
	code, all := h.c.FetchOffsets(h.now, "g", nil)
	if code != 0 || len(all) != 1 || len(all[0].Partitions) != 2 || all[0].Partitions[0].Partition != 0 {
		t.Fatalf("fetch all: %d %+v", code, all)
	}
}

// Kafka's record formats: an offset commit is an OffsetCommitKey v1 and
// an OffsetCommitValue v3 in an uncompressed v2 batch.
func TestCommitRecordFormat(t *testing.T) {
	h := newHarness(t, testConfig())
	h.commit("g", "", -1, "topic", map[int32]int64{3: 99})
	var recs []record.Record
	for r, err := range record.Records(h.log.Bytes()) {
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, r)
	}
	if len(recs) != 1 {
		t.Fatalf("%d records", len(recs))
	}
	want := []byte{0, 1, 0, 1, 'g', 0, 5, 't', 'o', 'p', 'i', 'c', 0, 0, 0, 3}
	if string(recs[0].Key) != string(want) {
		t.Fatalf("key % x, want % x", recs[0].Key, want)
	}
	var v kmsg.OffsetCommitValue
	if err := v.ReadFrom(recs[0].Value); err != nil || v.Version != 3 || v.Offset != 99 || v.LeaderEpoch != -1 ||
		v.CommitTimestamp != h.now.UnixMilli() {
		t.Fatalf("value %+v (%v)", v, err)
	}
}

// A failed write to __consumer_offsets is not applied: the commit is
// answered NOT_COORDINATOR (Kafka's mapping of a storage error), and a
// leader's SyncGroup answers every member with the error and restarts
// the rebalance.
func TestWriteFailure(t *testing.T) {
	h := newHarness(t, testConfig())
	ids := h.stableGroup("g", 1)
	h.log.Fail = errors.New("disk on fire")
	if code := h.commit("g", ids[0], 1, "t", map[int32]int64{0: 1}); code != kerr.NotCoordinator.Code {
		t.Fatalf("commit with a failing log: %d", code)
	}
	h.log.Fail = kerr.RequestTimedOut
	if code := h.commit("g", ids[0], 1, "t", map[int32]int64{0: 1}); code != kerr.RequestTimedOut.Code {
		t.Fatalf("commit with a timed-out append: %d", code)
	}
	if h.fetch("g", "t", 0) != -1 {
		t.Fatal("a commit that was not written is visible")
	}
	h.log.Fail = nil
	j := h.join(joinSpec{group: "g", member: ids[0]})
	h.log.Fail = kerr.KafkaStorageError
	s := h.sync("g", ids[0], j.resp.Generation, map[string][]byte{ids[0]: []byte("x")})
	if s.resp.ErrorCode != kerr.NotCoordinator.Code || h.state("g") != "PreparingRebalance" {
		t.Fatalf("sync with a failing log: %+v, state %s", s.resp, h.state("g"))
	}
}

// Kafka: DeleteGroups deletes only Empty groups (NON_EMPTY_GROUP
// otherwise, GROUP_ID_NOT_FOUND for unknown ones), with tombstones.
func TestDeleteGroups(t *testing.T) {
	h := newHarness(t, testConfig())
	h.stableGroup("busy", 1)
	h.commit("idle", "", -1, "t", map[int32]int64{0: 3})
	got := h.c.DeleteGroups(h.now, []string{"busy", "idle", "none"})
	want := []int16{kerr.NonEmptyGroup.Code, 0, kerr.GroupIDNotFound.Code}
	for i := range want {
		if got[i].ErrorCode != want[i] {
			t.Fatalf("delete %s: %d, want %d", got[i].Group, got[i].ErrorCode, want[i])
		}
	}
	h.reload()
	if h.fetch("idle", "t", 0) != -1 || h.state("idle") != "Dead" {
		t.Fatal("a deleted group came back after a reload")
	}
}

// Kafka: KIP-496. OffsetDelete removes offsets of topics a consumer
// group does not subscribe to, refuses the others
// (GROUP_SUBSCRIBED_TO_TOPIC), and deletes anything from an Empty group.
func TestOffsetDelete(t *testing.T) {
	h := newHarness(t, testConfig())
	ids := h.stableGroup("g", 1) // subscribes to "t"
	h.commit("g", ids[0], 1, "t", map[int32]int64{0: 1})
	h.commit("g", ids[0], 1, "old", map[int32]int64{0: 2})
	req := offsetDeleteReq("g", "t", "old")
	resp := h.c.DeleteOffsets(h.now, req)
	if resp.ErrorCode != 0 || resp.Topics[0].Partitions[0].ErrorCode != kerr.GroupSubscribedToTopic.Code ||
		resp.Topics[1].Partitions[0].ErrorCode != 0 {
		t.Fatalf("offset delete: %+v", resp)
	}
	if h.fetch("g", "old", 0) != -1 || h.fetch("g", "t", 0) != 1 {
		t.Fatal("wrong offsets deleted")
	}
	if r := h.c.DeleteOffsets(h.now, offsetDeleteReq("none", "t")); r.ErrorCode != kerr.GroupIDNotFound.Code {
		t.Fatalf("offset delete of an unknown group: %d", r.ErrorCode)
	}
}

func offsetDeleteReq(groupID string, topics ...string) *kmsg.OffsetDeleteRequest {
	req := kmsg.NewPtrOffsetDeleteRequest()
	req.Group = groupID
	for _, t := range topics {
		rt := kmsg.NewOffsetDeleteRequestTopic()
		rt.Topic = t
		rt.Partitions = []kmsg.OffsetDeleteRequestTopicPartition{{Partition: 0}}
		req.Topics = append(req.Topics, rt)
	}
	return req
}

// Kafka: ListGroups filters by state (case-insensitive) and, from v5, by
// type; classic groups are "classic".
func TestListGroups(t *testing.T) {
	h := newHarness(t, testConfig())
	h.stableGroup("a", 1)
	h.commit("b", "", -1, "t", map[int32]int64{0: 1})
	_, all := h.c.ListGroups(h.now, nil, nil)
	_, stable := h.c.ListGroups(h.now, []string{"stable"}, nil)
	_, consumer := h.c.ListGroups(h.now, nil, []string{"consumer"})
	if len(all) != 2 || len(stable) != 1 || stable[0].Group != "a" || len(consumer) != 0 {
		t.Fatalf("all %v stable %v consumer-type %v", all, stable, consumer)
	}
	if all[0].ProtocolType != "consumer" || all[1].ProtocolType != "" || all[1].GroupState != "Empty" {
		t.Fatalf("listed %+v", all)
	}
}

// Kafka: Utils.abs(groupId.hashCode) % offsets.topic.num.partitions.
func TestPartitionFor(t *testing.T) {
	cases := []struct {
		group string
		n     int
		want  int32
	}{
		{"", 50, 0},
		{"hello", 50, 99162322 % 50},      // "hello".hashCode() = 99162322
		{"polygenelubricants", 50, 0},     // hashCode() = Integer.MIN_VALUE, abs -> 0
		{"my-group", 50, 1906497762 % 50}, // hashCode() = -1906497762
		{"\U0001F600", 7, 1772899 % 7},    // a surrogate pair: 0xD83D*31 + 0xDE00
	}
	for _, c := range cases {
		if got := PartitionFor(c.group, c.n); got != c.want {
			t.Errorf("PartitionFor(%q, %d) = %d, want %d", c.group, c.n, got, c.want)
		}
	}
}
