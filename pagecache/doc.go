// Package pagecache moves file bytes to sockets and measures where they live.
//
// It is a leaf of Varve: it knows files and sockets, not segments, and
// imports nothing of ours. It targets Linux (sendfile, mincore, fadvise,
// readahead, statx).
//
// # Read paths
//
// Kafka's read path rests on two bets: let the OS page cache hold the data,
// and send file bytes to sockets with sendfile so they never cross user
// space (FileRecords.writeTo -> FileChannel.transferTo). The package offers
// that path and the alternatives it is measured against:
//
//   - Region (file, offset, length): WriteTo uses sendfile(2) when the
//     writer exposes a descriptor and copies through a pooled buffer
//     otherwise; SendTo drives a non-blocking socket from an event loop and
//     resumes exactly after EAGAIN, like Kafka's RecordsSend `remaining`.
//   - MmapReader: write slices of a read-only mapping.
//   - BlockCache + CachedReader: fixed-size blocks in a user-space cache on
//     ristretto (TinyLFU admission, cost in bytes, bounded memory), the
//     design Redpanda chooses instead of the page cache.
//
// Residency (mincore) tells how much of a range is in the page cache;
// Advise (fadvise), Readahead and DropCache (fdatasync + DONTNEED) move it
// in or out, which is how experiments turn a tail read into a catch-up read.
//
// # Concurrency
//
// A Region is a small value; any number of goroutines may read Regions over
// the same *os.File at once, because every read uses an explicit position
// (pread, sendfile with an offset) and never the file's shared offset.
// Region.SendTo mutates its receiver and must not run concurrently on the
// same Region. MmapReader, BlockCache and CachedReader are safe for
// concurrent use.
//
// Closing a file while a Region over it is being sent is safe: each syscall
// runs under the runtime's reference on the descriptor (os.File.SyscallConn),
// so a concurrent Close makes the next syscall fail with an error wrapping
// os.ErrClosed rather than read a recycled descriptor. MmapReader.Close waits
// for reads in flight.
//
// Goroutines: a BlockCache runs ristretto's item-processing and policy
// goroutines from NewBlockCache until Close. Nothing else in the package
// starts a goroutine.
//
// # Invariants
//
//   - A region, slice or range never reaches a byte outside [Off, Off+Len).
//   - A send never moves a file's own offset.
//   - The BlockCache never returns bytes of an older version of a file: a
//     block is keyed and checked by (device, inode, birth time, size, mtime,
//     ctime, invalidation generation, block number), read once per call
//     with statx(2), and inserted only if the file's version did not change
//     while it was read. Blocks are clamped to the size in that version, so
//     bytes appended later are never cached under it.
//   - The bytes the BlockCache references stay within MaxBytes, plus at most
//     one block per goroutine that is inserting one at that moment.
//
// # Errors
//
// Failures are wrapped with the operation, file and range (*RegionError for
// Regions); they unwrap to the cause. A range reaching past the end of its
// file yields the bytes that exist and an error wrapping ErrTruncated
// (Kafka: "truncated during write", after which the connection is closed).
// Region.SendTo returns the bare unix.EAGAIN when the socket is full.
package pagecache
