package pagecache

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
	"testing/iotest"
)

func newMmap(t *testing.T, f *os.File) *MmapReader {
	t.Helper()
	m, err := NewMmapReader(f)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

// The mmap read path must deliver the same bytes as sendfile.
func TestMmapWriteRangeTCP(t *testing.T) {
	data := randomBytes(800, 3<<20+11)
	m := newMmap(t, writeFile(t, data))
	client, server := tcpPair(t)
	got := drain(server)
	n, err := m.WriteRange(client, 4097, int64(len(data))-4097)
	client.Close()
	if err != nil || n != int64(len(data))-4097 {
		t.Fatalf("WriteRange = %d, %v", n, err)
	}
	if !bytes.Equal(<-got, data[4097:]) {
		t.Fatal("bytes differ")
	}
	var buf bytes.Buffer
	if n, err := m.WriteTo(&buf); n != int64(len(data)) || err != nil || !bytes.Equal(buf.Bytes(), data) {
		t.Fatalf("WriteTo = %d, %v", n, err)
	}
}

func TestMmapReaderAtContract(t *testing.T) {
	data := randomBytes(801, 100000)
	m := newMmap(t, writeFile(t, data))
	if err := iotest.TestReader(io.NewSectionReader(m, 0, m.Len()), data); err != nil {
		t.Fatal(err)
	}
	if err := m.Advise(Sequential); err != nil {
		t.Fatal(err)
	}
}

func TestMmapEmptyFileAndPastEnd(t *testing.T) {
	m := newMmap(t, writeFile(t, nil))
	if m.Len() != 0 {
		t.Fatal("empty file mapped with length")
	}
	var buf bytes.Buffer
	if n, err := m.WriteRange(&buf, 0, 0); n != 0 || err != nil {
		t.Fatalf("empty WriteRange = %d, %v", n, err)
	}
	if _, err := m.WriteRange(&buf, 0, 1); !errors.Is(err, ErrTruncated) {
		t.Fatalf("WriteRange past end = %v", err)
	}
	if n, err := m.ReadAt(make([]byte, 1), 0); n != 0 || err != io.EOF {
		t.Fatalf("ReadAt = %d, %v", n, err)
	}
}

// A segment truncated while a reader has it mapped (Kafka truncates
// followers' logs) must yield an error, not kill the broker with SIGBUS.
func TestMmapTruncatedUnderMapping(t *testing.T) {
	data := randomBytes(802, 64<<10)
	path := filepath.Join(t.TempDir(), "seg.log")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	m := newMmap(t, f)
	f.Close() // the mapping keeps the file
	if err := os.Truncate(path, 4096); err != nil {
		t.Fatal(err)
	}
	p := make([]byte, 8192)
	if n, err := m.ReadAt(p, 0); !errors.Is(err, ErrTruncated) {
		t.Fatalf("ReadAt over truncated pages = %d, %v; want ErrTruncated", n, err)
	}
	if _, err := m.ReadAt(p[:4096], 0); err != nil || !bytes.Equal(p[:4096], data[:4096]) {
		t.Fatalf("ReadAt of surviving page: %v", err)
	}
	client, server := tcpPair(t)
	got := drain(server)
	n, err := m.WriteRange(client, 0, int64(len(data)))
	client.Close()
	<-got
	if err == nil {
		t.Fatalf("WriteRange over truncated pages wrote %d bytes without error", n)
	}
}

func TestMmapClosed(t *testing.T) {
	m := newMmap(t, writeFile(t, randomBytes(803, 10)))
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if err := m.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := m.ReadAt(make([]byte, 1), 0); !errors.Is(err, ErrReaderClosed) {
		t.Fatalf("ReadAt after Close: %v", err)
	}
	if _, err := m.WriteTo(io.Discard); !errors.Is(err, ErrReaderClosed) {
		t.Fatalf("WriteTo after Close: %v", err)
	}
}
