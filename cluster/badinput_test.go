package cluster_test

import (
	"encoding/binary"
	"io"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// frame builds a request: size, key, version, correlation id, client id,
// then body.
func frame(key, version int16, body []byte) []byte {
	var b []byte
	b = binary.BigEndian.AppendUint32(b, 0)
	b = binary.BigEndian.AppendUint16(b, uint16(key))
	b = binary.BigEndian.AppendUint16(b, uint16(version))
	b = binary.BigEndian.AppendUint32(b, 7)
	b = binary.BigEndian.AppendUint16(b, 1)
	b = append(b, 'x')
	if kmsg.RequestForKey(key) != nil {
		r := kmsg.RequestForKey(key)
		r.SetVersion(version)
		if r.IsFlexible() {
			b = append(b, 0) // header tagged fields
		}
	}
	b = append(b, body...)
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	return b
}

// expectClosed says whether the broker closed the connection (EOF)
// within a few seconds after what was sent.
func expectClosed(t *testing.T, c net.Conn, what string) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 4096)
	for {
		_, err := c.Read(buf)
		if err == io.EOF {
			return
		}
		if err != nil {
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				t.Fatalf("%s: the connection stayed open", what)
			}
			return // reset: closed too
		}
	}
}

// Bad input gets a closed connection, and the broker goes on serving.
func TestBadInputClosesTheConnectionOnly(t *testing.T) {
	b := startBroker(t, t.TempDir(), map[string]string{"socket.request.max.bytes": "1048576"})
	undecodable := frame(kmsg.Produce.Int16(), 9, []byte{0xff, 0xff, 0xff})
	cases := map[string][]byte{
		"oversized size prefix":    {0x7f, 0xff, 0xff, 0xff},
		"negative size prefix":     {0xff, 0xff, 0xff, 0xfe},
		"size over the limit":      binary.BigEndian.AppendUint32(nil, 1048577),
		"garbage":                  append(binary.BigEndian.AppendUint32(nil, 40), []byte("this is not a kafka request at all......")...),
		"unknown api key":          frame(999, 0, nil),
		"unsupported version":      frame(kmsg.Produce.Int16(), 99, nil),
		"undecodable body":         undecodable,
		"header shorter than size": {0, 0, 0, 3, 0, 1, 0},
	}
	for name, data := range cases {
		c, err := net.Dial("tcp", b.addr)
		if err != nil {
			t.Fatal(err)
		}
		c.Write(data)
		if name == "header shorter than size" {
			c.(*net.TCPConn).CloseWrite() // a truncated frame, then the client goes away
		}
		expectClosed(t, c, name)
		c.Close()
	}
	// The broker still serves everyone else.
	adm := kadm.NewClient(client(t, b.addr))
	if _, err := adm.ListTopics(ctx(t)); err != nil {
		t.Fatalf("broker stopped serving after bad input: %v", err)
	}
}

// Kafka: ApiVersions at a version the broker does not know is answered
// at v0 with UNSUPPORTED_VERSION and the supported ranges.
func TestApiVersionsAtUnknownVersion(t *testing.T) {
	b := startBroker(t, t.TempDir(), nil)
	c, err := net.Dial("tcp", b.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	req := frame(kmsg.ApiVersions.Int16(), 0, []byte{0}) // the body of a flexible header's tagged fields
	binary.BigEndian.PutUint16(req[6:], 50)              // version 50: flexible, unknown
	c.Write(req)
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	var size [4]byte
	if _, err := io.ReadFull(c, size[:]); err != nil {
		t.Fatal(err)
	}
	body := make([]byte, binary.BigEndian.Uint32(size[:]))
	if _, err := io.ReadFull(c, body); err != nil {
		t.Fatal(err)
	}
	resp := kmsg.NewPtrApiVersionsResponse()
	resp.SetVersion(0)
	if err := resp.ReadFrom(body[4:]); err != nil {
		t.Fatal(err)
	}
	if resp.ErrorCode != 35 || len(resp.ApiKeys) < 10 {
		t.Fatalf("error %d, %d keys", resp.ErrorCode, len(resp.ApiKeys))
	}
}
