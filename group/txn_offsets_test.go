package group

import (
	"encoding/binary"
	"hash/crc32"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/varve/varve/record"
)

// txnCommit sends TxnOffsetCommit for producer pid (epoch 0) and
// returns the first partition's code.
func (h *harness) txnCommit(groupID, member string, gen int32, pid int64, topic string, offsets map[int32]int64) int16 {
	h.t.Helper()
	req := kmsg.NewPtrTxnOffsetCommitRequest()
	req.Version, req.Group, req.MemberID, req.Generation = 3, groupID, member, gen
	req.TransactionalID, req.ProducerID, req.ProducerEpoch = "tx", pid, 0
	rt := kmsg.NewTxnOffsetCommitRequestTopic()
	rt.Topic = topic
	for p, off := range offsets {
		rp := kmsg.NewTxnOffsetCommitRequestTopicPartition()
		rp.Partition, rp.Offset = p, off
		rt.Partitions = append(rt.Partitions, rp)
	}
	req.Topics = append(req.Topics, rt)
	resp := h.c.TxnCommitOffsets(h.now, req)
	return resp.Topics[0].Partitions[0].ErrorCode
}

// fetchStable is OffsetFetch with require_stable: the offset and code.
func (h *harness) fetchStable(groupID, topic string, partition int32) (int64, int16) {
	h.t.Helper()
	t := kmsg.NewOffsetFetchRequestGroupTopic()
	t.Topic, t.Partitions = topic, []int32{partition}
	code, topics := h.c.FetchOffsetsRequireStable(h.now, groupID, []kmsg.OffsetFetchRequestGroupTopic{t}, true)
	if code != 0 {
		h.t.Fatalf("fetch offsets: code %d", code)
	}
	return topics[0].Partitions[0].Offset, topics[0].Partitions[0].ErrorCode
}

// marker appends a COMMIT or ABORT control batch of pid to the log, as
// the partition leader does when the transaction coordinator asks.
func (h *harness) marker(pid int64, commit bool) {
	h.t.Helper()
	typ := uint16(0)
	if commit {
		typ = 1
	}
	b := record.NewBatchBuilder(record.CompressionNone)
	b.SetProducer(pid, 0, record.NoSequence)
	b.SetTransactional(true)
	b.Append(record.Record{Key: binary.BigEndian.AppendUint16([]byte{0, 0}, typ), Value: []byte{0, 0, 0, 0, 0, 3}})
	batch, err := b.Build()
	if err != nil {
		h.t.Fatal(err)
	}
	attrs := binary.BigEndian.Uint16(batch[record.AttributesPos:]) | record.AttrControl
	binary.BigEndian.PutUint16(batch[record.AttributesPos:], attrs)
	binary.BigEndian.PutUint32(batch[record.CRCPos:], crc32.Checksum(batch[record.AttributesPos:], crc32.MakeTable(crc32.Castagnoli)))
	if err := h.log.Append(batch); err != nil {
		h.t.Fatal(err)
	}
}

// Kafka: KIP-98 TxnOffsetCommit. Offsets committed in a transaction are
// invisible until its COMMIT marker, dropped by an ABORT, and answered
// UNSTABLE_OFFSET_COMMIT meanwhile to a fetch with require_stable
// (KIP-447).
func TestTxnOffsetsPendingUntilMarker(t *testing.T) {
	h := newHarness(t, testConfig())
	ids := h.stableGroup("g", 1)
	h.commit("g", ids[0], 1, "t", map[int32]int64{0: 5})
	if code := h.txnCommit("g", ids[0], 1, 77, "t", map[int32]int64{0: 10}); code != 0 {
		t.Fatalf("TxnOffsetCommit: %s", kerr.ErrorForCode(code))
	}
	if got := h.fetch("g", "t", 0); got != 5 {
		t.Fatalf("pending offset visible: fetched %d, want 5", got)
	}
	if off, code := h.fetchStable("g", "t", 0); code != kerr.UnstableOffsetCommit.Code || off != -1 {
		t.Fatalf("require_stable while pending: offset %d code %d", off, code)
	}
	h.c.CompleteTxn(h.now, 77, true)
	if off, code := h.fetchStable("g", "t", 0); code != 0 || off != 10 {
		t.Fatalf("after COMMIT: offset %d code %d, want 10", off, code)
	}
	h.txnCommit("g", ids[0], 1, 77, "t", map[int32]int64{0: 20})
	h.c.CompleteTxn(h.now, 77, false)
	if off, code := h.fetchStable("g", "t", 0); code != 0 || off != 10 {
		t.Fatalf("after ABORT: offset %d code %d, want 10", off, code)
	}
}

