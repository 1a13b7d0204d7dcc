package compaction

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/varve/varve/record"
	"github.com/varve/varve/segment"
)

// batchReader iterates the whole batches of one sealed segment file in
// offset order, reading it sequentially in chunks of its buffer's size
// (Kafka's cleaner readBuffer). A batch larger than the buffer grows it
// (Kafka's growBuffers); restore shrinks it back after the segment.
//
// The file is opened by path through the log's FS and read only up to the
// size the log published, so bytes appended or changed later are never
// seen. An open file stays readable when the log renames or deletes it.
type batchReader struct {
	chunk int // the normal buffer size
	buf   []byte
	th    *throttler
	ctx   context.Context // the pass's, for the throttle's sleeps

	f    segment.File
	name string
	size int64 // bytes of whole batches to read
	pos  int64 // file position of buf[0]
	have int   // valid bytes in buf
	at   int   // next batch starts at buf[at]
}

func newBatchReader(chunk int, th *throttler) *batchReader {
	return &batchReader{ctx: context.Background(), chunk: chunk, buf: make([]byte, chunk), th: th}
}

// open starts reading the segment s. A segment that is gone (renamed or
// removed since the pass listed it) is ErrSegmentsChanged.
func (r *batchReader) open(fs segment.FS, s segment.SegmentInfo) error {
	r.close()
	f, err := fs.OpenFile(s.Path, os.O_RDONLY, 0)
	if errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("segment %s: %w", s.Path, ErrSegmentsChanged)
	}
	if err != nil {
		return fmt.Errorf("open segment %s: %w", s.Path, err)
	}
	r.f, r.name, r.size, r.pos, r.have, r.at = f, s.Path, s.Size, 0, 0, 0
	return nil
}

// close closes the current file and gives back a grown buffer.
func (r *batchReader) close() {
	if r.f != nil {
		r.f.Close()
		r.f = nil
	}
	if len(r.buf) > r.chunk {
		r.buf = make([]byte, r.chunk)
	}
}

// next returns the next batch's header, its bytes (valid until the next
// call) and its position in the file, or io.EOF after the last one.
func (r *batchReader) next() (record.BatchHeader, []byte, int64, error) {
	pos := r.pos + int64(r.at)
	if pos >= r.size {
		return record.BatchHeader{}, nil, pos, io.EOF
	}
	if err := r.fill(record.BatchHeaderSize); err != nil {
		return record.BatchHeader{}, nil, pos, err
	}
	h, n, err := record.NextBatch(r.buf[r.at:r.have], 0)
	if errors.Is(err, record.ErrShortBatch) && n > 0 {
		err = r.fill(n)
		if err == nil {
			h, n, err = record.NextBatch(r.buf[r.at:r.have], 0)
		}
	}
	if err != nil {
		return h, nil, pos, fmt.Errorf("%w: %s at byte %d: %w", ErrCorruptSegment, r.name, pos, err)
	}
	b := r.buf[r.at : r.at+n]
	r.at += n
	return h, b, pos, nil
}

// fill makes at least need bytes from r.at available in buf, moving what
// is left to the front and reading the next chunk; it grows buf for a
// batch larger than it.
func (r *batchReader) fill(need int) error {
	if r.have-r.at >= need {
		return nil
	}
	rest := r.size - (r.pos + int64(r.at))
	if int64(need) > rest {
		return fmt.Errorf("%w: %s at byte %d: %d bytes needed, %d left", ErrCorruptSegment, r.name, r.pos+int64(r.at), need, rest)
	}
	if need > len(r.buf) {
		grown := make([]byte, need)
		copy(grown, r.buf[r.at:r.have])
		r.buf = grown
	} else {
		copy(r.buf, r.buf[r.at:r.have])
	}
	r.pos += int64(r.at)
	r.have -= r.at
	r.at = 0
	want := int(min(int64(len(r.buf)), r.size-r.pos)) - r.have
	n, err := r.f.ReadAt(r.buf[r.have:r.have+want], r.pos+int64(r.have))
	r.have += n
	r.th.maybeThrottle(r.ctx, n)
	if err != nil && !(errors.Is(err, io.EOF) && n == want) {
		return fmt.Errorf("read segment %s at %d: %w", r.name, r.pos, err)
	}
	return nil
}
