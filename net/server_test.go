package net

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	stdnet "net"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Kafka: RequestHeader v1/v2 and ResponseHeader v0/v1 (KIP-482). The handler
// sees the parsed header and body; net adds the size and response header,
// with the tagged-field byte only for flexible versions, never for
// ApiVersions.
func TestRoundTrip(t *testing.T) {
	cases := []struct {
		name    string
		hdr     RequestHeader
		tagByte bool
	}{
		{"produce v3 header v1", RequestHeader{Key: 0, Version: 3, CorrelationID: 7, ClientID: "c1"}, false},
		{"metadata v9 header v2", RequestHeader{Key: 3, Version: 9, CorrelationID: 8, ClientID: "c2", Flexible: true}, true},
		{"apiversions v3 response header v0", RequestHeader{Key: 18, Version: 3, CorrelationID: 9, ClientID: "c3", Flexible: true}, false},
		{"apiversions v0", RequestHeader{Key: 18, Version: 0, CorrelationID: 10}, false},
	}
	forEachDesign(t, func(t *testing.T, d design) {
		var mu sync.Mutex
		var got []Request
		h := HandlerFunc(func(req *Request, respond func(Response)) {
			mu.Lock()
			got = append(got, *req)
			mu.Unlock()
			echo(req, respond)
		})
		s := start(t, d, Config{}, h)
		c := s.dial(t)
		for i, tc := range cases {
			body := []byte("body-" + tc.name)
			send(t, c, tc.hdr, body)
			corr, resp := readResponse(t, c, tc.tagByte)
			if corr != tc.hdr.CorrelationID {
				t.Errorf("%s: correlation %d, want %d", tc.name, corr, tc.hdr.CorrelationID)
			}
			want := append(binary.BigEndian.AppendUint16(nil, uint16(tc.hdr.Key)), body...)
			if !bytes.Equal(resp, want) {
				t.Errorf("%s: body %q, want %q", tc.name, resp, want)
			}
			mu.Lock()
			r := got[i]
			mu.Unlock()
			if r.Key != tc.hdr.Key || r.Version != tc.hdr.Version || r.ClientID != tc.hdr.ClientID ||
				r.Flexible != tc.hdr.Flexible || !bytes.Equal(r.Body, body) || r.Received.IsZero() || r.Conn.ID == 0 {
				t.Errorf("%s: handler saw %+v", tc.name, r)
			}
		}
		st := s.srv.Stats()
		if st.Requests != int64(len(cases)) || st.RequestsByKey[18] != 2 || st.RequestsByKey[3] != 1 {
			t.Errorf("stats: requests %d by key %v", st.Requests, st.RequestsByKey)
		}
		if st.BytesIn == 0 || st.BytesOut == 0 || st.Connections != 1 {
			t.Errorf("stats: %+v", st)
		}
	})
}

// Kafka: one request in flight per connection (the processor mutes the
// channel after a receive, unmutes after the send), so pipelined requests are
// answered in order even though the handler completes requests of different
// connections out of order.
func TestPipelinedInOrder(t *testing.T) {
	forEachDesign(t, func(t *testing.T, d design) {
		const conns, perConn = 4, 25
		var mu sync.Mutex
		inflight := map[uint64]int{}
		var violations atomic.Int32
		// finished counts the completing goroutines. Not a WaitGroup: its
		// Add from zero would run on a handler goroutine, ordered before
		// the test's Wait only through the socket, which the race
		// detector does not see as synchronisation (it reports a
		// WaitGroup reused before Wait returned).
		finished := make(chan struct{}, conns*perConn)
		h := HandlerFunc(func(req *Request, respond func(Response)) {
			mu.Lock()
			inflight[req.Conn.ID]++
			if inflight[req.Conn.ID] > 1 {
				violations.Add(1)
			}
			mu.Unlock()
			go func() { // complete later, from another goroutine, in random order
				defer func() { finished <- struct{}{} }()
				time.Sleep(time.Duration(rand.IntN(3000)) * time.Microsecond)
				mu.Lock()
				inflight[req.Conn.ID]--
				mu.Unlock()
				echo(req, respond)
			}()
		})
		s := start(t, d, Config{}, h)
		var cwg sync.WaitGroup
		for ci := range conns {
			c := s.dial(t)
			var all []byte
			for i := range perConn {
				all = append(all, frame(produceV3(int32(ci*1000+i)), []byte{byte(i)})...)
			}
			if _, err := c.Write(all); err != nil { // all pipelined at once
				t.Fatal(err)
			}
			cwg.Add(1)
			go func() {
				defer cwg.Done()
				for i := range perConn {
					corr, body := readResponse(t, c, false)
					if corr != int32(ci*1000+i) || body[2] != byte(i) {
						t.Errorf("conn %d: response %d has correlation %d", ci, i, corr)
						return
					}
				}
			}()
		}
		cwg.Wait()
		for range conns * perConn {
			<-finished
		}
		if v := violations.Load(); v > 0 {
			t.Errorf("%d times a connection had two requests in flight", v)
		}
	})
}

