package net

import (
	"bytes"
	"crypto/sha256"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/varve/varve/pagecache"
)

// writeRandomFile creates a file of n pseudo-random bytes.
func writeRandomFile(t *testing.T, n int) (*os.File, []byte) {
	t.Helper()
	data := make([]byte, n)
	rng := rand.NewChaCha8([32]byte{1, 2, 3})
	rng.Read(data)
	path := filepath.Join(t.TempDir(), "segment.log")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f, data
}

// Kafka: a Fetch response interleaves header bytes with FileRecords sent by
// transferTo (sendfile); the client sees one contiguous response.
func TestRegionInterleaved(t *testing.T) {
	f, data := writeRandomFile(t, 1<<20)
	forEachDesign(t, func(t *testing.T, d design) {
		h := HandlerFunc(func(req *Request, respond func(Response)) {
			respond(Response{Parts: []Part{
				{Bytes: []byte("head")},
				{Region: &pagecache.Region{File: f, Off: 100, Len: 1000}},
				{Bytes: []byte("mid")},
				{Bytes: nil},
				{Region: &pagecache.Region{File: f, Off: 0, Len: 0}},
				{Region: &pagecache.Region{File: f, Off: 5000, Len: 300000}},
				{Bytes: []byte("tail")},
			}})
		})
		s := start(t, d, Config{}, h)
		c := s.dial(t)
		for i := range 3 {
			send(t, c, RequestHeader{Key: 1, Version: 12, CorrelationID: int32(i), Flexible: true}, nil)
			corr, body := readResponse(t, c, true)
			want := concat([]byte("head"), data[100:1100], []byte("mid"), data[5000:305000], []byte("tail"))
			if corr != int32(i) || !bytes.Equal(body, want) {
				t.Fatalf("response %d: %d bytes differ from the %d expected", i, len(body), len(want))
			}
		}
	})
}

func concat(bs ...[]byte) []byte { return bytes.Join(bs, nil) }

// A 64 MiB region to a slow reader: the socket fills, the send resumes on
// each writable event at the next unsent byte, and the bytes arrive intact.
// The processor must keep serving other connections meanwhile.
func TestRegionLargeSlowReader(t *testing.T) {
	const size = 64 << 20
	f, data := writeRandomFile(t, size+4096)
	want := sha256.Sum256(data[4096:])
	forEachDesign(t, func(t *testing.T, d design) {
		doneErr := make(chan error, 1)
		h := HandlerFunc(func(req *Request, respond func(Response)) {
			if req.CorrelationID != 1 {
				echo(req, respond)
				return
			}
			region := &pagecache.Region{File: f, Off: 4096, Len: size}
			respond(Response{Parts: []Part{{Region: region}}, Done: func(err error) { doneErr <- err }})
		})
		cfg := Config{NumNetworkThreads: 1, SocketSendBufferBytes: 64 << 10}
		s := start(t, d, cfg, h)
		slow, other := s.dial(t), s.dial(t)
		send(t, slow, produceV3(1), nil)
		time.Sleep(100 * time.Millisecond) // let the socket buffers fill

		send(t, other, produceV3(2), []byte("meanwhile"))
		if _, body := readResponse(t, other, false); string(body[2:]) != "meanwhile" {
			t.Fatalf("other connection starved: %q", body)
		}

		slow.SetReadDeadline(time.Now().Add(60 * time.Second))
		var hdr [8]byte
		if _, err := io.ReadFull(slow, hdr[:]); err != nil {
			t.Fatal(err)
		}
		hash := sha256.New()
		buf := make([]byte, 256<<10)
		for got := 0; got < size; {
			n, err := slow.Read(buf[:min(len(buf), size-got)])
			hash.Write(buf[:n])
			got += n
			if err != nil {
				t.Fatalf("after %d bytes: %v", got, err)
			}
			if got < 4<<20 {
				time.Sleep(time.Millisecond) // slow at first: many partial writes
			}
		}
		if !bytes.Equal(hash.Sum(nil), want[:]) {
			t.Fatal("64 MiB region arrived corrupted")
		}
		if err := <-doneErr; err != nil {
			t.Errorf("Done(%v)", err)
		}
		if n := s.srv.Stats().SendWaits; d.name == "reactor" && n < 10 {
			t.Errorf("only %d partial writes resumed on EPOLLOUT; the test did not exercise resumption", n)
		}
		send(t, slow, produceV3(3), []byte("after")) // unmuted after the send completed
		if corr, _ := readResponse(t, slow, false); corr != 3 {
			t.Errorf("after the region: correlation %d", corr)
		}
	})
}

// Kafka: FileRecords.writeTo throws "truncated during write" when the file
// shrank, and the connection is closed.
func TestRegionTruncatedClosesConnection(t *testing.T) {
	forEachDesign(t, func(t *testing.T, d design) {
		f, _ := writeRandomFile(t, 1000)
		doneErr := make(chan error, 1)
		h := HandlerFunc(func(req *Request, respond func(Response)) {
			region := &pagecache.Region{File: f, Off: 500, Len: 1000} // past the end of the file
			respond(Response{Parts: []Part{{Region: region}}, Done: func(err error) { doneErr <- err }})
		})
		s := start(t, d, Config{}, h)
		c := s.dial(t)
		send(t, c, produceV3(1), nil)
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		got, err := io.ReadAll(c)
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		if len(got) != 4+4+500 {
			t.Errorf("got %d bytes before the close, want the 508 that exist", len(got))
		}
		if err := <-doneErr; err == nil {
			t.Error("Done(nil) for a truncated region")
		}
	})
}

// A region followed only by empty byte parts (as a Fetch response whose
// last partition has records ends, in the non-flexible versions) must
// complete the response, not look for another region.
func TestRegionFollowedByEmptyBytes(t *testing.T) {
	f, data := writeRandomFile(t, 4096)
	forEachDesign(t, func(t *testing.T, d design) {
		h := HandlerFunc(func(req *Request, respond func(Response)) {
			respond(Response{Parts: []Part{
				{Bytes: []byte("head")},
				{Region: &pagecache.Region{File: f, Off: 10, Len: 100}},
				{Bytes: []byte{}},
				{Bytes: nil},
			}})
		})
		s := start(t, d, Config{}, h)
		c := s.dial(t)
		send(t, c, RequestHeader{Key: 1, Version: 4, CorrelationID: 1}, nil)
		_, body := readResponse(t, c, false)
		if want := concat([]byte("head"), data[10:110]); !bytes.Equal(body, want) {
			t.Fatalf("got %d bytes, want %d", len(body), len(want))
		}
	})
}
