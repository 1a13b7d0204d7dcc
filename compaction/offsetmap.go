package compaction

import (
	"hash/crc32"
	"math/bits"

	"github.com/cespare/xxhash/v2"
)

// OffsetMap maps a record key to the last offset seen for it, in a fixed
// amount of memory whatever the number of distinct keys: Kafka's
// SkimpyOffsetMap, with a denser slot.
//
// It is an open-addressing table with linear probing. Each slot is 16
// bytes, two words:
//
//	word 0  bits 63..0   h1: xxhash64(key), 0 = empty slot (a key hashing to 0 uses 1)
//	word 1  bits 63..40  h2: the low 24 bits of CRC-32C(key)
//	        bits 39..0   offset - base (the map's first offset)
//
// So a slot identifies a key by 88 hash bits (Kafka: 128-bit MD5 in 24
// bytes), and a map of M bytes has M/16 slots (Kafka: M/24). A key is
// found by hashing h1 to a slot (Lemire's multiply-shift reduction) and
// probing forward until a slot with the same h1 and h2, or an empty one.
// An offset more than 2^40-1 past the base cannot be stored; Put then
// refuses, like a full map, and the pass ends there.
//
// An OffsetMap is not safe for concurrent use.
type OffsetMap struct {
	words   []uint64 // 2 per slot; len = 2*slots of the current table
	buf     []uint64 // backing memory; words is a prefix of it
	slots   uint64
	size    int   // keys stored
	limit   int   // keys allowed (slots * load factor)
	base    int64 // offsets are stored as offset - base
	probes  uint64
	lookups uint64
	sink    uint64 // keeps the loads of Prefetch from being optimised away
}

const (
	slotBytes   = 16
	deltaBits   = 40
	deltaMask   = 1<<deltaBits - 1
	h2Mask      = 1<<24 - 1
	emptyHash   = 0
	maxOffDelta = deltaMask
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// NewOffsetMap returns a map that may use up to memory bytes. Its table
// is allocated by Reset, sized to what a pass needs, never larger.
func NewOffsetMap(memory int64) *OffsetMap {
	return &OffsetMap{slots: uint64(max(memory, 0) / slotBytes)}
}

// MaxSlots is the number of slots the map's memory allows.
func (m *OffsetMap) MaxSlots() int { return int(m.slots) }

// Reset empties the map for a pass whose offsets start at base, using a
// table of at most wantSlots slots (at least 2, at most MaxSlots). Only the
// table that will be used is allocated and cleared.
func (m *OffsetMap) Reset(base int64, wantSlots int, loadFactor float64) {
	n := uint64(min(max(wantSlots, 2), int(m.slots)))
	if uint64(cap(m.buf)) < 2*n {
		m.buf = make([]uint64, 2*n)
	} else {
		clear(m.buf[:2*n])
	}
	m.words = m.buf[:2*n]
	m.size, m.base, m.probes, m.lookups = 0, base, 0, 0
	m.limit = max(int(float64(n)*loadFactor), 1)
	m.limit = min(m.limit, int(n)-1) // keep one slot empty so probing ends
}

// tableSlots is the number of slots of the current table.
func (m *OffsetMap) tableSlots() uint64 { return uint64(len(m.words) / 2) }

// hashes returns the two hashes of key.
func hashes(key []byte) (h1, h2 uint64) {
	h1 = xxhash.Sum64(key)
	if h1 == emptyHash {
		h1 = 1
	}
	return h1, uint64(crc32.Checksum(key, castagnoli)) & h2Mask
}

// find returns the index of key's slot or of the empty slot where it
// would go, and whether the key is there.
func (m *OffsetMap) find(h1, h2 uint64) (uint64, bool) {
	n := m.tableSlots()
	i, _ := bits.Mul64(h1, n)
	m.lookups++
	for {
		m.probes++
		w0 := m.words[2*i]
		if w0 == emptyHash {
			return i, false
		}
		if w0 == h1 && m.words[2*i+1]>>deltaBits == h2 {
			return i, true
		}
		if i++; i == n {
			i = 0
		}
	}
}

// Put records offset as key's latest offset. It returns false, storing
// nothing, when the key is new and the map already holds as many keys as
// its load factor allows, or when offset is out of the map's range
// [base, base+2^40).
func (m *OffsetMap) Put(key []byte, offset int64) bool {
	h1, h2 := hashes(key)
	return m.put(h1, h2, offset)
}

func (m *OffsetMap) put(h1, h2 uint64, offset int64) bool {
	delta := uint64(offset - m.base)
	if offset < m.base || delta > maxOffDelta || len(m.words) == 0 {
		return false
	}
	i, found := m.find(h1, h2)
	if !found {
		if m.size >= m.limit {
			return false
		}
		m.size++
		m.words[2*i] = h1
	}
	m.words[2*i+1] = h2<<deltaBits | delta
	return true
}

// Get returns key's latest offset, if the map holds the key.
func (m *OffsetMap) Get(key []byte) (int64, bool) {
	h1, h2 := hashes(key)
	return m.get(h1, h2)
}

func (m *OffsetMap) get(h1, h2 uint64) (int64, bool) {
	if len(m.words) == 0 {
		return 0, false
	}
	i, found := m.find(h1, h2)
	if !found {
		return 0, false
	}
	return m.base + int64(m.words[2*i+1]&deltaMask), true
}

// prefetch loads the home slot of each hash, so that the cache misses of
// a batch's lookups overlap instead of coming one after the other: the
// loads are independent, and the CPU keeps several in flight.
func (m *OffsetMap) prefetch(h1s []uint64) {
	n := m.tableSlots()
	if n == 0 {
		return
	}
	var sum uint64
	for _, h := range h1s {
		i, _ := bits.Mul64(h, n)
		sum += m.words[2*i]
	}
	m.sink += sum
}

// keyHashes holds the hashes of one batch's keys, reused across batches.
type keyHashes struct {
	h1, h2 []uint64
}

// hash hashes the key of every record of recs that needs a lookup (a key,
// and an offset in [from, to]); the others get h1 = 0. It then prefetches
// their slots in m.
func (k *keyHashes) hash(m *OffsetMap, recs []keyRec, from, to int64) {
	n := len(recs)
	if cap(k.h1) < n {
		k.h1, k.h2 = make([]uint64, n), make([]uint64, n)
	}
	k.h1, k.h2 = k.h1[:n], k.h2[:n]
	for i := range recs {
		r := &recs[i]
		if r.key == nil || r.offset < from || r.offset > to {
			k.h1[i] = 0
			continue
		}
		k.h1[i], k.h2[i] = hashes(r.key)
	}
	m.prefetch(k.h1)
}

// Size is the number of keys held.
func (m *OffsetMap) Size() int { return m.size }

// Utilization is the share of the current table's slots in use.
func (m *OffsetMap) Utilization() float64 {
	if len(m.words) == 0 {
		return 0
	}
	return float64(m.size) / float64(m.tableSlots())
}

// MemoryBytes is the memory the table holds now.
func (m *OffsetMap) MemoryBytes() int64 { return int64(cap(m.buf)) * 8 }

// ProbesPerLookup is the mean number of slots visited per Put or Get
// since the last Reset.
func (m *OffsetMap) ProbesPerLookup() float64 {
	if m.lookups == 0 {
		return 0
	}
	return float64(m.probes) / float64(m.lookups)
}
