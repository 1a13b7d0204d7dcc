package main

import (
	"context"
	"io"
	"net"
	"os"
	"time"
)

// calibration is what this run measured of the machine itself, the
// inputs of the models: nothing here involves Varve's network code.
type calibration struct {
	RTT          time.Duration // one 100-byte TCP round trip between two processes on loopback (median of the run)
	LoopbackBps  float64       // one TCP stream on loopback, 1 MiB writes, read and dropped by another goroutine
	SendfileBps  float64       // a page-cached file sent with sendfile to a loopback TCP socket, read and dropped
	AppendBps    float64       // a follower's append: segment.Log.AppendReplicated of 1 MiB fetches of 16 KiB batches
	Append       time.Duration // AppendReplicated of one batch of one small record (median)
	AppendFlush  time.Duration // the same with flush.messages=1 (an fsync each)
	DiskFsync4K  time.Duration // diskmodel: write + fdatasync of 4 KiB (median)
	PageCacheBps float64       // diskmodel: buffered sequential write
	Cores        int           // CPUs this process may use
}

// sink accepts one connection on loopback and reads it to the end,
// dropping the bytes; it reports the byte count when the peer closes.
func sink() (addr string, done <-chan int64, err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	ch := make(chan int64, 1)
	go func() {
		defer ln.Close()
		c, err := ln.Accept()
		if err != nil {
			ch <- 0
			return
		}
		defer c.Close()
		n, _ := io.Copy(io.Discard, c)
		ch <- n
	}()
	return ln.Addr().String(), ch, nil
}

// loopbackBandwidth copies 1 MiB writes through one loopback TCP
// connection for d: the raw bandwidth a leader's socket to one
// follower could reach.
func loopbackBandwidth(ctx context.Context, d time.Duration) (float64, error) {
	addr, done, err := sink()
	if err != nil {
		return 0, err
	}
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return 0, err
	}
	buf := make([]byte, 1<<20)
	var sent int64
	start := time.Now()
	for time.Since(start) < d && ctx.Err() == nil {
		n, err := c.Write(buf)
		sent += int64(n)
		if err != nil {
			c.Close()
			return 0, err
		}
	}
	c.Close()
	got := <-done
	return float64(min(sent, got)) / time.Since(start).Seconds(), nil
}

// sendfileBandwidth writes a file of size bytes under dir (so it is in
// the page cache), then sends it with sendfile (io.Copy from an
// *os.File to a *net.TCPConn uses sendfile(2) on Linux) to a loopback
// socket, again and again for d: the limit of a leader serving a
// follower that is behind from the page cache.
func sendfileBandwidth(ctx context.Context, dir string, size int64, d time.Duration) (float64, error) {
	f, err := os.CreateTemp(dir, "sendfile-")
	if err != nil {
		return 0, err
	}
	defer os.Remove(f.Name())
	defer f.Close()
	chunk := make([]byte, 1<<20)
	for i := range chunk {
		chunk[i] = byte('A' + i%26)
	}
	for w := int64(0); w < size; w += int64(len(chunk)) {
		if _, err := f.Write(chunk); err != nil {
			return 0, err
		}
	}
	addr, done, err := sink()
	if err != nil {
		return 0, err
	}
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		return 0, err
	}
	var sent int64
	start := time.Now()
	for time.Since(start) < d && ctx.Err() == nil {
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return 0, err
		}
		n, err := io.Copy(conn, f)
		sent += n
		if err != nil {
			conn.Close()
			return 0, err
		}
	}
	elapsed := time.Since(start)
	conn.Close()
	got := <-done
	return float64(min(sent, got)) / elapsed.Seconds(), nil
}
