package net

import (
	"encoding/binary"
	stdnet "net"
	"runtime"
	"runtime/debug"
	"sync"
	"testing"
	"time"
)

// setMemoryLimit sets the Go memory limit for the test, restoring the
// previous one when it ends, and returns the previous one.
func setMemoryLimit(t *testing.T, n int64) int64 {
	old := debug.SetMemoryLimit(n)
	t.Cleanup(func() { debug.SetMemoryLimit(old) })
	return old
}

// heapInuse is HeapInuse after a full collection.
func heapInuse() int64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapInuse)
}

// attack opens a connection that announces size bytes and sends part of
// them, never the rest. The writes run in a goroutine (they block once the
// socket buffers fill, since the server does not read a connection it has
// no memory for); closing the returned connection ends it.
func attack(t *testing.T, s *started, size int32, part []byte, wg *sync.WaitGroup) stdnet.Conn {
	t.Helper()
	c := s.dial(t)
	wg.Add(1)
	go func() {
		defer wg.Done()
		c.Write(binary.BigEndian.AppendUint32(nil, uint32(size)))
		c.Write(part) // fails when the test closes c
	}()
	return c
}

// Kafka: SocketServer's MemoryPool (queued.max.request.bytes). The probe
// that took a broker to the OOM killer, as a test: connections each
// announce a frame near socket.request.max.bytes and send most of it,
// never finishing. The bytes granted to them stay within the pool, so do
// the heap's, and once the attackers go a well-formed request is answered.
func TestMemoryPoolBoundsSlowFrames(t *testing.T) {
	forEachDesign(t, func(t *testing.T, d design) {
		const maxReq, pool, attackers = 8 << 20, 8 << 20, 12
		const announce, sent = maxReq - 1024, 6 << 20
		cfg := Config{SocketRequestMaxBytes: maxReq, QueuedMaxRequestBytes: pool, NumNetworkThreads: 2}
		s := start(t, d, cfg, echo)
		part := make([]byte, sent)
		base := heapInuse()

		var wg sync.WaitGroup
		var conns []stdnet.Conn
		for range attackers {
			conns = append(conns, attack(t, s, announce, part, &wg))
		}
		// One attacker is granted its frame and reads what it sent; the
		// others wait for memory with their bodies unread.
		eventually(t, "attackers to fill the pool", func() bool {
			st := s.srv.Stats()
			return st.MemoryPoolWaiting == attackers-1 && st.BytesIn >= attackers*4+sent
		})
		st := s.srv.Stats()
		if st.MemoryPoolUsed != announce || st.MemoryPoolCapacity != pool {
			t.Errorf("pool used %d of %d, want %d", st.MemoryPoolUsed, st.MemoryPoolCapacity, announce)
		}
		// Without the pool every attacker holds ~8 MiB: ~96 MiB in all.
		if grown := heapInuse() - base; grown > pool+16<<20 {
			t.Errorf("heap grew by %d MiB with a pool of %d MiB", grown>>20, pool>>20)
		}

		victim := s.dial(t)
		send(t, victim, produceV3(42), []byte("still served"))
		for _, c := range conns {
			c.Close()
		}
		wg.Wait()
		if corr, body := readResponse(t, victim, false); corr != 42 || string(body[2:]) != "still served" {
			t.Fatalf("after the attackers left: correlation %d body %q", corr, body)
		}
		eventually(t, "the pool to empty", func() bool {
			st := s.srv.Stats()
			return st.MemoryPoolUsed == 0 && st.MemoryPoolWaiting == 0
		})
	})
}

// Kafka: a channel is muted while the memory pool cannot grant its
// request, and unmuted when memory is released. A complete request that
// does not fit is not read past its size prefix until the request holding
// the memory is answered; then it is served.
func TestMemoryPoolMutesUntilReleased(t *testing.T) {
	forEachDesign(t, func(t *testing.T, d design) {
		const pool = 64 << 10
		release := make(chan struct{})
		var mu sync.Mutex
		var seen []int32
		h := HandlerFunc(func(req *Request, respond func(Response)) {
			mu.Lock()
			seen = append(seen, req.CorrelationID)
			mu.Unlock()
			if req.CorrelationID == 1 {
				go func() { <-release; echo(req, respond) }()
				return
			}
			echo(req, respond)
		})
		s := start(t, d, Config{SocketRequestMaxBytes: pool, QueuedMaxRequestBytes: pool}, h)
		holder := s.dial(t)
		send(t, holder, produceV3(1), make([]byte, 60<<10)) // held in flight: 60 KiB of 64
		eventually(t, "the first request to reach the handler", func() bool {
			mu.Lock()
			defer mu.Unlock()
			return len(seen) == 1
		})
		before := s.srv.Stats().BytesIn

		waiter := s.dial(t)
		send(t, waiter, produceV3(2), make([]byte, 10<<10))
		eventually(t, "the second request to wait for memory", func() bool {
			return s.srv.Stats().MemoryPoolWaiting == 1
		})
		time.Sleep(100 * time.Millisecond)
		mu.Lock()
		n := len(seen)
		mu.Unlock()
		if n != 1 {
			t.Fatalf("the handler saw %d requests while the pool was exhausted", n)
		}
		if got := s.srv.Stats().BytesIn - before; got != sizePrefixLen {
			t.Errorf("read %d bytes of the waiting connection, want only its %d-byte size prefix", got, sizePrefixLen)
		}

		close(release)
		if corr, _ := readResponse(t, holder, false); corr != 1 {
			t.Fatalf("holder: correlation %d", corr)
		}
		if corr, body := readResponse(t, waiter, false); corr != 2 || len(body) != 2+10<<10 {
			t.Fatalf("waiter: correlation %d, %d bytes", corr, len(body))
		}
		eventually(t, "the pool to empty", func() bool { return s.srv.Stats().MemoryPoolUsed == 0 })
		if st := s.srv.Stats(); st.MemoryPoolWaits < 1 {
			t.Errorf("MemoryPoolWaits %d, want at least 1", st.MemoryPoolWaits)
		}
	})
}

