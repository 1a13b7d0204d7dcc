package pagecache

import (
	"fmt"
	"io"
	"net"
	"os"
	"testing"
)

// Benchmarks of the four read paths to a loopback TCP socket, the question
// behind Kafka's zero-copy design (KAFKA-REFERENCE §5): sendfile Region,
// read+write through a user buffer, mmap+write, and the ristretto block
// cache (warm). The file is in the page cache (tail reads); each op sends
// one fetch-sized range at a rotating offset. A goroutine drains the socket
// into a 1 MiB buffer, the same for every path.
//
//	go test -run '^$' -bench ReadPath -benchtime 2s ./pagecache/
//
// For catch-up reads, evictions, concurrency and CPU per GB, see
// experiments/readpath.

const benchFileSize = 64 << 20

var benchSizes = []int64{64 << 10, 1 << 20, 8 << 20}

func BenchmarkReadPathSendfile(b *testing.B) {
	runReadPathBench(b, func(env *benchEnv) sendFunc {
		return func(w io.Writer, off, n int64) (int64, error) {
			return Region{File: env.f, Off: off, Len: n}.WriteTo(w)
		}
	})
}

func BenchmarkReadPathReadWrite(b *testing.B) {
	runReadPathBench(b, func(env *benchEnv) sendFunc {
		return func(w io.Writer, off, n int64) (int64, error) {
			// Hiding the socket's fd forces Region's copying path:
			// pread into a pooled 128 KiB buffer, then write.
			return Region{File: env.f, Off: off, Len: n}.WriteTo(struct{ io.Writer }{w})
		}
	})
}

func BenchmarkReadPathMmap(b *testing.B) {
	runReadPathBench(b, func(env *benchEnv) sendFunc {
		m, err := NewMmapReader(env.f)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { m.Close() })
		return m.WriteRange
	})
}

func BenchmarkReadPathBlockCache(b *testing.B) {
	runReadPathBench(b, func(env *benchEnv) sendFunc {
		c, err := NewBlockCache(BlockCacheConfig{MaxBytes: 2 * benchFileSize})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(c.Close)
		r := NewCachedReader(c, env.f)
		if _, err := r.WriteRange(io.Discard, 0, benchFileSize); err != nil { // warm
			b.Fatal(err)
		}
		return r.WriteRange
	})
}

type sendFunc func(w io.Writer, off, n int64) (int64, error)

type benchEnv struct{ f *os.File }

func runReadPathBench(b *testing.B, mk func(*benchEnv) sendFunc) {
	f := writeFile(b, randomBytes(900, benchFileSize))
	if _, err := io.Copy(io.Discard, io.NewSectionReader(f, 0, benchFileSize)); err != nil {
		b.Fatal(err) // tail reads: make sure the file is resident
	}
	send := mk(&benchEnv{f: f})
	for _, size := range benchSizes {
		b.Run(fmt.Sprintf("size=%dKiB", size>>10), func(b *testing.B) {
			client, server := tcpPair(b)
			done := sink(server)
			b.SetBytes(size)
			b.ResetTimer()
			var off int64
			for b.Loop() {
				if _, err := send(client, off, size); err != nil {
					b.Fatal(err)
				}
				off = (off + size) % (benchFileSize - size)
			}
			b.StopTimer()
			client.Close()
			<-done
		})
	}
}

// sink reads and discards everything from c until EOF.
func sink(c net.Conn) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 1<<20)
		for {
			if _, err := c.Read(buf); err != nil {
				return
			}
		}
	}()
	return done
}
