package net

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math/rand/v2"
	"testing"
)

// chunkReader returns its data in chunks of pseudo-random sizes in [1, max].
type chunkReader struct {
	data []byte
	rng  *rand.Rand
	max  int
}

func (r *chunkReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	n := min(len(p), len(r.data), 1+r.rng.IntN(r.max))
	copy(p, r.data[:n])
	r.data = r.data[n:]
	return n, nil
}

func sizePrefixed(body []byte) []byte {
	return append(binary.BigEndian.AppendUint32(nil, uint32(len(body))), body...)
}

// Frames of every size class come back whole whatever the read boundaries,
// in exact-read mode (Kafka's NetworkReceive) and through a buffer.
func TestFrameReaderSplits(t *testing.T) {
	var stream []byte
	var want [][]byte
	for i, n := range []int{0, 1, 100, minDirectRead - 1, minDirectRead, 40000, 300000, 7} {
		body := bytes.Repeat([]byte{byte(i + 1)}, n)
		want = append(want, body)
		stream = append(stream, sizePrefixed(body)...)
	}
	for _, bufSize := range []int{0, 1, 16, 4096, 1 << 20} {
		for _, chunk := range []int{1, 3, 4096, 1 << 20} {
			r := &chunkReader{data: stream, rng: rand.New(rand.NewPCG(uint64(bufSize), uint64(chunk))), max: chunk}
			fr := NewFrameReader(r, 1<<20, bufSize)
			for i, w := range want {
				got, err := fr.ReadFrame()
				if err != nil || !bytes.Equal(got, w) {
					t.Fatalf("buf %d chunk %d frame %d: %d bytes, err %v; want %d bytes", bufSize, chunk, i, len(got), err, len(w))
				}
			}
			if _, err := fr.ReadFrame(); err != io.EOF {
				t.Fatalf("buf %d chunk %d: after the last frame err = %v, want io.EOF", bufSize, chunk, err)
			}
		}
	}
}

// Kafka closes a connection whose stream ends inside a frame; a clean end
// between frames is EOF. Errors are sticky.
func TestFrameReaderEndOfStream(t *testing.T) {
	cases := []struct {
		name string
		data []byte
		err  error
	}{
		{"empty", nil, io.EOF},
		{"inside prefix", []byte{0, 0}, io.ErrUnexpectedEOF},
		{"inside body", append(binary.BigEndian.AppendUint32(nil, 10), 1, 2, 3), io.ErrUnexpectedEOF},
		{"inside big body", append(binary.BigEndian.AppendUint32(nil, 1<<19), make([]byte, 1<<18)...), io.ErrUnexpectedEOF},
	}
	for _, tc := range cases {
		for _, bufSize := range []int{0, 4096} {
			fr := NewFrameReader(bytes.NewReader(tc.data), 1<<20, bufSize)
			_, err := fr.ReadFrame()
			if err != tc.err {
				t.Errorf("%s buf %d: err %v, want %v", tc.name, bufSize, err, tc.err)
			}
			if _, err2 := fr.ReadFrame(); err2 != err {
				t.Errorf("%s: error not sticky: %v then %v", tc.name, err, err2)
			}
		}
	}
}

// Kafka: NetworkReceive checks size < 0 || size > maxSize before allocating.
func TestFrameSizeLimit(t *testing.T) {
	for _, size := range []uint32{1025, 0x7fffffff, 0x80000000, 0xffffffff} {
		fr := NewFrameReader(bytes.NewReader(binary.BigEndian.AppendUint32(nil, size)), 1024, 0)
		_, err := fr.ReadFrame()
		var fse *FrameSizeError
		if !errors.As(err, &fse) || fse.Size != int32(size) || fse.Max != 1024 {
			t.Errorf("size %#x: err %v", size, err)
		}
	}
	body := make([]byte, 1024)
	fr := NewFrameReader(bytes.NewReader(sizePrefixed(body)), 1024, 0)
	if got, err := fr.ReadFrame(); err != nil || len(got) != 1024 {
		t.Errorf("frame of exactly the maximum: %d bytes, %v", len(got), err)
	}
}

// A peer announcing a large (allowed) frame and sending little makes the
// decoder hold memory in proportion to what arrived, not to the announcement.
func TestFrameDecoderGrowsWithData(t *testing.T) {
	d := newFrameDecoder(DefaultSocketRequestMaxBytes)
	if _, _, err := d.feed(binary.BigEndian.AppendUint32(nil, 100<<20)); err != nil {
		t.Fatal(err)
	}
	if c := cap(d.body); c > initialBodyCap {
		t.Fatalf("after the prefix alone the decoder holds %d bytes", c)
	}
	chunk := make([]byte, 4096)
	for fed := 0; fed < 1<<20; fed += len(chunk) {
		d.feed(chunk)
	}
	if c := cap(d.body); c > 2<<20 {
		t.Fatalf("after 1 MiB of a 100 MiB frame the decoder holds %d bytes", c)
	}
	// The same through FrameReader, in both read modes.
	for _, bufSize := range []int{0, 4096} {
		stream := append(binary.BigEndian.AppendUint32(nil, 100<<20), make([]byte, 1<<20)...)
		fr := NewFrameReader(bytes.NewReader(stream), DefaultSocketRequestMaxBytes, bufSize)
		if _, err := fr.ReadFrame(); err != io.ErrUnexpectedEOF {
			t.Fatalf("buf %d: %v", bufSize, err)
		}
		if c := cap(fr.d.body); c > 2<<20 {
			t.Errorf("buf %d: FrameReader holds %d bytes after 1 MiB of a 100 MiB frame", bufSize, c)
		}
	}
}

