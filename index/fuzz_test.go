package index

import (
	"errors"
	"math"
	"slices"
	"testing"
)

// FuzzOpenIndex: arbitrary bytes as an existing .index file. Open must
// succeed, SanityCheck must pass or return a *CorruptIndexError, and nothing
// may panic. When SanityCheck passes, Lookup must equal a linear scan and the
// index must accept an append and survive close + reopen unchanged.
//
//	go test -fuzz=FuzzOpenIndex -fuzztime=60s ./index/
func FuzzOpenIndex(f *testing.F) {
	f.Add([]byte{}, int64(0), int64(0), int64(0))
	f.Add(encodeOffsetEntries(10, []OffsetPosition{{11, 0}, {15, 4096}, {20, 9000}}), int64(10), int64(9001), int64(16))
	f.Add(append(encodeOffsetEntries(0, []OffsetPosition{{1, 5}}), 1, 2, 3), int64(0), int64(100), int64(1))
	f.Add(make([]byte, 64), int64(0), int64(100), int64(3))
	f.Add([]byte{0x80, 0, 0, 0, 0xff, 0xff, 0xff, 0xff}, int64(-5), int64(1<<40), int64(-1<<63))
	f.Fuzz(func(t *testing.T, content []byte, base, logSize, target int64) {
		path := writeFile(t, "fuzz.index", content)
		ix, err := OpenOffsetIndex(path, base, 4096)
		if err != nil {
			t.Fatalf("open of a %d-byte file failed: %v", len(content), err)
		}
		defer ix.Close()
		if ix.Entries() != len(content)/OffsetEntrySize {
			t.Fatalf("Entries = %d, want %d", ix.Entries(), len(content)/OffsetEntrySize)
		}
		got := ix.Lookup(target)
		ix.FetchUpperBoundOffset(got, 4096)
		entries := offsetEntries(ix)
		if got != (OffsetPosition{Offset: base}) && !slices.Contains(entries, got) {
			t.Fatalf("Lookup(%d) = %+v, not an entry", target, got)
		}
		err = ix.SanityCheck(logSize)
		if err != nil {
			if ce := (*CorruptIndexError)(nil); !errors.As(err, &ce) {
				t.Fatalf("SanityCheck = %v, want nil or *CorruptIndexError", err)
			}
			return
		}
		checkOffsetLookups(t, ix, entries, target)
		checkOffsetAppendAndReopen(t, ix, entries, logSize)
	})
}

func checkOffsetLookups(t *testing.T, ix *OffsetIndex, entries []OffsetPosition, target int64) {
	t.Helper()
	targets := []int64{target}
	for _, e := range entries[:min(len(entries), 64)] {
		targets = append(targets, e.Offset-1, e.Offset, e.Offset+1)
	}
	for _, x := range targets {
		if got, want := ix.Lookup(x), linearOffsetFloor(ix.BaseOffset(), entries, x); got != want {
			t.Fatalf("sane index: Lookup(%d) = %+v, linear scan %+v", x, got, want)
		}
	}
}

func checkOffsetAppendAndReopen(t *testing.T, ix *OffsetIndex, entries []OffsetPosition, logSize int64) {
	t.Helper()
	next := OffsetPosition{Offset: ix.BaseOffset(), Position: 0}
	if n := len(entries); n > 0 {
		next = OffsetPosition{entries[n-1].Offset + 1, entries[n-1].Position + 1}
	}
	err := ix.Append(next.Offset, next.Position)
	switch {
	case err == nil:
		entries = append(entries, next)
	case !errors.Is(err, ErrIndexFull) && !errors.Is(err, ErrInvalidOffset) && !errors.Is(err, ErrInvalidPosition):
		t.Fatalf("Append(%+v) = %v", next, err)
	}
	path := ix.Path()
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	re, err := OpenOffsetIndex(path, ix.BaseOffset(), 4096)
	if err != nil {
		t.Fatal(err)
	}
	defer re.Close()
	if got := offsetEntries(re); !slices.Equal(got, entries) {
		t.Fatalf("reopened entries %v, want %v", got, entries)
	}
	if err := re.SanityCheck(max(logSize, next.Position+1)); err != nil {
		t.Fatalf("SanityCheck after append + reopen: %v", err)
	}
}

// FuzzOpenTimeIndex: the same for a .timeindex file.
//
//	go test -fuzz=FuzzOpenTimeIndex -fuzztime=60s ./index/
func FuzzOpenTimeIndex(f *testing.F) {
	f.Add([]byte{}, int64(0), int64(0), int64(0))
	f.Add(encodeTimeEntries(10, []TimestampOffset{{0, 10}, {7, 12}, {9, 12}}), int64(10), int64(12), int64(8))
	f.Add(append(encodeTimeEntries(0, []TimestampOffset{{1, 5}}), 9), int64(0), int64(100), int64(1))
	f.Add(make([]byte, 60), int64(0), int64(100), int64(0))
	f.Fuzz(func(t *testing.T, content []byte, base, lastOffset, target int64) {
		path := writeFile(t, "fuzz.timeindex", content)
		ix, err := OpenTimeIndex(path, base, 1200)
		if err != nil {
			t.Fatalf("open of a %d-byte file failed: %v", len(content), err)
		}
		defer ix.Close()
		got := ix.Lookup(target)
		entries := timeEntries(ix)
		if got != (TimestampOffset{NoTimestamp, base}) && !slices.Contains(entries, got) {
			t.Fatalf("Lookup(%d) = %+v, not an entry", target, got)
		}
		err = ix.SanityCheck(lastOffset)
		if err != nil {
			if ce := (*CorruptIndexError)(nil); !errors.As(err, &ce) {
				t.Fatalf("SanityCheck = %v, want nil or *CorruptIndexError", err)
			}
			return
		}
		targets := []int64{target}
		for _, e := range entries[:min(len(entries), 64)] {
			targets = append(targets, e.Timestamp-1, e.Timestamp, e.Timestamp+1)
		}
		for _, x := range targets {
			if got, want := ix.Lookup(x), linearTimeFloor(base, entries, x); got != want {
				t.Fatalf("sane index: Lookup(%d) = %+v, linear scan %+v", x, got, want)
			}
		}
		checkTimeAppendAndReopen(t, ix, entries)
	})
}

func checkTimeAppendAndReopen(t *testing.T, ix *TimeIndex, entries []TimestampOffset) {
	t.Helper()
	last := ix.LastEntry()
	if last.Timestamp == math.MaxInt64 {
		return // no later timestamp exists
	}
	next := TimestampOffset{last.Timestamp + 1, last.Offset}
	err := ix.MaybeAppend(next.Timestamp, next.Offset, true)
	switch {
	case err == nil && next.Timestamp > last.Timestamp:
		entries = append(entries, next)
	case err != nil && !errors.Is(err, ErrIndexFull) && !errors.Is(err, ErrInvalidOffset):
		t.Fatalf("MaybeAppend(%+v) = %v", next, err)
	}
	path := ix.Path()
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	re, err := OpenTimeIndex(path, ix.BaseOffset(), 1200)
	if err != nil {
		t.Fatal(err)
	}
	defer re.Close()
	if got := timeEntries(re); !slices.Equal(got, entries) {
		t.Fatalf("reopened entries %v, want %v", got, entries)
	}
}
