package net

import (
	"context"
	"errors"
	stdnet "net"
	"sync/atomic"
	"testing"
	"time"
)

// Graceful shutdown (Kafka's controlled shutdown of the socket server, here
// draining): requests in flight are answered before their connection
// closes; idle connections close at once; Shutdown returns after that.
func TestShutdownWaitsForInflight(t *testing.T) {
	forEachDesign(t, func(t *testing.T, d design) {
		doneErr := make(chan error, 1)
		var responded atomic.Bool
		h := HandlerFunc(func(req *Request, respond func(Response)) {
			time.AfterFunc(300*time.Millisecond, func() {
				responded.Store(true)
				respond(Response{Parts: []Part{{Bytes: []byte("late")}}, Done: func(err error) { doneErr <- err }})
			})
		})
		s := start(t, d, Config{}, h)
		busy, idle := s.dial(t), s.dial(t)
		send(t, busy, produceV3(1), nil)
		eventually(t, "request in flight", func() bool { return s.srv.Stats().Requests == 1 })

		shut := make(chan error, 1)
		var early bool // Shutdown returned before the handler responded
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			err := s.srv.Shutdown(ctx)
			early = !responded.Load()
			shut <- err
		}()
		expectClosed(t, idle)
		if corr, body := readResponse(t, busy, false); corr != 1 || string(body) != "late" {
			t.Fatalf("in-flight response: %d %q", corr, body)
		}
		expectClosed(t, busy)
		if err := <-shut; err != nil {
			t.Fatalf("Shutdown: %v", err)
		}
		if early {
			t.Error("Shutdown returned before the in-flight request was answered")
		}
		if err := <-doneErr; err != nil {
			t.Errorf("Done(%v), want nil", err)
		}
		if _, err := stdnet.DialTimeout("tcp", s.addr, time.Second); err == nil {
			t.Error("listener still accepting after Shutdown")
		}
	})
}

// When Shutdown's context ends first, connections are closed at once and a
// late response is abandoned with an error through Done.
func TestShutdownForced(t *testing.T) {
	forEachDesign(t, func(t *testing.T, d design) {
		release := make(chan struct{})
		doneErr := make(chan error, 1)
		h := HandlerFunc(func(req *Request, respond func(Response)) {
			go func() {
				<-release
				respond(Response{Parts: []Part{{Bytes: []byte("never")}}, Done: func(err error) { doneErr <- err }})
			}()
		})
		s := start(t, d, Config{}, h)
		c := s.dial(t)
		send(t, c, produceV3(1), nil)
		eventually(t, "request in flight", func() bool { return s.srv.Stats().Requests == 1 })
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		if err := s.srv.Shutdown(ctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Shutdown = %v, want DeadlineExceeded", err)
		}
		expectClosed(t, c)
		close(release)
		select {
		case err := <-doneErr:
			if !errors.Is(err, ErrServerClosed) && !errors.Is(err, ErrConnClosed) {
				t.Errorf("Done(%v), want ErrServerClosed or ErrConnClosed", err)
			}
		case <-time.After(5 * time.Second):
			t.Error("Done never called for the abandoned response")
		}
	})
}

// Serve after Shutdown refuses, as net/http does.
func TestServeAfterShutdown(t *testing.T) {
	forEachDesign(t, func(t *testing.T, d design) {
		srv, err := d.new(Config{}, echo)
		if err != nil {
			t.Fatal(err)
		}
		if err := srv.Shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
		ln, err := stdnet.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		if err := srv.Serve(ln); !errors.Is(err, ErrServerClosed) {
			t.Errorf("Serve after Shutdown = %v", err)
		}
	})
}

// Kafka's property checks: a bad value names the property.
func TestConfigValidation(t *testing.T) {
	cases := []struct {
		cfg  Config
		prop string
	}{
		{Config{NumNetworkThreads: -1}, "num.network.threads"},
		{Config{NumIOThreads: -2}, "num.io.threads"},
		{Config{QueuedMaxRequests: -1}, "queued.max.requests"},
		{Config{SocketRequestMaxBytes: -5}, "socket.request.max.bytes"},
		{Config{SocketSendBufferBytes: -2}, "socket.send.buffer.bytes"},
		{Config{SocketReceiveBufferBytes: -3}, "socket.receive.buffer.bytes"},
		{Config{MaxConnections: -1}, "max.connections"},
	}
	for _, d := range designs {
		for _, tc := range cases {
			_, err := d.new(tc.cfg, echo)
			var ce *ConfigError
			if !errors.As(err, &ce) || ce.Property != tc.prop {
				t.Errorf("%s %+v: err %v, want ConfigError for %s", d.name, tc.cfg, err, tc.prop)
			}
		}
	}
	def := DefaultConfig()
	if def.NumNetworkThreads != 3 || def.NumIOThreads != 8 || def.QueuedMaxRequests != 500 ||
		def.SocketRequestMaxBytes != 104857600 || def.ConnectionsMaxIdle != 10*time.Minute ||
		def.SocketSendBufferBytes != 102400 || def.SocketReceiveBufferBytes != 102400 {
		t.Errorf("defaults differ from Kafka's: %+v", def)
	}
}

// Kafka: max.connections caps open connections; extra ones are closed.
func TestMaxConnections(t *testing.T) {
	forEachDesign(t, func(t *testing.T, d design) {
		s := start(t, d, Config{MaxConnections: 2}, echo)
		a, b := s.dial(t), s.dial(t)
		for i, c := range []stdnet.Conn{a, b} {
			send(t, c, produceV3(int32(i)), nil)
			readResponse(t, c, false)
		}
		expectClosed(t, s.dial(t))
		if st := s.srv.Stats(); st.ConnectionsRejected != 1 || st.Connections != 2 {
			t.Errorf("rejected %d, open %d", st.ConnectionsRejected, st.Connections)
		}
	})
}