// Kafka: the offsets are written in a transactional batch of the
// producer, with sequences that continue across its transactions so the
// partition's producer checks accept them; a new epoch starts again at 0.
func TestTxnOffsetsBatchCarriesProducer(t *testing.T) {
	h := newHarness(t, testConfig())
	h.txnCommit("s", "", -1, 9, "t", map[int32]int64{0: 1})
	h.txnCommit("s", "", -1, 9, "t", map[int32]int64{0: 2})
	buf := h.log.Bytes()
	var seqs []int32
	for pos := 0; pos < len(buf); {
		hd, n, err := record.NextBatch(buf[pos:], len(buf)-pos)
		if err != nil {
			t.Fatal(err)
		}
		if !hd.IsTransactional() || hd.ProducerID != 9 || hd.ProducerEpoch != 0 {
			t.Fatalf("batch %+v is not producer 9's transactional batch", hd)
		}
		seqs = append(seqs, hd.BaseSequence)
		pos += n
	}
	if len(seqs) != 2 || seqs[0] != 0 || seqs[1] != 1 {
		t.Fatalf("base sequences %v, want [0 1]", seqs)
	}
}

// Kafka: loadGroupsAndOffsets replays transactional offsets with the
// markers that follow them: committed ones become the group's, aborted
// ones vanish, and those of a transaction still open stay pending.
func TestTxnOffsetsReloaded(t *testing.T) {
	h := newHarness(t, testConfig())
	h.txnCommit("a", "", -1, 1, "t", map[int32]int64{0: 11})
	h.txnCommit("b", "", -1, 2, "t", map[int32]int64{0: 22})
	h.txnCommit("c", "", -1, 3, "t", map[int32]int64{0: 33})
	h.marker(1, true)
	h.marker(2, false)
	h.reload()
	if got := h.fetch("a", "t", 0); got != 11 {
		t.Errorf("committed transaction: fetched %d, want 11", got)
	}
	if got := h.fetch("b", "t", 0); got != -1 {
		t.Errorf("aborted transaction: fetched %d, want -1", got)
	}
	if _, code := h.fetchStable("c", "t", 0); code != kerr.UnstableOffsetCommit.Code {
		t.Errorf("open transaction after reload: code %d, want UNSTABLE_OFFSET_COMMIT", code)
	}
	h.c.CompleteTxn(h.now, 3, true)
	if got := h.fetch("c", "t", 0); got != 33 {
		t.Errorf("open transaction committed after reload: fetched %d, want 33", got)
	}
	// The sequence of producer 3 continues after the reload.
	h.txnCommit("c", "", -1, 3, "t", map[int32]int64{0: 34})
	buf := h.log.Bytes()
	var last record.BatchHeader
	for pos := 0; pos < len(buf); {
		hd, n, _ := record.NextBatch(buf[pos:], len(buf)-pos)
		last, pos = hd, pos+n
	}
	if last.ProducerID != 3 || last.BaseSequence != 1 {
		t.Errorf("after reload producer %d wrote sequence %d, want producer 3 sequence 1", last.ProducerID, last.BaseSequence)
	}
}

// Kafka: KIP-447. A committer naming a member and generation must be
// that member of the current generation; a failed write keeps nothing
// pending.
func TestTxnOffsetsValidated(t *testing.T) {
	h := newHarness(t, testConfig())
	ids := h.stableGroup("g", 1)
	if code := h.txnCommit("g", ids[0], 7, 5, "t", map[int32]int64{0: 1}); code != kerr.IllegalGeneration.Code {
		t.Errorf("wrong generation: %s", kerr.ErrorForCode(code))
	}
	if code := h.txnCommit("g", "nobody", 1, 5, "t", map[int32]int64{0: 1}); code != kerr.UnknownMemberID.Code {
		t.Errorf("unknown member: %s", kerr.ErrorForCode(code))
	}
	h.log.Fail = kerr.NotLeaderForPartition
	if code := h.txnCommit("g", ids[0], 1, 5, "t", map[int32]int64{0: 1}); code != kerr.NotCoordinator.Code {
		t.Errorf("failed write: %s", kerr.ErrorForCode(code))
	}
	h.log.Fail = nil
	if _, code := h.fetchStable("g", "t", 0); code != 0 {
		t.Errorf("a failed write left offsets pending: code %d", code)
	}
}
