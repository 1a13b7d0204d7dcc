package net

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"
)

// Kafka: flexible versions (KIP-482) from each API's message spec: Produce
// 9+, Fetch 12+, Metadata 9+, ApiVersions 3+; SaslHandshake never. Flexible
// ranges are open-ended, so an ApiVersions version above the newest known is
// still parsed with header v2, as Kafka does before answering
// UNSUPPORTED_VERSION.
func TestIsFlexible(t *testing.T) {
	cases := []struct {
		key, version int16
		want         bool
	}{
		{0, 8, false}, {0, 9, true}, {1, 11, false}, {1, 12, true},
		{3, 8, false}, {3, 9, true}, {18, 2, false}, {18, 3, true}, {18, 99, true},
		{17, 1, false}, {17, 50, false}, {999, 5, false}, {-1, 5, false}, {0, -1, false},
	}
	for _, tc := range cases {
		if got := IsFlexible(tc.key, tc.version); got != tc.want {
			t.Errorf("IsFlexible(%d, %d) = %v, want %v", tc.key, tc.version, got, tc.want)
		}
	}
}

func TestParseRequestHeader(t *testing.T) {
	fixed := func(key, version int16, corr int32) []byte {
		b := binary.BigEndian.AppendUint16(nil, uint16(key))
		b = binary.BigEndian.AppendUint16(b, uint16(version))
		return binary.BigEndian.AppendUint32(b, uint32(corr))
	}
	cat := func(bs ...[]byte) []byte { return bytes.Join(bs, nil) }
	cases := []struct {
		name  string
		frame []byte
		want  RequestHeader
		body  string
		field string // non-empty: a HeaderError on this field
	}{
		{"v1", cat(fixed(0, 3, 42), []byte{0, 3}, []byte("abc"), []byte("BODY")),
			RequestHeader{Key: 0, Version: 3, CorrelationID: 42, ClientID: "abc"}, "BODY", ""},
		{"v1 null client id", cat(fixed(0, 3, 1), []byte{0xff, 0xff}, []byte("B")),
			RequestHeader{Key: 0, Version: 3, CorrelationID: 1}, "B", ""},
		{"v2 no tags", cat(fixed(3, 12, 5), []byte{0, 1, 'x', 0}, []byte("B")),
			RequestHeader{Key: 3, Version: 12, CorrelationID: 5, ClientID: "x", Flexible: true}, "B", ""},
		{"v2 two tags", cat(fixed(3, 12, 5), []byte{0, 0, 2, 0, 2, 9, 9, 0x81, 0x01, 1, 7}, []byte("B")),
			RequestHeader{Key: 3, Version: 12, CorrelationID: 5, Flexible: true}, "B", ""},
		{"short", []byte{0, 1, 2}, RequestHeader{}, "", "fixed fields"},
		{"client id length -2", cat(fixed(0, 3, 1), []byte{0xff, 0xfe}), RequestHeader{}, "", "client id"},
		{"client id past end", cat(fixed(0, 3, 1), []byte{0, 9, 'a'}), RequestHeader{}, "", "client id"},
		{"v2 missing tag count", cat(fixed(3, 12, 5), []byte{0, 0}), RequestHeader{}, "", "tagged field count"},
		{"v2 bad uvarint", cat(fixed(3, 12, 5), []byte{0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f}), RequestHeader{}, "", "tagged field count"},
		{"v2 tag past end", cat(fixed(3, 12, 5), []byte{0, 0, 1, 0, 5, 1}), RequestHeader{}, "", "tagged field"},
	}
	for _, tc := range cases {
		h, body, err := ParseRequestHeader(tc.frame)
		if tc.field != "" {
			var he *HeaderError
			if !errors.As(err, &he) || he.Field != tc.field {
				t.Errorf("%s: err %v, want HeaderError on %q", tc.name, err, tc.field)
			}
			continue
		}
		if err != nil || h != tc.want || string(body) != tc.body {
			t.Errorf("%s: %+v %q %v; want %+v %q", tc.name, h, body, err, tc.want, tc.body)
		}
	}
}

// The response header of ApiVersions is v0 whatever the version (Kafka's
// ApiKeys.API_VERSIONS.responseHeaderVersion); others are v1 when flexible.
func TestResponseHeaderLen(t *testing.T) {
	if n := responseHeaderLen(18, true); n != 4 {
		t.Errorf("ApiVersions flexible: %d", n)
	}
	if n := responseHeaderLen(3, true); n != 5 {
		t.Errorf("Metadata flexible: %d", n)
	}
	if n := responseHeaderLen(3, false); n != 4 {
		t.Errorf("Metadata v1: %d", n)
	}
}

func FuzzRequestHeader(f *testing.F) {
	f.Add(AppendRequestHeader(nil, RequestHeader{Key: 0, Version: 3, CorrelationID: 1, ClientID: "c"}))
	f.Add(AppendRequestHeader(nil, RequestHeader{Key: 3, Version: 12, CorrelationID: 2, ClientID: "kgo", Flexible: true}))
	f.Add([]byte{0, 3, 0, 12, 0, 0, 0, 5, 0xff, 0xff, 3, 1, 1, 0, 2, 0, 0, 0})
	f.Add([]byte{0xff, 0xff, 0, 0, 0, 0, 0, 0, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, frame []byte) {
		h, body, err := ParseRequestHeader(frame)
		if err != nil {
			var he *HeaderError
			if !errors.As(err, &he) {
				t.Fatalf("error of type %T: %v", err, err)
			}
			return
		}
		if !bytes.HasSuffix(frame, body) || len(frame)-len(body) < minHeaderLen {
			t.Fatalf("body is not the frame's tail after the header")
		}
		if h.Flexible != IsFlexible(h.Key, h.Version) {
			t.Fatal("Flexible disagrees with IsFlexible")
		}
		// Re-encoding gives the same prefix up to the client id (a null
		// client id comes back as the empty string).
		enc := AppendRequestHeader(nil, h)
		if !bytes.Equal(enc[:8], frame[:8]) {
			t.Fatalf("re-encoded fixed fields %x, frame %x", enc[:8], frame[:8])
		}
		null := frame[8] == 0xff && frame[9] == 0xff
		if !h.Flexible && !null && !bytes.Equal(append(enc, body...), frame) {
			t.Fatalf("re-encoded frame differs:\n%x\n%x", append(enc, body...), frame)
		}
	})
}
