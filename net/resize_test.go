package net

import (
	"context"
	"encoding/binary"
	stdnet "net"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// resizer is a server whose thread pools change at run time.
type resizer interface {
	SetIOThreads(n int)
}

// gate is a handler that holds every request until released and counts
// how many it holds at once.
type gate struct {
	release chan struct{}
	now     atomic.Int32
	peak    atomic.Int32
}

func (g *gate) Serve(req *Request, respond func(Response)) {
	n := g.now.Add(1)
	for p := g.peak.Load(); n > p && !g.peak.CompareAndSwap(p, n); p = g.peak.Load() {
	}
	<-g.release
	g.now.Add(-1)
	echo(req, respond)
}

// Kafka: KIP-226 DynamicThreadPool, KafkaRequestHandlerPool.resizeThreadPool:
// num.io.threads bounds the requests served at once, before and after a
// change; a shrink lets busy handlers finish their request.
func TestSetIOThreadsBoundsConcurrency(t *testing.T) {
	forEachPooledDesign(t, func(t *testing.T, d design) {
		g := &gate{release: make(chan struct{})}
		s := start(t, d, Config{NumNetworkThreads: 1, NumIOThreads: 2}, g)
		var conns []stdnet.Conn
		for i := range 4 {
			c := s.dial(t)
			conns = append(conns, c)
			send(t, c, produceV3(int32(i)), nil)
		}
		eventually(t, "two handlers busy", func() bool { return g.now.Load() == 2 })
		time.Sleep(100 * time.Millisecond)
		if p := g.peak.Load(); p != 2 {
			t.Fatalf("num.io.threads 2 served %d at once", p)
		}
		s.srv.(resizer).SetIOThreads(4)
		eventually(t, "four handlers busy", func() bool { return g.now.Load() == 4 })
		if st := s.srv.Stats(); st.IOThreads != 4 || st.IOThreadsRunning != 4 {
			t.Errorf("after grow: IOThreads %d running %d, want 4 and 4", st.IOThreads, st.IOThreadsRunning)
		}
		s.srv.(resizer).SetIOThreads(1) // must not wait for the busy handlers
		if st := s.srv.Stats(); st.IOThreads != 1 || st.IOThreadsRunning != 4 {
			t.Errorf("during shrink: IOThreads %d running %d, want 1 and 4", st.IOThreads, st.IOThreadsRunning)
		}
		close(g.release)
		for i, c := range conns {
			if corr, _ := readResponse(t, c, false); corr != int32(i) {
				t.Errorf("connection %d: correlation %d", i, corr)
			}
		}
		eventually(t, "one handler left", func() bool { return s.srv.Stats().IOThreadsRunning == 1 })
		g.peak.Store(0)
		for i, c := range conns {
			send(t, c, produceV3(int32(10+i)), nil)
		}
		for i, c := range conns {
			if corr, _ := readResponse(t, c, false); corr != int32(10+i) {
				t.Errorf("connection %d: correlation %d", i, corr)
			}
		}
		if p := g.peak.Load(); p != 1 {
			t.Errorf("num.io.threads 1 served %d at once", p)
		}
	})
}

// Kafka: KIP-226: resizing the handler pool under load loses no request
// and serves none twice.
func TestSetIOThreadsUnderLoad(t *testing.T) {
	forEachPooledDesign(t, func(t *testing.T, d design) {
		var mu sync.Mutex
		served := map[[2]int32]int{}
		h := HandlerFunc(func(req *Request, respond func(Response)) {
			conn := int32(binary.BigEndian.Uint32(req.Body))
			mu.Lock()
			served[[2]int32{conn, req.CorrelationID}]++
			mu.Unlock()
			echo(req, respond)
		})
		s := start(t, d, Config{NumNetworkThreads: 2, NumIOThreads: 3, QueuedMaxRequests: 8}, h)
		const clients, perClient = 6, 300
		stop := make(chan struct{})
		resized := make(chan struct{})
		go func() {
			defer close(resized)
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				s.srv.(resizer).SetIOThreads([]int{1, 6, 2, 8, 3}[i%5])
				time.Sleep(time.Millisecond)
			}
		}()
		var wg sync.WaitGroup
		for ci := range clients {
			c := s.dial(t)
			wg.Add(1)
			go func() {
				defer wg.Done()
				pipeline(t, c, int32(ci), perClient)
			}()
		}
		wg.Wait()
		close(stop)
		<-resized
		mu.Lock()
		defer mu.Unlock()
		if len(served) != clients*perClient {
			t.Errorf("served %d distinct requests, want %d", len(served), clients*perClient)
		}
		for k, n := range served {
			if n != 1 {
				t.Errorf("request %v served %d times", k, n)
			}
		}
		s.srv.(resizer).SetIOThreads(2)
		eventually(t, "two handlers", func() bool { return s.srv.Stats().IOThreadsRunning == 2 })
	})
}

