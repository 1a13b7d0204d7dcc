package compaction_test

import (
	"fmt"
	"testing"

	"pgregory.net/rapid"

	"github.com/varve/varve/compaction"
)

// Kafka: SkimpyOffsetMap.put overwrites a key's offset and get returns
// the latest; a key never put is absent.
func TestOffsetMapPutGet(t *testing.T) {
	m := compaction.NewOffsetMap(1 << 16)
	m.Reset(100, 1<<12, 0.9)
	for i := range 1000 {
		if !m.Put([]byte(fmt.Sprint("key-", i%300)), int64(100+i)) {
			t.Fatalf("put %d refused", i)
		}
	}
	if m.Size() != 300 {
		t.Fatalf("size %d, want 300 distinct keys", m.Size())
	}
	for k := range 300 {
		off, ok := m.Get([]byte(fmt.Sprint("key-", k)))
		want := int64(100 + 900 + k) // last i with i%300 == k
		if k >= 100 {
			want = int64(100 + 600 + k)
		}
		if !ok || off != want {
			t.Fatalf("get key-%d = %d, %v; want %d", k, off, ok, want)
		}
	}
	if _, ok := m.Get([]byte("absent")); ok {
		t.Fatal("found a key never put")
	}
}

// Kafka fills the map up to log.cleaner.io.buffer.load.factor of its
// slots; past that a new key is refused (the pass stops there), while
// keys already held can still be updated.
func TestOffsetMapRefusesNewKeysPastLoadFactor(t *testing.T) {
	m := compaction.NewOffsetMap(16 * 100) // 100 slots
	m.Reset(0, 100, 0.5)
	for i := range 50 {
		if !m.Put([]byte(fmt.Sprint(i)), int64(i)) {
			t.Fatalf("put %d refused below the load factor", i)
		}
	}
	if m.Put([]byte("new"), 50) {
		t.Fatal("a new key was accepted past the load factor")
	}
	if !m.Put([]byte("7"), 51) {
		t.Fatal("an update of a held key was refused")
	}
	if off, _ := m.Get([]byte("7")); off != 51 {
		t.Fatalf("updated key reads %d, want 51", off)
	}
	if m.Put([]byte("7"), -1) {
		t.Fatal("an offset below the map's base was accepted")
	}
	if m.Put([]byte("7"), 1<<40) {
		t.Fatal("an offset 2^40 past the base was accepted")
	}
}

// Memory bound: the table never exceeds the dedupe buffer, however many
// slots a pass asks for, and a smaller request uses a smaller table.
func TestOffsetMapMemoryIsBounded(t *testing.T) {
	const mem = 1 << 20
	m := compaction.NewOffsetMap(mem)
	m.Reset(0, 1<<30, 0.9)
	if m.MemoryBytes() > mem || m.MaxSlots() != mem/16 {
		t.Fatalf("table of %d bytes and %d slots for a %d-byte buffer", m.MemoryBytes(), m.MaxSlots(), mem)
	}
	small := compaction.NewOffsetMap(mem)
	small.Reset(0, 1000, 0.9)
	if small.MemoryBytes() != 1000*16 {
		t.Fatalf("a 1000-slot request took %d bytes, want 16000", small.MemoryBytes())
	}
	for i := 0; ; i++ {
		if !m.Put([]byte(fmt.Sprint(i)), int64(i)) {
			if want := int(0.9 * float64(m.MaxSlots())); i < want-1 || i > want {
				t.Fatalf("map took %d keys, want about %d (0.9 of %d slots)", i, want, mem/16)
			}
			break
		}
	}
}

// The map agrees with a Go map for any sequence of puts in increasing
// offset order (the order a pass puts them in).
func TestOffsetMapMatchesModel(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		slots := rapid.IntRange(2, 300).Draw(rt, "slots")
		m := compaction.NewOffsetMap(int64(slots) * 16)
		base := rapid.Int64Range(0, 1<<50).Draw(rt, "base")
		m.Reset(base, slots, 0.9)
		model := map[string]int64{}
		off := base
		for range rapid.IntRange(0, 500).Draw(rt, "n") {
			k := fmt.Sprint(rapid.IntRange(0, 400).Draw(rt, "key"))
			_, held := model[k]
			ok := m.Put([]byte(k), off)
			if ok {
				model[k] = off
			} else if held {
				rt.Fatalf("update of held key %s refused", k)
			}
			off += rapid.Int64Range(1, 1000).Draw(rt, "gap")
		}
		if m.Size() != len(model) {
			rt.Fatalf("size %d, model %d", m.Size(), len(model))
		}
		for k, want := range model {
			if got, ok := m.Get([]byte(k)); !ok || got != want {
				rt.Fatalf("get %s = %d, %v; want %d", k, got, ok, want)
			}
		}
	})
}

// A map without memory refuses every key instead of failing.
func TestOffsetMapWithoutMemory(t *testing.T) {
	m := compaction.NewOffsetMap(0)
	m.Reset(0, 100, 0.9)
	if m.Put([]byte("k"), 1) {
		t.Fatal("a map of 0 bytes took a key")
	}
	if _, ok := m.Get([]byte("k")); ok {
		t.Fatal("a map of 0 bytes found a key")
	}
}
