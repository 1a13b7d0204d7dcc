package pagecache

import (
	"encoding/binary"
	"fmt"
	"os"
	"sync"
	"sync/atomic"

	"github.com/cespare/xxhash/v2"
	"github.com/dgraph-io/ristretto/v2"
)

// DefaultBlockSize is the block size of a BlockCache when the configuration
// leaves it zero: 64 KiB, sixteen pages, large enough that one lookup serves
// a typical fetch of a few batches.
const DefaultBlockSize = 64 << 10

// blockOverhead is charged per block on top of its bytes, for the block
// header and the cache's bookkeeping, so the bound covers more than payload.
const blockOverhead = 128

// BlockCacheConfig configures a BlockCache.
type BlockCacheConfig struct {
	// BlockSize is the size of a cached block in bytes, a power of two of at
	// least 4 KiB. Zero means DefaultBlockSize.
	BlockSize int
	// MaxBytes bounds the memory of the blocks held by the cache, overhead
	// included. It must hold at least one block.
	MaxBytes int64
}

// BlockCache is a user-space cache of fixed-size file blocks on ristretto
// (TinyLFU admission, sampled-LFU eviction, cost in bytes): the alternative
// to the OS page cache that Redpanda-style designs choose and Kafka does not.
//
// A block is keyed by its file's version (device, inode, birth time, size,
// mtime, ctime, invalidation generation) and its block number, so after a
// file is truncated and rewritten, even in place, no read finds the old
// blocks; they age out. Because size is part of the version, appending to a
// file also retires its cached blocks: the cache suits sealed segments.
//
// It is safe for concurrent use. It runs ristretto's goroutines until Close.
type BlockCache struct {
	cache     *ristretto.Cache[uint64, *block]
	blockSize int64
	maxBytes  int64

	gens sync.Map // fileKey -> *atomic.Uint64, bumped by Invalidate

	live   atomic.Int64 // bytes (with overhead) of blocks the cache references
	hits   atomic.Int64
	misses atomic.Int64
}

// block is one cached block. id and num are kept to check a lookup: cache
// keys are 64-bit hashes, and a collision must read as a miss, not as bytes
// of another file.
type block struct {
	id   fileVersion
	num  int64
	data []byte // len < blockSize only for the last block of a file
}

func (b *block) cost() int64 { return int64(len(b.data)) + blockOverhead }

// NewBlockCache returns an empty cache; Close it to stop its goroutines.
func NewBlockCache(cfg BlockCacheConfig) (*BlockCache, error) {
	bs := int64(cfg.BlockSize)
	if bs == 0 {
		bs = DefaultBlockSize
	}
	if bs < 4096 || bs&(bs-1) != 0 {
		return nil, fmt.Errorf("pagecache: block size %d is not a power of two >= 4096", bs)
	}
	if cfg.MaxBytes < bs+blockOverhead {
		return nil, fmt.Errorf("pagecache: block cache bound %d B holds no %d B block", cfg.MaxBytes, bs)
	}
	c := &BlockCache{blockSize: bs, maxBytes: cfg.MaxBytes}
	rc, err := ristretto.NewCache(&ristretto.Config[uint64, *block]{
		NumCounters:        max(100, 10*cfg.MaxBytes/bs), // ristretto's advice: 10x items
		MaxCost:            cfg.MaxBytes,
		BufferItems:        64,
		IgnoreInternalCost: true, // blockOverhead already charges bookkeeping
		OnExit:             c.onExit,
	})
	if err != nil {
		return nil, fmt.Errorf("pagecache: new block cache: %w", err)
	}
	c.cache = rc
	return c, nil
}

// onExit runs whenever ristretto lets go of a block (evicted, rejected,
// replaced or deleted); it may be called with nil.
func (c *BlockCache) onExit(b *block) {
	if b != nil {
		c.live.Add(-b.cost())
	}
}