// pipeline sends n requests on c, up to 16 outstanding, and checks each
// response arrives once and in order.
func pipeline(t *testing.T, c stdnet.Conn, id int32, n int) {
	body := binary.BigEndian.AppendUint32(nil, uint32(id))
	errs := make(chan error, 1)
	go func() {
		for i := range n {
			if _, err := c.Write(frame(produceV3(int32(i)), body)); err != nil {
				errs <- err
				return
			}
		}
		errs <- nil
	}()
	for i := range n {
		c.SetReadDeadline(time.Now().Add(20 * time.Second))
		var hdr [8]byte
		if _, err := readFull(c, hdr[:]); err != nil {
			t.Errorf("client %d: response %d: %v", id, i, err)
			return
		}
		rest := make([]byte, binary.BigEndian.Uint32(hdr[:4])-4)
		if _, err := readFull(c, rest); err != nil {
			t.Errorf("client %d: response %d body: %v", id, i, err)
			return
		}
		if corr := int32(binary.BigEndian.Uint32(hdr[4:])); corr != int32(i) {
			t.Errorf("client %d: correlation %d, want %d", id, corr, i)
			return
		}
	}
	if err := <-errs; err != nil {
		t.Errorf("client %d: write: %v", id, err)
	}
}

func readFull(c stdnet.Conn, b []byte) (int, error) {
	n := 0
	for n < len(b) {
		m, err := c.Read(b[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// Kafka: SocketServer.resizeProcessorCount: added processors take new
// connections from the acceptor.
func TestSetNetworkThreadsGrow(t *testing.T) {
	s := start(t, designs[0], Config{NumNetworkThreads: 1}, echo)
	r := s.srv.(*Reactor)
	eventually(t, "listener up", func() bool { return len(r.Stats().Processors) == 1 })
	if err := r.SetNetworkThreads(3); err != nil {
		t.Fatal(err)
	}
	st := r.Stats()
	if st.NetworkThreads != 3 || len(st.Processors) != 3 {
		t.Fatalf("NetworkThreads %d, %d processors; want 3 and 3", st.NetworkThreads, len(st.Processors))
	}
	for i := range 6 {
		c := s.dial(t)
		send(t, c, produceV3(int32(i)), nil)
		if corr, _ := readResponse(t, c, false); corr != int32(i) {
			t.Fatalf("correlation %d, want %d", corr, i)
		}
	}
	for _, p := range r.Stats().Processors {
		if p.Connections != 2 {
			t.Errorf("processor %d has %d connections, want 2 (round-robin over 3)", p.ID, p.Connections)
		}
	}
}

// Kafka: SocketServer.resizeProcessorCount: a removed processor closes
// its connections (clients reconnect); here each after the response to
// its request in flight is written. The kept processor keeps serving.
func TestSetNetworkThreadsShrink(t *testing.T) {
	g := &gate{release: make(chan struct{})}
	s := start(t, designs[0], Config{NumNetworkThreads: 3}, g)
	r := s.srv.(*Reactor)
	var conns []stdnet.Conn
	for i := range 3 {
		c := s.dial(t)
		conns = append(conns, c)
		send(t, c, produceV3(int32(i)), nil)
	}
	eventually(t, "three requests held", func() bool { return g.now.Load() == 3 })
	if err := r.SetNetworkThreads(1); err != nil {
		t.Fatal(err)
	}
	st := r.Stats()
	if st.NetworkThreads != 1 || len(st.Processors) != 1 {
		t.Fatalf("NetworkThreads %d, %d processors; want 1 and 1", st.NetworkThreads, len(st.Processors))
	}
	close(g.release)
	for i, c := range conns {
		if corr, _ := readResponse(t, c, false); corr != int32(i) {
			t.Errorf("connection %d: in-flight response correlation %d", i, corr)
		}
	}
	open := 0
	for i, c := range conns {
		if _, err := c.Write(frame(produceV3(int32(10+i)), nil)); err != nil {
			continue
		}
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		var hdr [8]byte
		if _, err := readFull(c, hdr[:]); err == nil {
			open++
		}
	}
	if open != 1 {
		t.Errorf("%d connections still served after shrinking 3 processors to 1, want 1", open)
	}
	eventually(t, "closed connections counted", func() bool { return r.Stats().Connections == 1 })
	c := s.dial(t)
	send(t, c, produceV3(99), nil)
	if corr, _ := readResponse(t, c, false); corr != 99 {
		t.Errorf("new connection: correlation %d", corr)
	}
}

// Kafka: KIP-226: resizing both pools while requests flow and while
// Shutdown runs leaves no goroutine behind (goleak in TestMain) and
// Shutdown still drains.
func TestShutdownDuringResize(t *testing.T) {
	forEachPooledDesign(t, func(t *testing.T, d design) {
		srv, err := d.new(Config{NumNetworkThreads: 2, NumIOThreads: 2}, echo)
		if err != nil {
			t.Fatal(err)
		}
		ln, err := stdnet.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		served := make(chan error, 1)
		go func() { served <- srv.Serve(ln) }()
		c, err := stdnet.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		send(t, c, produceV3(1), nil)
		readResponse(t, c, false)
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				srv.(resizer).SetIOThreads(1 + i%7)
				if r, ok := srv.(*Reactor); ok {
					r.SetNetworkThreads(1 + i%4)
				}
			}
		}()
		time.Sleep(2 * time.Millisecond)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
		wg.Wait()
		<-served
		if st := srv.Stats(); st.IOThreadsRunning != 0 {
			t.Errorf("%d handlers still running after Shutdown", st.IOThreadsRunning)
		}
	})
}
