package net

import (
	"bytes"
	"context"
	"encoding/binary"
	"io"
	stdnet "net"
	"os"
	"path/filepath"
	"testing"

	"github.com/varve/varve/pagecache"
)

// BenchmarkParseRequestHeader measures header parsing (kmsg lookups are
// precomputed, so this allocates only the client id string).
func BenchmarkParseRequestHeader(b *testing.B) {
	frame := append(AppendRequestHeader(nil, RequestHeader{Key: 1, Version: 12, CorrelationID: 9, ClientID: "consumer-1", Flexible: true}), make([]byte, 100)...)
	b.SetBytes(int64(len(frame)))
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := ParseRequestHeader(frame); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFrameReader measures framing alone over an in-memory stream of
// 100-byte and 64 KiB frames.
func BenchmarkFrameReader(b *testing.B) {
	for _, size := range []int{100, 64 << 10} {
		b.Run(byteSize(size), func(b *testing.B) {
			one := sizePrefixed(make([]byte, size))
			stream := bytes.Repeat(one, 64)
			b.SetBytes(int64(len(one)))
			b.ReportAllocs()
			r := bytes.NewReader(stream)
			fr := NewFrameReader(r, DefaultSocketRequestMaxBytes, 4096)
			for b.Loop() {
				if _, err := fr.ReadFrame(); err == io.EOF {
					r.Reset(stream)
					fr = NewFrameReader(r, DefaultSocketRequestMaxBytes, 4096)
				} else if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func byteSize(n int) string {
	if n >= 1<<10 {
		return string(rune('0'+n>>10/10%10)) + string(rune('0'+n>>10%10)) + "KiB"
	}
	return "100B"
}

// BenchmarkPingPong is one connection doing request/response round trips on
// loopback: 100-byte requests answered with 100 bytes, and with a 64 KiB
// file region (sendfile). It measures latency-bound throughput of one
// connection; experiments/reactor measures many connections.
func BenchmarkPingPong(b *testing.B) {
	f := benchFile(b, 64<<10)
	for _, d := range designs {
		for _, resp := range []string{"bytes100", "region64KiB"} {
			b.Run(d.name+"/"+resp, func(b *testing.B) {
				benchPingPong(b, d, resp, f)
			})
		}
	}
}

func benchPingPong(b *testing.B, d design, resp string, f *os.File) {
	small := make([]byte, 100)
	h := HandlerFunc(func(req *Request, respond func(Response)) {
		if resp == "bytes100" {
			respond(Response{Parts: []Part{{Bytes: small}}})
			return
		}
		respond(Response{Parts: []Part{{Region: &pagecache.Region{File: f, Len: 64 << 10}}}})
	})
	srv, err := d.new(Config{}, h)
	if err != nil {
		b.Fatal(err)
	}
	respLen := 4 + 4 + 100
	if resp != "bytes100" {
		respLen = 4 + 4 + 64<<10
	}
	pingPong(b, srv, respLen)
}

// pingPong runs b.N round trips of a 100-byte request on one connection
// to srv, whose responses are respLen bytes with their size prefix.
func pingPong(b *testing.B, srv Server, respLen int) {
	ln, err := stdnet.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	go srv.Serve(ln)
	defer srv.Shutdown(context.Background())
	c, err := stdnet.Dial("tcp", ln.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	req := frame(produceV3(1), make([]byte, 100))
	buf := make([]byte, respLen)
	b.SetBytes(int64(len(req) + respLen))
	for b.Loop() {
		if _, err := c.Write(req); err != nil {
			b.Fatal(err)
		}
		if _, err := io.ReadFull(c, buf); err != nil {
			b.Fatal(err)
		}
		if binary.BigEndian.Uint32(buf) != uint32(respLen-4) {
			b.Fatal("bad response size")
		}
	}
}

// BenchmarkMemoryPool is the cost of the memory pool per request: one
// connection's round trips through the Reactor without a pool and with a
// bounded one (a grant after the size prefix, a release after the
// response). Compare the two ns/op of one run.
func BenchmarkMemoryPool(b *testing.B) {
	small := make([]byte, 100)
	h := HandlerFunc(func(req *Request, respond func(Response)) {
		respond(Response{Parts: []Part{{Bytes: small}}})
	})
	for _, pooled := range []bool{false, true} {
		name := "nopool"
		if pooled {
			name = "pool"
		}
		b.Run(name, func(b *testing.B) {
			r, err := NewReactor(Config{QueuedMaxRequestBytes: DefaultSocketRequestMaxBytes}, h)
			if err != nil {
				b.Fatal(err)
			}
			if !pooled {
				r.pool = nil
			}
			pingPong(b, r, 4+4+100)
			if st := r.Stats(); pooled && (st.MemoryPoolUsed != 0 || st.MemoryPoolCapacity == 0) {
				b.Fatalf("pool used %d of %d after the run", st.MemoryPoolUsed, st.MemoryPoolCapacity)
			}
		})
	}
}

// BenchmarkMemoryPoolGrant is the pool's own work per request, with
// nothing else: a grant and a release, uncontended.
func BenchmarkMemoryPoolGrant(b *testing.B) {
	p := newMemoryPool(DefaultSocketRequestMaxBytes)
	b.ReportAllocs()
	for b.Loop() {
		if p.tryAcquire(100, nil) != nil {
			b.Fatal("refused")
		}
		p.release(100)
	}
}

func benchFile(b *testing.B, n int) *os.File {
	path := filepath.Join(b.TempDir(), "region")
	if err := os.WriteFile(path, make([]byte, n), 0o644); err != nil {
		b.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { f.Close() })
	return f
}
