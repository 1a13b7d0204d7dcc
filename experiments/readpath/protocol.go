package main

import (
	"encoding/binary"
	"fmt"
	"io"
)

// The experiment's wire protocol, a stripped-down Kafka fetch (all integers
// big-endian):
//
//	consumer -> server  hello     u32 consumer index
//	server -> consumer  go        1 byte, once every consumer said hello
//	consumer -> server  fetch     u64 position in the consumer's stream, u32 max bytes
//	server -> consumer  response  u32 length L, then L bytes (never crossing a segment)
//	consumer -> server  done      a fetch with max bytes 0, after the last byte
//
// In the raw push mode the server answers go with the whole stream, then
// shuts down its write side; the consumer reads to EOF and sends done. The
// server stops the clock when the last done arrives.
const (
	helloLen    = 4
	fetchReqLen = 12
	respHdrLen  = 4
)

func putHello(b []byte, idx int) { binary.BigEndian.PutUint32(b, uint32(idx)) }

func readHello(r io.Reader) (int, error) {
	var b [helloLen]byte
	if _, err := io.ReadFull(r, b[:]); err != nil {
		return 0, fmt.Errorf("read hello: %w", err)
	}
	return int(binary.BigEndian.Uint32(b[:])), nil
}

func putFetch(b []byte, pos int64, max int64) {
	binary.BigEndian.PutUint64(b, uint64(pos))
	binary.BigEndian.PutUint32(b[8:], uint32(max))
}

func readFetch(r io.Reader, b []byte) (pos, max int64, err error) {
	if _, err := io.ReadFull(r, b[:fetchReqLen]); err != nil {
		return 0, 0, fmt.Errorf("read fetch: %w", err)
	}
	return int64(binary.BigEndian.Uint64(b)), int64(binary.BigEndian.Uint32(b[8:])), nil
}