// Bytes go back to the pool exactly once on every path that ends a
// request: answered, answered with NoResponse or Close, connection closed
// mid-frame, connection closed while its request is served, server shut
// down. A double return would show as a negative figure, a missing one as
// bytes left in use.
func TestMemoryPoolReturnedOnEveryPath(t *testing.T) {
	forEachDesign(t, func(t *testing.T, d design) {
		gate := make(chan struct{})
		h := HandlerFunc(func(req *Request, respond func(Response)) {
			switch req.CorrelationID {
			case 1:
				respond(Response{NoResponse: true})
			case 2:
				respond(Response{Close: true})
			case 3: // answered after its connection is gone
				go func() { <-gate; echo(req, respond) }()
			default:
				echo(req, respond)
			}
		})
		s := start(t, d, Config{SocketRequestMaxBytes: 1 << 20, QueuedMaxRequestBytes: 1 << 20}, h)
		c := s.dial(t)
		send(t, c, produceV3(1), make([]byte, 1000))
		send(t, c, produceV3(4), make([]byte, 1000))
		readResponse(t, c, false)
		send(t, c, produceV3(2), make([]byte, 1000))
		expectClosed(t, c)

		mid := s.dial(t) // closes in the middle of a frame
		mid.Write(append(binary.BigEndian.AppendUint32(nil, 5000), make([]byte, 100)...))
		eventually(t, "the partial frame to be granted", func() bool { return s.srv.Stats().MemoryPoolUsed == 5000 })
		mid.Close()
		eventually(t, "the partial frame's bytes to return", func() bool { return s.srv.Stats().MemoryPoolUsed == 0 })

		gone := s.dial(t)
		send(t, gone, produceV3(3), make([]byte, 2000))
		eventually(t, "the request to be held", func() bool { return s.srv.Stats().Requests == 4 })
		gone.Close()
		time.Sleep(20 * time.Millisecond)
		if used := s.srv.Stats().MemoryPoolUsed; used <= 0 {
			t.Errorf("pool used %d while a request is still being served", used)
		}
		close(gate)
		eventually(t, "the abandoned request's bytes to return", func() bool { return s.srv.Stats().MemoryPoolUsed == 0 })
	})
}

// Kafka: KafkaRequestHandler releases a request's buffer once handle
// returns, even when the response waits in a purgatory. A handler that
// calls ReleaseBody and answers later holds no pool memory meanwhile, so a
// parked request does not keep the next one from being read.
func TestReleaseBodyFreesPoolForParkedRequests(t *testing.T) {
	forEachDesign(t, func(t *testing.T, d design) {
		const pool = 64 << 10
		release := make(chan struct{})
		h := HandlerFunc(func(req *Request, respond func(Response)) {
			if req.CorrelationID == 1 {
				req.ReleaseBody() // decoded: parked without its bytes
				go func() { <-release; respond(Response{Parts: []Part{{Bytes: []byte{0, 0}}}}) }()
				return
			}
			echo(req, respond)
		})
		s := start(t, d, Config{SocketRequestMaxBytes: pool, QueuedMaxRequestBytes: pool}, h)
		parked := s.dial(t)
		send(t, parked, produceV3(1), make([]byte, 60<<10)) // 60 KiB of 64, then parked
		eventually(t, "the parked request's bytes to return", func() bool { return s.srv.Stats().MemoryPoolUsed == 0 })
		next := s.dial(t)
		send(t, next, produceV3(2), make([]byte, 10<<10)) // would not fit beside the parked one
		if corr, _ := readResponse(t, next, false); corr != 2 {
			t.Fatalf("answer for correlation id %d, want 2", corr)
		}
		close(release)
		if corr, _ := readResponse(t, parked, false); corr != 1 {
			t.Fatalf("parked answer for correlation id %d, want 1", corr)
		}
		eventually(t, "every byte back after both answers", func() bool { return s.srv.Stats().MemoryPoolUsed == 0 })
	})
}
