package pagecache

import "sync"

// copyBufSize is the size of the user-space buffers used by the copying paths
// (Region.WriteTo fallback, MmapReader chunking). 128 KiB amortises the
// syscall cost while staying well inside L2 on common machines.
const copyBufSize = 128 << 10

var copyBufPool = sync.Pool{New: func() any {
	b := make([]byte, copyBufSize)
	return &b
}}

func getCopyBuf() *[]byte  { return copyBufPool.Get().(*[]byte) }
func putCopyBuf(b *[]byte) { copyBufPool.Put(b) }
