package main

import (
	"fmt"
	"io"
	"net"
	"os"

	"github.com/varve/varve/pagecache"
	"golang.org/x/sys/unix"
)

// sender moves bytes [off, off+n) of a segment to a consumer's socket: one
// implementation per read path. Opening (maps, caches) happens before the
// clock starts; send is what is timed.
type sender interface {
	send(c net.Conn, s *segment, off, n int64) (int64, error)
	close() error
}

// newSender opens the read path named path over ds. warm, if non-nil, is the
// logical range a warm cache should hold before the clock starts (tail reads:
// a user-space cache populated on the write path, as Redpanda's is).
func newSender(path string, ds *dataset, cacheBytes int64, warm *[2]int64) (sender, error) {
	switch path {
	case pathRaw, pathRawFetch:
		return rawSender{}, nil
	case pathSendfile, pathSSL:
		return regionSender{}, nil // on a TLS connection Region copies through crypto/tls
	case pathReadWrite:
		return regionSender{copying: true}, nil
	case pathMmap:
		return newMmapSender(ds)
	case pathBlockCache:
		return newCacheSender(ds, cacheBytes, warm)
	}
	return nil, fmt.Errorf("unknown path %q", path)
}

// rawSender is the baseline: sendfile(2) called directly on the two
// descriptors, with nothing of pagecache in between.
type rawSender struct{}

func (rawSender) send(c net.Conn, s *segment, off, n int64) (int64, error) {
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return 0, fmt.Errorf("raw sendfile needs a TCP connection, not %T", c)
	}
	return rawSendfile(tc, s.f, off, n)
}

func (rawSender) close() error { return nil }

// rawSendfile loops sendfile(2) until n bytes went out, letting the runtime's
// poller wait when the socket is full.
func rawSendfile(c *net.TCPConn, f *os.File, off, n int64) (int64, error) {
	rc, err := c.SyscallConn()
	if err != nil {
		return 0, err
	}
	infd := int(f.Fd())
	var sent int64
	var serr error
	werr := rc.Write(func(outfd uintptr) bool {
		for sent < n {
			m, err := unix.Sendfile(int(outfd), infd, &off, int(min(n-sent, 1<<30)))
			sent += int64(max(m, 0))
			switch {
			case err == unix.EAGAIN:
				return false
			case err == unix.EINTR:
			case err != nil:
				serr = err
				return true
			case m == 0:
				serr = io.ErrUnexpectedEOF
				return true
			}
		}
		return true
	})
	if serr == nil {
		serr = werr
	}
	return sent, serr
}

// regionSender is Varve's path: a pagecache.Region per response. With
// copying set, the socket is hidden behind a plain io.Writer so Region takes
// its pread+write path through a pooled 128 KiB buffer.
type regionSender struct{ copying bool }

func (r regionSender) send(c net.Conn, s *segment, off, n int64) (int64, error) {
	reg := pagecache.Region{File: s.f, Off: off, Len: n}
	if r.copying {
		return reg.WriteTo(struct{ io.Writer }{c})
	}
	return reg.WriteTo(c)
}

func (regionSender) close() error { return nil }

// mmapSender maps every segment read-only.
type mmapSender struct {
	maps map[*segment]*pagecache.MmapReader
}

func newMmapSender(ds *dataset) (*mmapSender, error) {
	m := &mmapSender{maps: map[*segment]*pagecache.MmapReader{}}
	for _, s := range ds.segs {
		r, err := pagecache.NewMmapReader(s.f)
		if err != nil {
			m.close()
			return nil, err
		}
		m.maps[s] = r
	}
	return m, nil
}

func (m *mmapSender) send(c net.Conn, s *segment, off, n int64) (int64, error) {
	return m.maps[s].WriteRange(c, off, n)
}

func (m *mmapSender) close() error {
	var first error
	for _, r := range m.maps {
		if err := r.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// cacheSender serves through one BlockCache shared by all consumers.
type cacheSender struct {
	cache   *pagecache.BlockCache
	readers map[*segment]*pagecache.CachedReader
}

func newCacheSender(ds *dataset, cacheBytes int64, warm *[2]int64) (*cacheSender, error) {
	c, err := pagecache.NewBlockCache(pagecache.BlockCacheConfig{MaxBytes: cacheBytes})
	if err != nil {
		return nil, err
	}
	cs := &cacheSender{cache: c, readers: map[*segment]*pagecache.CachedReader{}}
	for _, s := range ds.segs {
		cs.readers[s] = pagecache.NewCachedReader(c, s.f)
	}
	if warm != nil {
		for _, p := range ds.pieces(warm[0], warm[1]-warm[0]) {
			if _, err := cs.readers[p.seg].WriteRange(io.Discard, p.off, p.len); err != nil {
				c.Close()
				return nil, fmt.Errorf("warm block cache: %w", err)
			}
		}
	}
	return cs, nil
}

func (cs *cacheSender) send(c net.Conn, s *segment, off, n int64) (int64, error) {
	return cs.readers[s].WriteRange(c, off, n)
}

func (cs *cacheSender) close() error {
	cs.cache.Close()
	return nil
}
