// Package raftlog stores etcd raft's log (go.etcd.io/raft/v3) the way
// KRaft stores its metadata log, __cluster_metadata-0: raft entries are
// Kafka record batches in a segment.Log, the hard state is KRaft's
// quorum-state JSON, and snapshots are <offset>-<epoch>.checkpoint files.
// Storage implements raft.Storage and the writes a node's Ready loop
// makes (Append, SetHardState, ApplySnapshot, CreateSnapshot, Compact).
// It is the durable layer only: it knows nothing of brokers or of the
// controller's state machine.
//
// # Offsets
//
// A raft entry's Kafka offset is its raft index (offset base 0:
// offset = index). Raft's indexes start at 1, so offset 0 is never
// written: a new log's first batch is at offset 1. The log start offset
// is raft's compaction point, the index whose term raft must still
// know (MemoryStorage's dummy entry): FirstIndex = log start offset + 1.
// After Compact(i) the entry at i stays readable in the log for its term,
// as KRaft keeps the records at and after its log start offset. After
// ApplySnapshot(i) the log restarts, empty, at offset i, and the term of
// i comes from the snapshot's checkpoint; the next entry is at offset
// i+1. Choosing
// offset = index (rather than index - 1) is what makes every compaction
// point a valid Kafka log start offset whose entry is still in the log.
//
// # On-disk layout
//
// A Storage owns one directory (KRaft names it __cluster_metadata-0):
//
//	00000000000000000000.log        segment files of package segment: Kafka
//	00000000000000000000.index      RecordBatch v2, offset and time indexes,
//	00000000000000000000.timeindex  and the log's own checkpoint files
//	recovery-point-offset-checkpoint
//	log-start-offset-checkpoint     (the compaction point)
//	quorum-state                    the hard state
//	<end:%020d>-<term:%010d>.checkpoint   the newest snapshot (and the
//	                                      one at the log start offset)
//
// Entries. Each entry is one RecordBatch v2 (record/batch.go has the
// byte layout) holding one record, so that raft's truncation of a
// conflicting suffix falls on batch boundaries, which is where a Kafka
// log truncates:
//
//	batch  BaseOffset (0-7)            the entry's index
//	       PartitionLeaderEpoch (12-15) the entry's term (at most 2^31-1)
//	       Attributes (21-22)          0: uncompressed, CreateTime, not
//	                                   transactional, not control
//	       LastOffsetDelta (23-26)     0
//	       Base/MaxTimestamp           the wall clock at Append, ms
//	       ProducerId/Epoch/Sequence   -1/-1/-1
//	       RecordsCount (57-60)        1
//	record Key                         null
//	       Value                       the entry's Data; when Data is
//	                                   empty, Kafka's NoOpRecord (01 14
//	                                   00 00), so that Kafka's metadata
//	                                   decoder reads every value, with
//	                                   the header "raft.entry.empty"
//	       Headers                     one: "raft.entry.type" = the
//	                                   raftpb.EntryType as ASCII decimal
//	                                   ("0" normal, "1" conf change, "2"
//	                                   conf change v2); none when the
//	                                   entry's Type field is unset (a
//	                                   normal entry), so that the entry
//	                                   reads back with the protobuf size
//	                                   raft counted; then, for a normal
//	                                   entry whose Data EncodeData wrote,
//	                                   its headers, the value being the
//	                                   rest of Data (headers.go), or
//	                                   "raft.entry.raw" for Data that
//	                                   only begins like EncodeData's
//
// KRaft also stamps each batch's PartitionLeaderEpoch with the epoch
// (raft term) of the leader that wrote it, and keeps its voter changes
// in the log too, so `varve log dump` and Kafka's kafka-dump-log read
// these files and show index and term as offset and leader epoch.
//
// quorum-state is KRaft's QuorumStateData JSON (data_version 0), written
// through segment.WriteFileAtomic (temp file, fsync, rename, fsync
// directory):
//
//	{"clusterId":"","leaderId":-1,"leaderEpoch":<term>,"votedId":<vote or -1>,
//	 "appliedOffset":0,"currentVoters":null,"data_version":0,"commitIndex":<commit>}
//
// leaderEpoch is the hard state's term and votedId its vote (raft's 0,
// no vote, is KRaft's -1). commitIndex is ours: KRaft recomputes its high
// watermark after a restart, raft's HardState persists it. KRaft's
// reader ignores fields it does not know.
//
// A snapshot at index i and term t is the file
// %020d-%010d.checkpoint of (i+1, t): KRaft names a snapshot by its end
// offset (exclusive) and epoch. It is written through WriteFileAtomic and
// holds one uncompressed RecordBatch v2, BaseOffset i,
// PartitionLeaderEpoch t, of two records: key "raft.confstate" with the
// protobuf raftpb.ConfState, then key "raft.data" with the state
// machine's snapshot data. (KRaft brackets its snapshot records with
// SnapshotHeader/SnapshotFooter control records; raft has no use for
// them.) The newest checkpoint is the snapshot. The one whose index is
// the log start offset is kept too while the log starts there: after an
// ApplySnapshot the log does not hold that index, and the checkpoint's
// name is where its term (raft's dummy entry's) survives a restart.
// Other checkpoints are removed once a newer one is durable, as KRaft
// deletes snapshots below its log start offset, and ignored if a crash
// left them.
//
// # Durability
//
// Every write returns once it is durable, so that a Ready loop may send
// its messages afterwards, as raft requires: the log is opened with
// flush.messages=1 (Append fsyncs before it returns), and the hard state
// and snapshots go through WriteFileAtomic. Compact moves the log start
// offset through the log's own atomic log-start-offset-checkpoint before
// it deletes segments.
//
// # Recovery (Open)
//
//  1. package segment recovers the log: a torn tail is truncated at the
//     last whole batch, which can only drop entries of an Append that had
//     not returned.
//  2. The newest checkpoint is read; FirstIndex is the log start offset
//     plus one, and the terms of the log's entries are read from their
//     batch headers (their bodies are read only by Entries).
//  3. A tail that cannot be raft's, entries after a gap or of a lower
//     term than the entry before them, is truncated: it is a segment that
//     a truncation removed (TruncateTo renames it *.deleted) whose rename
//     did not reach the disk before a crash. (A stale segment that
//     overlaps the offsets of a newer one is not repaired: Open reports
//     ErrCorrupt.) TestOpenDropsStaleTail.
//  4. If the snapshot is not in the log (past its end, or a different
//     term at its index), the ApplySnapshot that a crash interrupted is
//     completed: the log restarts at the snapshot's index.
//     TestCrash/apply_snapshot.
//  5. A hard state whose commit index is past the last index is reported
//     as ErrCorrupt: the Ready loop persists entries before the hard state
//     that commits them, so no crash produces it.
//     TestOpenRejectsCommitPastLog.
//
// A crash inside an Append may leave a prefix of its entries (the log
// keeps the whole batches before a torn one), and inside an Append that
// overwrites a conflicting suffix, the log truncated at the conflict with
// a prefix of the new entries. Neither was acknowledged, and the removed
// entries were never committed (raft's leader completeness), so raft
// tolerates both as it tolerates an unflushed tail. A call that returned
// is never undone.
//
// # Concurrency
//
// Every method is safe for concurrent use: one mutex serializes them,
// and each write holds it for its fsyncs. Storage starts no goroutine of
// its own (segment.Log runs its flusher).
//
// Invariants: the log holds exactly the indexes (FirstIndex-1 or
// FirstIndex) .. LastIndex, one batch each, dense and increasing;
// the snapshot's index is in the log or below its start, or the log
// restarted at it; commit <= LastIndex.
package raftlog
