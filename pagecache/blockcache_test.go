package pagecache

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"testing/iotest"

	"pgregory.net/rapid"
)

func newCache(t testing.TB, blockSize int, maxBytes int64) *BlockCache {
	t.Helper()
	c, err := NewBlockCache(BlockCacheConfig{BlockSize: blockSize, MaxBytes: maxBytes})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

func readAll(t testing.TB, r *CachedReader, n int) []byte {
	t.Helper()
	p := make([]byte, n)
	m, err := r.ReadAt(p, 0)
	if err != nil && err != io.EOF {
		t.Fatal(err)
	}
	return p[:m]
}

// Kafka truncates a follower's log to the leader's epoch end offset and then
// appends the leader's batches at the same positions (KIP-101), so the same
// file (same inode) holds different bytes at the same offsets. A cache keyed
// only by inode and position would serve the old batches. Rewrite the file
// in place, same size, many times in a row (faster than a coarse clock
// tick), and require the new bytes every time.
func TestBlockCacheNoStaleBytesAfterTruncateRewrite(t *testing.T) {
	c := newCache(t, 4096, 1<<20)
	path := filepath.Join(t.TempDir(), "seg.log")
	const size = 3*4096 + 100
	if err := os.WriteFile(path, randomBytes(100, size), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := NewCachedReader(c, f)
	fi0, _ := f.Stat()
	for i := range uint64(200) {
		readAll(t, r, size) // populate with the current bytes
		want := randomBytes(101+i, size)
		if err := os.WriteFile(path, want, 0o644); err != nil { // O_TRUNC: same inode
			t.Fatal(err)
		}
		if got := readAll(t, r, size); !bytes.Equal(got, want) {
			t.Fatalf("rewrite %d: cache served stale bytes", i)
		}
	}
	if fi, _ := f.Stat(); !os.SameFile(fi0, fi) {
		t.Fatal("test did not keep the inode")
	}
	if c.Stats().Hits == 0 {
		t.Fatal("the cache never hit: the test did not exercise cached blocks")
	}
}

// A deleted segment whose inode number is reused by a new file (retention
// deletes, the next roll creates) must not be confused with it.
func TestBlockCacheNoStaleBytesAfterDeleteRecreate(t *testing.T) {
	c := newCache(t, 4096, 1<<20)
	dir := t.TempDir()
	path := filepath.Join(dir, "seg.log")
	for i := range uint64(50) {
		want := randomBytes(200+i, 10000)
		if err := os.WriteFile(path, want, 0o644); err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		r := NewCachedReader(c, f)
		got1, got2 := readAll(t, r, 10000), readAll(t, r, 10000)
		f.Close()
		if !bytes.Equal(got1, want) || !bytes.Equal(got2, want) {
			t.Fatalf("generation %d: stale bytes", i)
		}
		if err := os.Remove(path); err != nil {
			t.Fatal(err)
		}
	}
}

// An append after a partial last block was cached must show the new bytes.
func TestBlockCacheSeesAppends(t *testing.T) {
	c := newCache(t, 4096, 1<<20)
	f := newDiskFile(t, 5000)
	r := NewCachedReader(c, f)
	first := readAll(t, r, 5000)
	more := randomBytes(300, 3000)
	if _, err := f.Write(more); err != nil {
		t.Fatal(err)
	}
	got := readAll(t, r, 8000)
	if !bytes.Equal(got, append(first, more...)) {
		t.Fatal("appended bytes missing or wrong")
	}
}

// Invalidate retires a file's blocks even when stat cannot tell.
func TestBlockCacheInvalidate(t *testing.T) {
	c := newCache(t, 4096, 1<<20)
	f := writeFile(t, randomBytes(400, 8192))
	r := NewCachedReader(c, f)
	readAll(t, r, 8192)
	readAll(t, r, 8192)
	before := c.Stats()
	if before.Hits != 2 || before.Misses != 2 {
		t.Fatalf("stats %+v; want 2 hits 2 misses", before)
	}
	if err := c.Invalidate(f); err != nil {
		t.Fatal(err)
	}
	readAll(t, r, 8192)
	if after := c.Stats(); after.Misses != 4 {
		t.Fatalf("after Invalidate stats %+v; want 2 more misses", after)
	}
}

func TestCachedReaderReaderAtContract(t *testing.T) {
	c := newCache(t, 4096, 1<<20)
	data := randomBytes(500, 50000)
	f := writeFile(t, data)
	if err := iotest.TestReader(io.NewSectionReader(NewCachedReader(c, f), 0, int64(len(data))), data); err != nil {
		t.Fatal(err)
	}
}

// The cache path of a fetch: file range to socket, byte-identical.
func TestCachedReaderWriteRangeTCP(t *testing.T) {
	c := newCache(t, 0, 8<<20)
	data := randomBytes(600, 1<<20+77)
	f := writeFile(t, data)
	r := NewCachedReader(c, f)
	for range 2 { // cold, then warm
		client, server := tcpPair(t)
		got := drain(server)
		n, err := r.WriteRange(client, 1000, int64(len(data))-1000)
		client.Close()
		if err != nil || n != int64(len(data))-1000 {
			t.Fatalf("WriteRange = %d, %v", n, err)
		}
		if !bytes.Equal(<-got, data[1000:]) {
			t.Fatal("bytes differ")
		}
	}
	var buf bytes.Buffer
	if n, err := r.WriteRange(&buf, int64(len(data))-10, 20); n != 10 || err == nil {
		t.Fatalf("WriteRange past EOF = %d, %v; want 10 and ErrTruncated", n, err)
	}
}

// The memory bound: under any sequence of reads, rewrites and invalidations
// over several files, the bytes the cache references stay within MaxBytes,
// and every read returns the file's current bytes (a model of the files is
// kept in memory).
func TestBlockCacheBoundedAndFreshProperty(t *testing.T) {
	dir := t.TempDir()
	rapid.Check(t, func(rt *rapid.T) {
		const bs, maxBytes = 4096, 10 * (4096 + blockOverhead)
		c, err := NewBlockCache(BlockCacheConfig{BlockSize: bs, MaxBytes: maxBytes})
		if err != nil {
			rt.Fatal(err)
		}
		defer c.Close()
		files, model := openModelFiles(rt, dir, 3)
		defer func() {
			for _, f := range files {
				f.Close()
			}
		}()
		for range rapid.IntRange(1, 60).Draw(rt, "ops") {
			i := rapid.IntRange(0, len(files)-1).Draw(rt, "file")
			switch rapid.IntRange(0, 9).Draw(rt, "op") {
			case 0:
				model[i] = rapid.SliceOfN(rapid.Byte(), 0, 20*bs).Draw(rt, "contents")
				if err := os.WriteFile(files[i].Name(), model[i], 0o644); err != nil {
					rt.Fatal(err)
				}
			case 1:
				if err := c.Invalidate(files[i]); err != nil {
					rt.Fatal(err)
				}
			default:
				checkRead(rt, NewCachedReader(c, files[i]), model[i])
			}
			if s := c.Stats(); s.Bytes > maxBytes || s.Bytes < 0 {
				rt.Fatalf("cache references %d bytes, bound %d", s.Bytes, maxBytes)
			}
		}
	})
}

func openModelFiles(rt *rapid.T, dir string, n int) ([]*os.File, [][]byte) {
	files := make([]*os.File, n)
	model := make([][]byte, n)
	for i := range files {
		model[i] = rapid.SliceOfN(rapid.Byte(), 0, 20*4096).Draw(rt, "initial")
		path := filepath.Join(dir, fmt.Sprintf("%020d.log", i))
		if err := os.WriteFile(path, model[i], 0o644); err != nil {
			rt.Fatal(err)
		}
		f, err := os.Open(path)
		if err != nil {
			rt.Fatal(err)
		}
		files[i] = f
	}
	return files, model
}

func checkRead(rt *rapid.T, r *CachedReader, want []byte) {
	off := rapid.Int64Range(0, int64(len(want))+100).Draw(rt, "off")
	p := make([]byte, rapid.IntRange(0, 3*4096).Draw(rt, "len"))
	n, err := r.ReadAt(p, off)
	wantN := max(0, min(int64(len(p)), int64(len(want))-off))
	if int64(n) != wantN || (err != nil && err != io.EOF) {
		rt.Fatalf("ReadAt(%d bytes at %d) = %d, %v; want %d", len(p), off, n, err, wantN)
	}
	if n > 0 && !bytes.Equal(p[:n], want[off:off+int64(n)]) {
		rt.Fatalf("ReadAt at %d: stale or wrong bytes", off)
	}
}

// Under concurrent readers the bound may be exceeded by at most one block
// per goroutine in the middle of an insert (documented on insert).
func TestBlockCacheBoundUnderConcurrency(t *testing.T) {
	const bs, maxBytes, readers = 4096, 16 * (4096 + blockOverhead), 8
	c := newCache(t, bs, maxBytes)
	data := randomBytes(700, 400*bs)
	f := writeFile(t, data)
	r := NewCachedReader(c, f)
	var peak int64
	var mu sync.Mutex
	var wg sync.WaitGroup
	for g := range readers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := make([]byte, 3*bs)
			for i := range 300 {
				off := int64((g*7919 + i*104729) % (400*bs - len(p)))
				if _, err := r.ReadAt(p, off); err != nil || !bytes.Equal(p, data[off:off+int64(len(p))]) {
					t.Errorf("read at %d: %v or wrong bytes", off, err)
					return
				}
				mu.Lock()
				peak = max(peak, c.Stats().Bytes)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if limit := int64(maxBytes + readers*(bs+blockOverhead)); peak > limit {
		t.Fatalf("peak %d bytes referenced, limit %d", peak, limit)
	}
	t.Logf("peak %d of bound %d", peak, maxBytes)
}

func TestNewBlockCacheRejectsBadConfig(t *testing.T) {
	for _, cfg := range []BlockCacheConfig{
		{BlockSize: 1000, MaxBytes: 1 << 20},
		{BlockSize: 2048, MaxBytes: 1 << 20},
		{BlockSize: 4096, MaxBytes: 4096},
	} {
		if c, err := NewBlockCache(cfg); err == nil {
			c.Close()
			t.Errorf("%+v accepted", cfg)
		}
	}
}
