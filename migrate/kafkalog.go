package migrate

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/varve/varve/record"
)

// MetadataLogDir is the directory of Kafka's KRaft metadata log inside
// its metadata.log.dir.
const MetadataLogDir = "__cluster_metadata-0"

// maxMetadataBatch bounds a batch read from the metadata log before it
// is allocated: Kafka's controller writes batches of at most
// 8 MiB (KafkaRaftClient's MAX_BATCH_SIZE_BYTES); twice that leaves
// room and still refuses a corrupt length.
const maxMetadataBatch = 16 << 20

// entry is one batch's metadata records (the values of its records, in
// Kafka's binary format) at its base offset.
type entry struct {
	offset int64
	values [][]byte
}

// source is where the records of an image come from: the newest
// snapshot, then the log's batches from the snapshot's end offset on.
type source struct {
	snapshot    string // path of the .checkpoint read, "" for none
	snapshotEnd int64  // the log's batches below this are in the snapshot
	segments    []string
	entries     []entry
	tornBytes   int64 // bytes after the last whole batch of the last segment
}

// readMetadataLog reads dir (a __cluster_metadata-0 directory): the
// newest <endOffset>-<epoch>.checkpoint, then every batch of its
// segments at or after that snapshot's end offset. Control batches
// (leader changes, snapshot header and footer, voters) carry no
// metadata records and are skipped.
func readMetadataLog(dir string) (*source, error) {
	names, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("no KRaft metadata log at %s: give Kafka's metadata.log.dir with --metadata-dir (a ZooKeeper-mode Kafka must first migrate to KRaft)", dir)
	}
	if err != nil {
		return nil, fmt.Errorf("metadata log: %w", err)
	}
	src := &source{}
	for _, e := range names {
		switch {
		case strings.HasSuffix(e.Name(), ".checkpoint"):
			end, ok := checkpointEnd(e.Name())
			if ok && (src.snapshot == "" || end >= src.snapshotEnd) {
				src.snapshot, src.snapshotEnd = filepath.Join(dir, e.Name()), end
			}
		case strings.HasSuffix(e.Name(), ".log"):
			src.segments = append(src.segments, filepath.Join(dir, e.Name()))
		}
	}
	slices.Sort(src.segments) // %020d names sort by base offset
	if src.snapshot != "" {
		torn, err := readBatches(src.snapshot, 0, &src.entries)
		if err != nil {
			return nil, err
		}
		if torn > 0 {
			return nil, fmt.Errorf("metadata snapshot %s: %d bytes after its last whole batch", src.snapshot, torn)
		}
	}
	for i, seg := range src.segments {
		torn, err := readBatches(seg, src.snapshotEnd, &src.entries)
		if err != nil {
			return nil, err
		}
		if torn > 0 && i != len(src.segments)-1 {
			return nil, fmt.Errorf("metadata log segment %s: %d bytes after its last whole batch, and segments follow it", seg, torn)
		}
		src.tornBytes = torn
	}
	return src, nil
}

// checkpointEnd parses a snapshot's name, <endOffset:%020d>-<epoch:%010d>.checkpoint.
func checkpointEnd(name string) (int64, bool) {
	off, _, ok := strings.Cut(strings.TrimSuffix(name, ".checkpoint"), "-")
	if !ok || len(off) != 20 {
		return 0, false
	}
	n, err := strconv.ParseInt(off, 10, 64)
	return n, err == nil
}

// readBatches appends the metadata records of path's data batches at or
// after from to out. It returns how many bytes followed the last whole
// batch (a torn tail, which Kafka truncates at recovery).
func readBatches(path string, from int64, out *[]entry) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, fmt.Errorf("metadata log: %w", err)
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<16)
	var pos int64
	for {
		buf, err := nextBatch(r)
		if errors.Is(err, io.EOF) {
			return 0, nil
		}
		if err != nil {
			st, serr := f.Stat()
			if serr != nil {
				return 0, fmt.Errorf("metadata log: %w", serr)
			}
			return st.Size() - pos, nil
		}
		h, _, err := record.NextBatch(buf, maxMetadataBatch)
		if err != nil {
			return 0, fmt.Errorf("metadata log %s at byte %d: %w", path, pos, err)
		}
		pos += int64(len(buf))
		if h.IsControl() || h.LastOffset() < from {
			continue
		}
		recs, err := record.DecodeBatch(buf, nil)
		if err != nil {
			return 0, fmt.Errorf("metadata log %s at offset %d: %w", path, h.BaseOffset, err)
		}
		e := entry{offset: h.BaseOffset}
		for _, rec := range recs {
			if rec.Offset >= from {
				e.values = append(e.values, rec.Value)
			}
		}
		*out = append(*out, e)
	}
}

// nextBatch reads one whole batch: io.EOF at a clean end, another error
// (with the bytes read) when the tail is torn or the length is out of
// bounds.
func nextBatch(r *bufio.Reader) ([]byte, error) {
	head, err := r.Peek(record.LogOverhead)
	if len(head) == 0 && errors.Is(err, io.EOF) {
		return nil, io.EOF
	}
	if err != nil {
		return head, fmt.Errorf("torn batch header: %w", err)
	}
	n := int64(binary.BigEndian.Uint32(head[8:12]))
	if n < record.MinBatchLength || n > maxMetadataBatch {
		return head, fmt.Errorf("batch length %d out of bounds", n)
	}
	buf := make([]byte, record.LogOverhead+n)
	got, err := io.ReadFull(r, buf)
	if err != nil {
		return buf[:got], fmt.Errorf("torn batch: %w", err)
	}
	return buf, nil
}
