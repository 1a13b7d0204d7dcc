package index

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"
)

// openOffset creates a new offset index in a fresh directory and closes it at
// the end of the test.
func openOffset(t testing.TB, base int64, maxIndexSize int) *OffsetIndex {
	t.Helper()
	ix, err := OpenOffsetIndex(filepath.Join(t.TempDir(), "00000000000000000000.index"), base, maxIndexSize)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ix.Close() })
	return ix
}

func openTime(t testing.TB, base int64, maxIndexSize int) *TimeIndex {
	t.Helper()
	ix, err := OpenTimeIndex(filepath.Join(t.TempDir(), "00000000000000000000.timeindex"), base, maxIndexSize)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ix.Close() })
	return ix
}

// encodeOffsetEntries is an independent encoder of Kafka's .index layout:
// relative offset int32 BE, position int32 BE.
func encodeOffsetEntries(base int64, entries []OffsetPosition) []byte {
	b := make([]byte, 0, len(entries)*8)
	for _, e := range entries {
		b = binary.BigEndian.AppendUint32(b, uint32(e.Offset-base))
		b = binary.BigEndian.AppendUint32(b, uint32(e.Position))
	}
	return b
}

// encodeTimeEntries encodes Kafka's .timeindex layout: timestamp int64 BE,
// relative offset int32 BE.
func encodeTimeEntries(base int64, entries []TimestampOffset) []byte {
	b := make([]byte, 0, len(entries)*12)
	for _, e := range entries {
		b = binary.BigEndian.AppendUint64(b, uint64(e.Timestamp))
		b = binary.BigEndian.AppendUint32(b, uint32(e.Offset-base))
	}
	return b
}

// writeFile writes content to a new file in a fresh directory.
func writeFile(t testing.TB, name string, content []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, content, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func fileSize(t testing.TB, path string) int64 {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st.Size()
}

// offsetEntries reads every entry through Entry.
func offsetEntries(ix *OffsetIndex) []OffsetPosition {
	out := make([]OffsetPosition, ix.Entries())
	for i := range out {
		out[i] = ix.Entry(i)
	}
	return out
}

func timeEntries(ix *TimeIndex) []TimestampOffset {
	out := make([]TimestampOffset, ix.Entries())
	for i := range out {
		out[i] = ix.Entry(i)
	}
	return out
}

// linearOffsetFloor is the brute-force reference for OffsetIndex.Lookup.
func linearOffsetFloor(base int64, entries []OffsetPosition, target int64) OffsetPosition {
	best := OffsetPosition{Offset: base}
	for _, e := range entries {
		if e.Offset <= target {
			best = e
		}
	}
	return best
}

// linearTimeFloor is the brute-force reference for TimeIndex.Lookup.
func linearTimeFloor(base int64, entries []TimestampOffset, target int64) TimestampOffset {
	best := TimestampOffset{Timestamp: NoTimestamp, Offset: base}
	for _, e := range entries {
		if e.Timestamp <= target {
			best = e
		}
	}
	return best
}

// appendOffsets appends n entries at offsets base+step*(i+1) and positions
// 100*(i+1) and returns them.
func appendOffsets(t testing.TB, ix *OffsetIndex, n int, step int64) []OffsetPosition {
	t.Helper()
	out := make([]OffsetPosition, 0, n)
	for i := range n {
		e := OffsetPosition{Offset: ix.BaseOffset() + step*int64(i+1), Position: 100 * int64(i+1)}
		if err := ix.Append(e.Offset, e.Position); err != nil {
			t.Fatalf("append %d: %v", i, err)
		}
		out = append(out, e)
	}
	return out
}

// appendTimes appends n entries with timestamps 1000+10*i at offsets
// base+step*(i+1) and returns them.
func appendTimes(t testing.TB, ix *TimeIndex, n int, step int64) []TimestampOffset {
	t.Helper()
	out := make([]TimestampOffset, 0, n)
	for i := range n {
		e := TimestampOffset{Timestamp: 1000 + 10*int64(i), Offset: ix.BaseOffset() + step*int64(i+1)}
		if err := ix.MaybeAppend(e.Timestamp, e.Offset, false); err != nil {
			t.Fatalf("append %d: %v", i, err)
		}
		out = append(out, e)
	}
	return out
}