// Close stops the cache's goroutines and drops every block. No read may run
// concurrently with or after Close.
func (c *BlockCache) Close() { c.cache.Close() }

// BlockSize returns the cache's block size in bytes.
func (c *BlockCache) BlockSize() int64 { return c.blockSize }

// Invalidate retires every cached block of f, whatever its timestamps say.
// A process that rewrites a file it also reads through the cache may call it
// after the write; readers that stat the file afterwards miss.
func (c *BlockCache) Invalidate(f *os.File) error {
	v, err := statVersion(f)
	if err != nil {
		return fmt.Errorf("pagecache: invalidate %s: %w", name(f), err)
	}
	g, _ := c.gens.LoadOrStore(v.key(), new(atomic.Uint64))
	g.(*atomic.Uint64).Add(1)
	return nil
}

// version returns f's current version including its invalidation generation.
func (c *BlockCache) version(f *os.File) (fileVersion, error) {
	v, err := statVersion(f)
	if err != nil {
		return v, err
	}
	if g, ok := c.gens.Load(v.key()); ok {
		v.gen = g.(*atomic.Uint64).Load()
	}
	return v, nil
}

// BlockCacheStats are counters since the cache was created.
type BlockCacheStats struct {
	Hits, Misses int64 // block lookups
	Bytes        int64 // bytes of blocks (with overhead) currently referenced by the cache
	MaxBytes     int64
}

// Stats returns the cache's counters.
func (c *BlockCache) Stats() BlockCacheStats {
	return BlockCacheStats{Hits: c.hits.Load(), Misses: c.misses.Load(), Bytes: c.live.Load(), MaxBytes: c.maxBytes}
}

// hashKey maps (version, block number) to the 64-bit ristretto key.
func hashKey(v fileVersion, num int64) uint64 {
	var b [64]byte
	for i, x := range [...]uint64{v.dev, v.ino, uint64(v.btime), uint64(v.mtime),
		uint64(v.ctime), uint64(v.size), v.gen, uint64(num)} {
		binary.LittleEndian.PutUint64(b[8*i:], x)
	}
	return xxhash.Sum64(b[:])
}

// get returns block num of file version v, reading and inserting it on a
// miss. The block is clamped to v.size, so bytes appended after the stat are
// never cached under v.
func (c *BlockCache) get(f *os.File, v fileVersion, num int64) (*block, error) {
	key := hashKey(v, num)
	if b, ok := c.cache.Get(key); ok && b.id == v && b.num == num {
		c.hits.Add(1)
		return b, nil
	}
	c.misses.Add(1)
	b, err := c.load(f, v, num)
	if err != nil {
		return nil, err
	}
	c.insert(f, v, key, b)
	return b, nil
}

// load reads block num from f.
func (c *BlockCache) load(f *os.File, v fileVersion, num int64) (*block, error) {
	start := num * c.blockSize
	n := min(c.blockSize, v.size-start)
	if n <= 0 {
		return &block{id: v, num: num}, nil
	}
	data := make([]byte, n)
	m, err := f.ReadAt(data, start)
	if int64(m) < n {
		if err == nil {
			err = ErrTruncated
		}
		return nil, fmt.Errorf("pagecache: read block %d of %s: %w", num, name(f), err)
	}
	return &block{id: v, num: num, data: data}, nil
}

// insert offers b to the cache if the file is still at version v (a write
// racing with the read could otherwise plant its bytes under the old
// version), then waits for ristretto to apply the insert, so the bytes held
// by the cache never exceed MaxBytes by more than one block per goroutine in
// insert.
func (c *BlockCache) insert(f *os.File, v fileVersion, key uint64, b *block) {
	if now, err := c.version(f); err != nil || now != v {
		return
	}
	c.live.Add(b.cost())
	if !c.cache.Set(key, b, b.cost()) {
		c.live.Add(-b.cost()) // dropped under contention: never referenced
		return
	}
	c.cache.Wait()
}