// Kafka: acks=0 Produce gets no response (NoOpResponse unmutes the channel).
func TestNoResponse(t *testing.T) {
	forEachDesign(t, func(t *testing.T, d design) {
		h := HandlerFunc(func(req *Request, respond func(Response)) {
			if req.CorrelationID%2 == 1 {
				respond(Response{NoResponse: true})
				return
			}
			echo(req, respond)
		})
		s := start(t, d, Config{}, h)
		c := s.dial(t)
		var all []byte
		for i := 1; i <= 6; i++ {
			all = append(all, frame(produceV3(int32(i)), nil)...)
		}
		c.Write(all)
		for _, want := range []int32{2, 4, 6} {
			if corr, _ := readResponse(t, c, false); corr != want {
				t.Fatalf("got correlation %d, want %d", corr, want)
			}
		}
	})
}

// A response with Close is written and then the connection closes (Kafka's
// CloseConnectionResponse closes without writing).
func TestCloseResponse(t *testing.T) {
	forEachDesign(t, func(t *testing.T, d design) {
		h := HandlerFunc(func(req *Request, respond func(Response)) {
			switch req.CorrelationID {
			case 1:
				respond(Response{Parts: []Part{{Bytes: []byte("bye")}}, Close: true})
			default:
				respond(Response{Close: true})
			}
		})
		s := start(t, d, Config{}, h)
		c := s.dial(t)
		send(t, c, produceV3(1), nil)
		if _, body := readResponse(t, c, false); string(body) != "bye" {
			t.Errorf("body %q", body)
		}
		expectClosed(t, c)
		c2 := s.dial(t)
		send(t, c2, produceV3(2), nil)
		expectClosed(t, c2)
	})
}

// respond is honoured once; later calls are ignored and counted.
func TestDuplicateRespond(t *testing.T) {
	forEachDesign(t, func(t *testing.T, d design) {
		h := HandlerFunc(func(req *Request, respond func(Response)) {
			echo(req, respond)
			respond(Response{Parts: []Part{{Bytes: []byte("second")}}})
		})
		s := start(t, d, Config{}, h)
		c := s.dial(t)
		send(t, c, produceV3(1), []byte("a"))
		send(t, c, produceV3(2), []byte("b"))
		for _, want := range []int32{1, 2} {
			if corr, body := readResponse(t, c, false); corr != want || string(body[2:]) != string(rune('a'+want-1)) {
				t.Fatalf("got %d %q", corr, body)
			}
		}
		if n := s.srv.Stats().DuplicateResponds; n != 2 {
			t.Errorf("DuplicateResponds = %d, want 2", n)
		}
	})
}

// Kafka: an API key the broker does not know reaches KafkaApis, which
// decides (Kafka closes the connection); net itself must not fail.
func TestUnknownKey(t *testing.T) {
	forEachDesign(t, func(t *testing.T, d design) {
		h := HandlerFunc(func(req *Request, respond func(Response)) {
			if req.Key == 999 {
				respond(Response{Close: true})
				return
			}
			echo(req, respond)
		})
		s := start(t, d, Config{}, h)
		c := s.dial(t)
		send(t, c, RequestHeader{Key: -5, Version: 77, CorrelationID: 1}, []byte("x"))
		if corr, body := readResponse(t, c, false); corr != 1 || len(body) != 3 {
			t.Fatalf("key -5: %d %q", corr, body)
		}
		send(t, c, RequestHeader{Key: 999, Version: 0, CorrelationID: 2}, nil)
		expectClosed(t, c)
		if st := s.srv.Stats(); st.UnknownKeyRequests != 2 {
			t.Errorf("UnknownKeyRequests = %d", st.UnknownKeyRequests)
		}
	})
}

