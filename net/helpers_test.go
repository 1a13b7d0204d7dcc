package net

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	stdnet "net"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// design is one of the server designs; every server test runs on each.
type design struct {
	name string
	new  func(Config, Handler) (Server, error)
	// inline: requests are served on the connection's goroutine, with no
	// request channel (and so no queued.max.requests backpressure).
	inline bool
}

var designs = []design{
	{"reactor", func(c Config, h Handler) (Server, error) { return NewReactor(c, h) }, false},
	{"goroutine", func(c Config, h Handler) (Server, error) { return NewGoroutineServer(c, h) }, false},
	{"goroutine-inline", func(c Config, h Handler) (Server, error) {
		c.InlineHandlers = true
		return NewGoroutineServer(c, h)
	}, true},
}

// forEachPooledDesign runs f as a subtest per design that hands requests
// to a handler pool through the request channel.
func forEachPooledDesign(t *testing.T, f func(t *testing.T, d design)) {
	for _, d := range designs {
		if !d.inline {
			t.Run(d.name, func(t *testing.T) { f(t, d) })
		}
	}
}

// forEachDesign runs f as a subtest per design.
func forEachDesign(t *testing.T, f func(t *testing.T, d design)) {
	for _, d := range designs {
		t.Run(d.name, func(t *testing.T) { f(t, d) })
	}
}

// started is a running server on a loopback port.
type started struct {
	srv    Server
	addr   string
	served chan error
}

// start runs a server of design d on 127.0.0.1 and shuts it down (waiting
// for Serve to return) when the test ends.
func start(t *testing.T, d design, cfg Config, h Handler) *started {
	t.Helper()
	srv, err := d.new(cfg, h)
	if err != nil {
		t.Fatalf("new %s: %v", d.name, err)
	}
	ln, err := stdnet.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &started{srv: srv, addr: ln.Addr().String(), served: make(chan error, 1)}
	go func() { s.served <- srv.Serve(ln) }()
	t.Cleanup(func() { s.stop(t) })
	return s
}

// stop shuts the server down (idempotent) and checks Serve's result.
func (s *started) stop(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.srv.Shutdown(ctx); err != nil {
		t.Errorf("Shutdown: %v", err)
	}
	select {
	case err := <-s.served:
		if !errors.Is(err, ErrServerClosed) {
			t.Errorf("Serve returned %v, want ErrServerClosed", err)
		}
		s.served <- err // keep it for a second stop
	case <-time.After(10 * time.Second):
		t.Error("Serve did not return after Shutdown")
	}
}

// dial connects to the server.
func (s *started) dial(t *testing.T) stdnet.Conn {
	t.Helper()
	c, err := stdnet.Dial("tcp", s.addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// frame builds a request frame: size prefix, header, body.
func frame(h RequestHeader, body []byte) []byte {
	b := AppendRequestHeader(make([]byte, 4), h)
	b = append(b, body...)
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	return b
}

// send writes a request with a non-flexible key (Produce v3 unless given).
func send(t *testing.T, c stdnet.Conn, h RequestHeader, body []byte) {
	t.Helper()
	if _, err := c.Write(frame(h, body)); err != nil {
		t.Fatalf("write request %d: %v", h.CorrelationID, err)
	}
}

// produceV3 is a non-flexible request header (Produce v3: header v1).
func produceV3(corr int32) RequestHeader {
	return RequestHeader{Key: 0, Version: 3, CorrelationID: corr, ClientID: "test"}
}

// readResponse reads one response frame and splits off the correlation id;
// tagByte says whether a response header v1 tag byte is expected.
func readResponse(t *testing.T, c stdnet.Conn, tagByte bool) (int32, []byte) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(20 * time.Second))
	var hdr [8]byte
	if _, err := io.ReadFull(c, hdr[:]); err != nil {
		t.Fatalf("read response header: %v", err)
	}
	size := int(binary.BigEndian.Uint32(hdr[:4]))
	corr := int32(binary.BigEndian.Uint32(hdr[4:]))
	rest := make([]byte, size-4)
	if _, err := io.ReadFull(c, rest); err != nil {
		t.Fatalf("read response body (%d bytes): %v", size-4, err)
	}
	if tagByte {
		if len(rest) == 0 || rest[0] != 0 {
			t.Fatalf("response header v1: want tag byte 0, got %x", rest[:min(1, len(rest))])
		}
		rest = rest[1:]
	}
	return corr, rest
}

// expectClosed checks that the server closes c without sending anything.
func expectClosed(t *testing.T, c stdnet.Conn) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	b := make([]byte, 1)
	n, err := c.Read(b)
	if err == nil || n != 0 {
		t.Fatalf("connection still open: read %d bytes, err %v", n, err)
	}
	var ne stdnet.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("connection not closed within 10s")
	}
}

// echo answers every request with its body, prefixed by the key.
var echo = HandlerFunc(func(req *Request, respond func(Response)) {
	var k [2]byte
	binary.BigEndian.PutUint16(k[:], uint16(req.Key))
	respond(Response{Parts: []Part{{Bytes: k[:]}, {Bytes: req.Body}}})
})

// eventually polls cond for up to 10 s.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
