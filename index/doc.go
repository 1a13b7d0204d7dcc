// Package index implements Kafka's two sparse, memory-mapped segment indexes:
// the offset index (<baseOffset>.index) and the time index
// (<baseOffset>.timeindex). Both are byte-for-byte compatible with the files
// Kafka writes, so Kafka's tools can read ours and we can read Kafka's.
//
// An index is a leaf: it knows nothing about record batches. The segment
// package decides when to add an entry (every index.interval.bytes of log),
// when to roll (ErrIndexFull), and when to rebuild an index from the log
// (SanityCheck fails). Indexes carry no checksum; in the event of a crash they
// are rebuilt from the log, never the reverse.
//
// # File formats
//
// Both files are a bare array of fixed-size entries: no header, no footer, no
// checksum, all integers big-endian. These layouts are part of the on-disk
// format shared with Kafka and must not be changed.
//
// Offset index, OffsetEntrySize = 8 bytes per entry:
//
//	byte 0..3  relativeOffset  int32  offset - baseOffset, in [0, MaxInt32]
//	byte 4..7  position        int32  byte position of a batch in the .log file
//
// The key is the last offset of the batch(es) appended at that position.
// Entries are strictly increasing in both offset and position.
//
// Time index, TimeEntrySize = 12 bytes per entry:
//
//	byte 0..7   timestamp       int64  max timestamp seen so far in the segment
//	byte 8..11  relativeOffset  int32  offset - baseOffset of the record holding it
//
// An entry (T, O) means: every record with a timestamp greater than T is at an
// offset after O. Timestamps are strictly increasing (an entry is only written
// when its timestamp exceeds the last one); offsets never decrease.
//
// Kafka reads every 32-bit field as a signed int, and so do we: a value with
// the top bit set reads as negative and is reported as corrupt.
//
// # Size of the file
//
// A new index is preallocated (as a sparse file) to roundDown(maxIndexSize,
// entrySize) bytes and mapped read-write; DefaultMaxIndexSize (10 MiB) holds
// 1,310,720 offset entries or 873,813 time entries. The number of entries is
// not stored anywhere: an existing file is assumed to be full of valid entries
// (entries = size / entrySize), exactly as Kafka assumes. That is safe only
// because TrimToValidSize (called on roll and by Close) shrinks the file to
// Entries()*entrySize, and because a segment that may not have been closed
// cleanly is rebuilt. A file left preallocated by a crash therefore opens with
// zero entries after the real ones, and SanityCheck rejects it.
//
// Opening an existing file never modifies it: the file is mapped at its
// current size and MaxEntries() is raised to the configured maximum, so
// appends can continue; the file itself is grown to maxIndexSize by the first
// Append that needs the room (or by an explicit Resize). Kafka grows only the
// active segment's indexes; growing lazily keeps a crash after merely opening
// old segments from leaving them untrimmed. A file whose size is not a
// multiple of the entry size still opens (with floor(size/entrySize) entries)
// and SanityCheck reports it until Reset.
//
// # Lookups
//
// Lookup returns the floor entry: the largest entry whose key is <= the target,
// or a "not found" value ({baseOffset, 0} for the offset index,
// {-1, baseOffset} for the time index). The binary search is Kafka's
// cache-aware one: it first tests the entry at the start of the "warm" section,
// the last 8192 bytes of entries (1024 offset entries, 682 time entries), and
// searches only there when the target is at or above it. Tail lookups from
// in-sync followers and consumers thus touch at most three recently used pages
// and never fault in the cold head of a large index.
//
// # Concurrency
//
// Each index has one writer and any number of readers.
//
//   - Mutators: Append / MaybeAppend, TruncateTo, Reset, Resize,
//     TrimToValidSize, Close, Delete, Rename. They are serialised by an
//     internal mutex, but the intended use is a single writer goroutine.
//   - Readers: Lookup, Entry, Entries, MaxEntries, IsFull, LastOffset,
//     LastEntry, SanityCheck, FetchUpperBoundOffset, Flush, Path, SizeBytes,
//     BaseOffset. Any goroutine may call them at any time, concurrently with
//     the writer.
//
// Two mechanisms keep readers from seeing a torn entry or an unmapped region:
//
//  1. The entry count is an atomic. Append writes the entry's bytes into the
//     mapping first and publishes the new count after, so a reader that loads
//     the count n only reads entries [0, n), all of which are complete. The
//     slot being written is never one a reader can see.
//  2. A read/write mutex guards the mapping. Readers hold it in read mode for
//     their whole search. Whatever replaces or unmaps the mapping (Resize,
//     TrimToValidSize, Reset, Close, Delete, and an Append that must grow the
//     file) and whatever lowers the count (TruncateTo, Reset) holds it in
//     write mode, so no reader is inside a region that disappears or inside a
//     slot that is about to be rewritten. Append that does not grow the file
//     takes no lock readers wait on.
//
// Flush (msync) holds the mapping in read mode, so it may run on a flusher
// goroutine while the writer appends.
//
// The package starts no goroutines.
//
// # Invariants
//
//   - 0 <= Entries() <= MaxEntries(); entry bytes [0, Entries()*entrySize) are
//     inside the current mapping.
//   - Entries written by this package satisfy what SanityCheck checks: offsets
//     within [baseOffset, baseOffset+MaxInt32], strictly increasing; offset
//     index positions strictly increasing and non-negative; time index
//     timestamps strictly increasing and offsets non-decreasing.
//   - After Close or Delete the index is empty (Entries() == 0), lookups
//     return the not-found value and mutators return ErrClosed. Close and
//     Delete may be called more than once.
//   - Entry(i) with i outside [0, Entries()) panics, like a slice index: it is
//     a caller bug, never a property of the file's content. No file content
//     makes Open, SanityCheck or Lookup panic.
package index
