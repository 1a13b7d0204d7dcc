// Package pagecache moves file bytes to sockets and measures where they live.
//
// It is a leaf of Varve: it knows files and sockets, not segments.
//
// Region is a (file, offset, length) range that writes itself to a socket
// with sendfile(2), the way Kafka's FileRecords.writeTo reaches
// FileChannel.transferTo: the bytes go from the OS page cache to the socket
// without crossing user space.
//
// # Concurrency
//
// A Region is a small value; any number of goroutines may read from Regions
// over the same *os.File at once, because every read uses an explicit file
// position (pread, sendfile with an offset) and never the file's shared
// offset. Region.SendTo mutates its receiver and must not be called
// concurrently on the same Region.
//
// Closing a file while a Region over it is being sent is safe: each syscall
// runs under the runtime's reference on the descriptor (os.File.SyscallConn),
// so a concurrent Close makes the next syscall fail with an error wrapping
// os.ErrClosed rather than read a recycled descriptor.
//
// # Errors
//
// Failures are *RegionError values naming the operation, file and range;
// they unwrap to the cause. A region reaching past the end of its file yields
// a short count and an error wrapping ErrTruncated (Kafka: "truncated during
// write", after which the connection is closed).
package pagecache