// referenceFrames parses a whole stream the obvious way: the model the
// fuzzer compares FrameReader with.
func referenceFrames(data []byte, max int32) ([][]byte, error) {
	var frames [][]byte
	for {
		if len(data) == 0 {
			return frames, io.EOF
		}
		if len(data) < 4 {
			return frames, io.ErrUnexpectedEOF
		}
		size := int32(binary.BigEndian.Uint32(data))
		if size < 0 || size > max {
			return frames, &FrameSizeError{Size: size, Max: max}
		}
		if len(data)-4 < int(size) {
			return frames, io.ErrUnexpectedEOF
		}
		frames = append(frames, data[4:4+size])
		data = data[4+size:]
	}
}

func FuzzFrameReader(f *testing.F) {
	f.Add([]byte{0, 0, 0, 3, 1, 2, 3, 0, 0, 0, 0}, uint16(100), uint8(0), uint8(1))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff}, uint16(100), uint8(4), uint8(3))
	f.Add([]byte{0, 0, 0, 200, 1}, uint16(100), uint8(16), uint8(7))
	f.Add([]byte("GET / HTTP/1.1\r\n"), uint16(1000), uint8(0), uint8(2))
	f.Fuzz(func(t *testing.T, data []byte, max uint16, bufSize, chunk uint8) {
		wantFrames, wantErr := referenceFrames(data, int32(max))
		r := &chunkReader{data: data, rng: rand.New(rand.NewPCG(uint64(chunk), 0)), max: int(chunk) + 1}
		fr := NewFrameReader(r, int32(max), int(bufSize))
		for i, w := range wantFrames {
			got, err := fr.ReadFrame()
			if err != nil || !bytes.Equal(got, w) {
				t.Fatalf("frame %d: %x, %v; want %x", i, got, err, w)
			}
		}
		_, err := fr.ReadFrame()
		var fse, wfse *FrameSizeError
		if errors.As(wantErr, &wfse) {
			if !errors.As(err, &fse) || *fse != *wfse {
				t.Fatalf("err %v, want %v", err, wantErr)
			}
		} else if err != wantErr {
			t.Fatalf("err %v, want %v", err, wantErr)
		}
	})
}

// FuzzGatedFrameReader checks the decoder the servers use with a memory
// pool: it stops after every size prefix and asks for the frame's size
// before the body, and otherwise frames exactly as the reference does.
// Kafka: NetworkReceive allocates from the MemoryPool only after the size
// is read and checked.
func FuzzGatedFrameReader(f *testing.F) {
	f.Add([]byte{0, 0, 0, 3, 1, 2, 3, 0, 0, 0, 0}, uint16(100), uint8(0), uint8(1))
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 1, 9}, uint16(100), uint8(16), uint8(7))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff}, uint16(100), uint8(4), uint8(3))
	f.Fuzz(func(t *testing.T, data []byte, max uint16, bufSize, chunk uint8) {
		wantFrames, wantErr := referenceFrames(data, int32(max))
		r := &chunkReader{data: data, rng: rand.New(rand.NewPCG(uint64(chunk), 0)), max: int(chunk) + 1}
		var asked []int
		var fr *FrameReader
		fr = newGatedFrameReader(r, int32(max), int(bufSize), func(size int) error {
			if fr.d.open || fr.d.body != nil {
				t.Fatalf("body allocated before the gate for %d bytes", size)
			}
			asked = append(asked, size)
			return nil
		})
		for i, w := range wantFrames {
			got, err := fr.ReadFrame()
			if err != nil || !bytes.Equal(got, w) {
				t.Fatalf("frame %d: %x, %v; want %x", i, got, err, w)
			}
			if len(asked) != i+1 || asked[i] != len(w) {
				t.Fatalf("frame %d of %d bytes: gate asked %v", i, len(w), asked)
			}
		}
		_, err := fr.ReadFrame()
		var fse, wfse *FrameSizeError
		if errors.As(wantErr, &wfse) {
			if !errors.As(err, &fse) || *fse != *wfse {
				t.Fatalf("err %v, want %v", err, wantErr)
			}
		} else if err != wantErr {
			t.Fatalf("err %v, want %v", err, wantErr)
		}
	})
}

// A gate that refuses ends reading with its error, before any body byte.
func TestGatedFrameReaderRefused(t *testing.T) {
	refused := errors.New("no memory")
	stream := append(binary.BigEndian.AppendUint32(nil, 10), make([]byte, 10)...)
	r := bytes.NewReader(stream)
	fr := newGatedFrameReader(r, 100, 0, func(int) error { return refused })
	if _, err := fr.ReadFrame(); err != refused {
		t.Fatalf("err %v, want the gate's", err)
	}
	if r.Len() != 10 {
		t.Fatalf("%d body bytes read past a refused gate", 10-r.Len())
	}
}
