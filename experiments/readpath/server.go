package main

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// session is one run's server side: a listener, the consumers' connections
// in consumer order, and the streams they read.
type session struct {
	ln      *net.TCPListener
	tls     *tls.Config // the ssl path: every connection is TLS from its first byte
	conns   []net.Conn  // *net.TCPConn, or *tls.Conn over one
	suite   uint16      // the cipher suite the TLS connections agreed
	streams []stream
	fetch   int64
	sent    atomic.Int64 // bytes delivered so far, for the progress bar
}

func listen() (*net.TCPListener, error) {
	return net.ListenTCP("tcp", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
}

// accept waits for every consumer's hello and orders connections by index.
func (s *session) accept(deadline time.Time) error {
	s.conns = make([]net.Conn, len(s.streams))
	s.ln.SetDeadline(deadline)
	for range s.streams {
		tc, err := s.ln.AcceptTCP()
		if err != nil {
			return fmt.Errorf("accept consumer: %w", err)
		}
		var c net.Conn = tc
		c.SetDeadline(deadline)
		if s.tls != nil {
			// The handshake happens here, before the clock starts, as a
			// consumer's connection outlives many fetches.
			t := tls.Server(tc, s.tls)
			if err := t.Handshake(); err != nil {
				tc.Close()
				return fmt.Errorf("TLS handshake with a consumer: %w", err)
			}
			c, s.suite = t, t.ConnectionState().CipherSuite
		}
		idx, err := readHello(c)
		if err != nil || idx < 0 || idx >= len(s.conns) || s.conns[idx] != nil {
			c.Close()
			return fmt.Errorf("consumer hello %d: %v", idx, err)
		}
		s.conns[idx] = c
	}
	return nil
}

func (s *session) close() {
	s.ln.Close()
	for _, c := range s.conns {
		if c != nil {
			c.Close()
		}
	}
}

// serve releases every consumer and serves them concurrently, one goroutine
// per connection, until each has sent done. push selects the raw push mode.
func (s *session) serve(snd sender, push bool) error {
	for _, c := range s.conns {
		if _, err := c.Write([]byte{1}); err != nil {
			return fmt.Errorf("send go: %w", err)
		}
	}
	errs := make([]error, len(s.conns))
	var wg sync.WaitGroup
	for i, c := range s.conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if push {
				errs[i] = s.push(c.(*net.TCPConn), s.streams[i])
			} else {
				errs[i] = s.answer(c, s.streams[i], snd)
			}
			if errs[i] != nil {
				c.Close() // as Kafka does: a failed send closes the connection
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// push sends the whole stream with raw sendfile, then waits for done.
func (s *session) push(c *net.TCPConn, st stream) error {
	for range st.passes {
		for _, p := range st.pieces {
			n, err := rawSendfile(c, p.seg.f, p.off, p.len)
			s.sent.Add(n)
			if err != nil {
				return fmt.Errorf("raw push %s at %d: %w", p.seg.path, p.off, err)
			}
		}
	}
	if err := c.CloseWrite(); err != nil {
		return err
	}
	var b [fetchReqLen]byte
	if _, _, err := readFetch(c, b[:]); err != nil {
		return fmt.Errorf("wait for done: %w", err)
	}
	return nil
}

// answer serves fetch requests until done.
func (s *session) answer(c net.Conn, st stream, snd sender) error {
	var req [fetchReqLen]byte
	var hdr [respHdrLen]byte
	for {
		pos, max, err := readFetch(c, req[:])
		if err != nil {
			return err
		}
		if max == 0 {
			return nil
		}
		p, off, n := st.locate(pos, max)
		putHello(hdr[:], int(n)) // same u32 layout as the hello
		if _, err := c.Write(hdr[:]); err != nil {
			return fmt.Errorf("write response header: %w", err)
		}
		if n == 0 {
			continue
		}
		m, err := snd.send(c, p.seg, off, n)
		s.sent.Add(m)
		if err != nil {
			return fmt.Errorf("send %s [%d,+%d): %w", p.seg.path, off, n, err)
		}
	}
}

// locate maps a stream position to the piece holding it and returns the
// segment offset and length of a response of at most max bytes that stays
// inside that piece. Positions past the stream give length 0.
func (st stream) locate(pos, max int64) (piece, int64, int64) {
	if pos < 0 || pos >= st.total() {
		return piece{}, 0, 0
	}
	pos %= st.bytes
	for _, p := range st.pieces {
		if pos < p.len {
			return p, p.off + pos, min(max, p.len-pos)
		}
		pos -= p.len
	}
	return piece{}, 0, 0
}
