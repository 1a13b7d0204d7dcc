package group

import (
	"errors"
	"testing"
	"time"

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

// Kafka: validateOffsetCommit. A client that assigns partitions itself
// commits with generation -1 and no member id: accepted for a group
// without members, refused (UNKNOWN_MEMBER_ID) once the group has
// members; a positive generation for a group that does not exist is a
// stale member (ILLEGAL_GENERATION); a commit during
// CompletingRebalance gets REBALANCE_IN_PROGRESS.
func TestSimpleAndNonMemberCommits(t *testing.T) {
	h := newHarness(t, testConfig())
	if code := h.commit("simple", "", -1, "t", map[int32]int64{0: 5}); code != 0 {
		t.Fatalf("simple commit: %d", code)
	}
	if h.fetch("simple", "t", 0) != 5 || h.state("simple") != "Empty" {
		t.Fatalf("after a simple commit: offset %d state %s", h.fetch("simple", "t", 0), h.state("simple"))
	}
	if code := h.commit("nogroup", "m", 3, "t", map[int32]int64{0: 5}); code != kerr.IllegalGeneration.Code {
		t.Fatalf("commit with a generation to a missing group: %d", code)
	}
	ids := h.stableGroup("g", 1)
	if code := h.commit("g", "", -1, "t", map[int32]int64{0: 5}); code != kerr.UnknownMemberID.Code {
		t.Fatalf("non-member commit to a group with members: %d", code)
	}
	h.join(joinSpec{group: "g", member: ids[0]}) // single member: straight to CompletingRebalance
	if code := h.commit("g", ids[0], 2, "t", map[int32]int64{0: 5}); code != kerr.RebalanceInProgress.Code {
		t.Fatalf("commit in CompletingRebalance: %d", code)
	}
}

// Kafka: offset.metadata.max.bytes and unknown partitions are refused per
// partition; the rest of the request is committed.
func TestCommitPartitionErrors(t *testing.T) {
	cfg := testConfig()
	cfg.OffsetMetadataMaxBytes = 4
	cfg.KnownPartition = func(topic string, p int32) bool { return topic == "t" }
	h := newHarness(t, cfg)
	req := kmsg.NewPtrOffsetCommitRequest()
	req.Version, req.Group, req.Generation = 8, "g", -1
	long, short := "toolong", "ok"
	for _, spec := range []struct {
		topic string
		md    *string
	}{{"t", &long}, {"t", &short}, {"missing", nil}} {
		rt := kmsg.NewOffsetCommitRequestTopic()
		rt.Topic = spec.topic
		rp := kmsg.NewOffsetCommitRequestTopicPartition()
		rp.Partition, rp.Offset, rp.Metadata = int32(len(req.Topics)), 10, spec.md
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
	}
	resp := h.c.CommitOffsets(h.now, req)
	got := []int16{resp.Topics[0].Partitions[0].ErrorCode, resp.Topics[1].Partitions[0].ErrorCode, resp.Topics[2].Partitions[0].ErrorCode}
	want := []int16{kerr.OffsetMetadataTooLarge.Code, 0, kerr.UnknownTopicOrPartition.Code}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("partition errors %v, want %v", got, want)
		}
	}
	if h.fetch("g", "t", 1) != 10 || h.fetch("g", "t", 0) != -1 {
		t.Fatal("the valid partition was not committed, or the invalid one was")
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

// Kafka: loadGroupsAndOffsets. A new coordinator replaying the log has
// the same offsets, and a Stable group comes back in its generation with
// its members, whose sessions restart; one that never heartbeats again
// is removed after its session timeout.
func TestReloadRebuildsGroupsAndOffsets(t *testing.T) {
	h := newHarness(t, testConfig())
	ids := h.stableGroup("g", 2)
	h.commit("g", ids[0], 1, "t", map[int32]int64{0: 11, 1: 22})
	h.commit("g", ids[1], 1, "t", map[int32]int64{1: 23}) // the later commit wins
	h.commit("simple", "", -1, "u", map[int32]int64{0: 5})
	rep := h.reload()
	if rep.Groups != 2 || rep.Offsets != 3 || rep.Skipped != 0 {
		t.Fatalf("load report %+v", rep)
	}
	if h.fetch("g", "t", 0) != 11 || h.fetch("g", "t", 1) != 23 || h.fetch("simple", "u", 0) != 5 {
		t.Fatal("offsets differ after reload")
	}
	if h.state("g") != "Stable" || h.state("simple") != "Empty" {
		t.Fatalf("states after reload: %s %s", h.state("g"), h.state("simple"))
	}
	d := h.c.DescribeGroup(h.now, "g", false)
	if len(d.Members) != 2 || string(d.Members[0].MemberAssignment) != "assigned-"+d.Members[0].MemberID {
		t.Fatalf("described after reload: %+v", d)
	}
	if code := h.heartbeat("g", ids[0], 1); code != 0 {
		t.Fatalf("heartbeat in the stored generation after reload: %d", code)
	}
	for i := 0; i < 4; i++ {
		h.advance(300 * time.Millisecond)
		h.heartbeat("g", ids[0], 1)
	}
	if code := h.heartbeat("g", ids[0], 1); code != kerr.RebalanceInProgress.Code {
		t.Fatalf("the member silent since the reload was not removed: %d", code)
	}
}

// Kafka: KIP-211. Offsets of a consumer group expire
// offsets.retention.minutes after the group became Empty (not after the
// commit), at the retention check; the group then goes with a
// tombstone, and a reload does not bring it back.
func TestOffsetsExpireAfterGroupEmpty(t *testing.T) {
	cfg := testConfig()
	cfg.OffsetsRetention = time.Hour
	cfg.RetentionCheckInterval = time.Minute
	h := newHarness(t, cfg)
	j := h.join(joinSpec{group: "g", version: 3, session: 60_000})
	h.advance(0)
	ids := []string{j.resp.MemberID}
	h.sync("g", ids[0], 1, map[string][]byte{ids[0]: []byte("a")})
	h.commit("g", ids[0], 1, "t", map[int32]int64{0: 1})
	// Commit-time retention would expire it after an hour; it must not,
	// because the group still has a member subscribed to the topic.
	for i := 0; i < 90; i++ { // 90 minutes, past commit-time retention
		h.heartbeat("g", ids[0], 1)
		h.advance(time.Minute / 2)
		h.heartbeat("g", ids[0], 1)
		h.advance(time.Minute / 2)
	}
	if h.fetch("g", "t", 0) != 1 {
		t.Fatal("offsets of a group with members expired")
	}
	h.leave("g", ids[0]) // Empty from now
	if h.state("g") != "Empty" {
		t.Fatalf("state %s after the last member left", h.state("g"))
	}
	h.advance(59 * time.Minute)
	if h.fetch("g", "t", 0) != 1 {
		t.Fatal("offsets expired before retention passed since the group became Empty")
	}
	h.advance(2 * time.Minute)
	if h.fetch("g", "t", 0) != -1 || h.state("g") != "Dead" {
		t.Fatalf("after retention: offset %d state %s", h.fetch("g", "t", 0), h.state("g"))
	}
	h.reload()
	if h.fetch("g", "t", 0) != -1 || h.state("g") != "Dead" {
		t.Fatal("expired offsets came back after a reload")
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
