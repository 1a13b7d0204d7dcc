package main

import (
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// conn is one raw Kafka connection of an attacker: requests are framed
// with kmsg's formatter and written as they are, so an attack can send
// what no well-behaved client would.
type conn struct {
	c    net.Conn
	fmt  *kmsg.RequestFormatter
	corr int32
}

func dial(addr string) (*conn, error) {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return nil, err
	}
	return &conn{c: c, fmt: kmsg.NewRequestFormatter(kmsg.FormatterClientID("attacks"))}, nil
}

// send writes one request at version v; it does not wait for the answer.
func (c *conn) send(req kmsg.Request, v int16, deadline time.Time) error {
	req.SetVersion(v)
	c.corr++
	b := c.fmt.AppendRequest(nil, req, c.corr)
	c.c.SetWriteDeadline(deadline)
	_, err := c.c.Write(b)
	return err
}

// readResponse reads one response frame (size, correlation id, body) and
// returns its body; frames larger than limit are refused. The response to
// a flexible request version has a tag buffer after the correlation id,
// which is skipped.
func (c *conn) readResponse(req kmsg.Request, deadline time.Time, limit int) ([]byte, error) {
	c.c.SetReadDeadline(deadline)
	var size [4]byte
	if _, err := io.ReadFull(c.c, size[:]); err != nil {
		return nil, err
	}
	n := int(binary.BigEndian.Uint32(size[:]))
	if n < 4 || n > limit {
		return nil, fmt.Errorf("response of %d bytes", n)
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(c.c, b); err != nil {
		return nil, err
	}
	b = b[4:] // past the correlation id
	if req.IsFlexible() {
		tags, n := binary.Uvarint(b)
		if n <= 0 || tags != 0 {
			return nil, fmt.Errorf("response header with %d tagged fields", tags)
		}
		b = b[n:]
	}
	return b, nil
}

func (c *conn) Close() error { return c.c.Close() }

// dialAll opens n connections, or none.
func dialAll(addr string, n int) ([]*conn, error) {
	conns := make([]*conn, n)
	for i := range conns {
		c, err := dial(addr)
		if err != nil {
			closeAll(conns)
			return nil, err
		}
		conns[i] = c
	}
	return conns, nil
}

// closeAll closes every connection of an attack.
func closeAll(cs []*conn) {
	for _, c := range cs {
		if c != nil {
			c.Close()
		}
	}
}