// Kafka: NetworkReceive rejects size < 0 or > socket.request.max.bytes with
// InvalidReceiveException and closes the connection; a header that does not
// parse closes it too; other connections are unaffected.
func TestBadInputClosesConnection(t *testing.T) {
	cases := []struct {
		name  string
		bytes []byte
		bad   bool // counted in BadFrames
	}{
		{"oversized", binary.BigEndian.AppendUint32(nil, 1025), true},
		{"max int32", binary.BigEndian.AppendUint32(nil, 0x7fffffff), true},
		{"negative", binary.BigEndian.AppendUint32(nil, 0xffffffff), true},
		{"http garbage", []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"), true},
		{"short header", append(binary.BigEndian.AppendUint32(nil, 3), 1, 2, 3), true},
		{"client id past end", append(binary.BigEndian.AppendUint32(nil, 10), 0, 0, 0, 3, 0, 0, 0, 1, 0, 50), true},
		{"truncated frame", append(binary.BigEndian.AppendUint32(nil, 100), make([]byte, 50)...), false},
	}
	forEachDesign(t, func(t *testing.T, d design) {
		var served atomic.Int32
		h := HandlerFunc(func(req *Request, respond func(Response)) {
			served.Add(1)
			echo(req, respond)
		})
		s := start(t, d, Config{SocketRequestMaxBytes: 1024}, h)
		good := s.dial(t)
		bad := 0
		for _, tc := range cases {
			c := s.dial(t)
			c.Write(tc.bytes)
			if tc.name == "truncated frame" {
				c.(interface{ CloseWrite() error }).CloseWrite()
			}
			expectClosed(t, c)
			if tc.bad {
				bad++
			}
			send(t, good, produceV3(1), []byte(tc.name)) // the server goes on serving others
			if _, body := readResponse(t, good, false); string(body[2:]) != tc.name {
				t.Fatalf("after %s: got %q", tc.name, body)
			}
		}
		if n := served.Load(); n != int32(len(cases)) {
			t.Errorf("handler served %d requests, want only the %d good ones", n, len(cases))
		}
		eventually(t, "BadFrames", func() bool { return s.srv.Stats().BadFrames == int64(bad) })
	})
}

// A frame of exactly socket.request.max.bytes is accepted.
func TestMaxSizeFrameAccepted(t *testing.T) {
	forEachDesign(t, func(t *testing.T, d design) {
		s := start(t, d, Config{SocketRequestMaxBytes: 1 << 20}, echo)
		c := s.dial(t)
		h := produceV3(1)
		body := bytes.Repeat([]byte{7}, 1<<20-len(AppendRequestHeader(nil, h)))
		send(t, c, h, body)
		if _, resp := readResponse(t, c, false); !bytes.Equal(resp[2:], body) {
			t.Fatal("echoed body differs")
		}
	})
}

// Kafka: connections.max.idle.ms closes connections without traffic; a
// connection waiting for a slow response is not idle.
func TestIdleTimeout(t *testing.T) {
	forEachDesign(t, func(t *testing.T, d design) {
		h := HandlerFunc(func(req *Request, respond func(Response)) {
			if req.CorrelationID == 2 {
				time.AfterFunc(700*time.Millisecond, func() { echo(req, respond) })
				return
			}
			echo(req, respond)
		})
		s := start(t, d, Config{ConnectionsMaxIdle: 200 * time.Millisecond}, h)
		idle := s.dial(t)
		send(t, idle, produceV3(1), nil)
		readResponse(t, idle, false)
		slow := s.dial(t)
		send(t, slow, produceV3(2), nil)
		t0 := time.Now()
		expectClosed(t, idle)
		if el := time.Since(t0); el > 2*time.Second {
			t.Errorf("idle connection closed after %v", el)
		}
		if corr, _ := readResponse(t, slow, false); corr != 2 {
			t.Errorf("slow response correlation %d", corr)
		}
		if n := s.srv.Stats().IdleConnectionsClosed; n < 1 {
			t.Errorf("IdleConnectionsClosed = %d", n)
		}
	})
}

// Kafka: the request channel is bounded by queued.max.requests; when it is
// full the processor stops reading (backpressure). The goroutine design
// blocks each connection on the channel instead.
func TestBackpressure(t *testing.T) {
	forEachPooledDesign(t, func(t *testing.T, d design) {
		release := make(chan struct{})
		var first sync.Once
		h := HandlerFunc(func(req *Request, respond func(Response)) {
			first.Do(func() { <-release })
			echo(req, respond)
		})
		cfg := Config{NumNetworkThreads: 1, NumIOThreads: 1, QueuedMaxRequests: 1}
		s := start(t, d, cfg, h)
		conns := []stdnet.Conn{s.dial(t), s.dial(t), s.dial(t), s.dial(t)}
		send(t, conns[0], produceV3(1), nil) // taken by the only handler, which blocks
		eventually(t, "handler busy", func() bool {
			st := s.srv.Stats()
			return st.Requests == 1 && st.RequestQueueSize == 0
		})
		send(t, conns[1], produceV3(2), nil) // fills the queue
		eventually(t, "queue full", func() bool { return s.srv.Stats().RequestQueueSize == 1 })
		send(t, conns[2], produceV3(3), nil) // cannot be queued
		eventually(t, "stall", func() bool { return s.srv.Stats().QueueFullStalls >= 1 })
		before := s.srv.Stats()
		send(t, conns[3], produceV3(4), nil)
		time.Sleep(200 * time.Millisecond)
		after := s.srv.Stats()
		if d.name == "reactor" {
			if !after.Processors[0].Stalled {
				t.Error("processor not reported stalled")
			}
			if after.BytesIn != before.BytesIn || after.Requests != 3 {
				t.Errorf("stalled processor kept reading: bytes in %d -> %d, requests %d",
					before.BytesIn, after.BytesIn, after.Requests)
			}
		} else if after.Requests != 4 || after.QueueFullStalls != 2 {
			t.Errorf("goroutine design: requests %d, stalls %d; want 4 and 2", after.Requests, after.QueueFullStalls)
		}
		if after.RequestQueueSize != 1 {
			t.Errorf("RequestQueueSize = %d, want 1", after.RequestQueueSize)
		}
		close(release)
		for i, c := range conns {
			if corr, _ := readResponse(t, c, false); corr != int32(i+1) {
				t.Errorf("connection %d: correlation %d", i, corr)
			}
		}
		if st := s.srv.Stats(); d.name == "reactor" && st.Processors[0].Stalled {
			t.Error("processor still stalled after the queue drained")
		}
	})
}
