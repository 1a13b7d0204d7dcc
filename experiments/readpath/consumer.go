package main

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"sync"

	"github.com/cespare/xxhash/v2"
	"golang.org/x/sys/unix"
)

// consumerSpec tells the consumer side what to read; the experiment passes
// it as JSON on the child's stdin.
type consumerSpec struct {
	Addr   string
	Fetch  int64
	Push   bool
	Verify bool
	Totals []int64 // bytes each consumer reads
	// TLSRoots, when set, is the PEM certificate the server's chains to:
	// the consumers speak TLS from their first byte (the ssl path).
	TLSRoots []byte
}

// consumerReport is the child's answer on stdout.
type consumerReport struct {
	Bytes  []int64
	Hashes []uint64
	CPU    float64 // seconds of user+system CPU of the consumer process
	Err    string
}

// consumerMain is the entry point of `readpath -role consumer`.
func consumerMain(in io.Reader, out io.Writer) int {
	var spec consumerSpec
	if err := json.NewDecoder(in).Decode(&spec); err != nil {
		fmt.Fprintln(os.Stderr, "readpath consumer:", err)
		return 2
	}
	rep := consumeAll(spec)
	rep.CPU = cpuSeconds()
	if err := json.NewEncoder(out).Encode(rep); err != nil {
		return 2
	}
	return 0
}

// consumeAll runs one goroutine per consumer and gathers what they read.
func consumeAll(spec consumerSpec) consumerReport {
	n := len(spec.Totals)
	rep := consumerReport{Bytes: make([]int64, n), Hashes: make([]uint64, n)}
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rep.Bytes[i], rep.Hashes[i], errs[i] = consume(spec, i)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		rep.Err = err.Error()
	}
	return rep
}

// consume is one consumer: hello, wait for go, read its stream, done.
func consume(spec consumerSpec, idx int) (int64, uint64, error) {
	c, err := net.Dial("tcp", spec.Addr)
	if err != nil {
		return 0, 0, err
	}
	if len(spec.TLSRoots) > 0 {
		roots := x509.NewCertPool()
		roots.AppendCertsFromPEM(spec.TLSRoots)
		host, _, _ := net.SplitHostPort(spec.Addr)
		c = tls.Client(c, &tls.Config{RootCAs: roots, ServerName: host})
	}
	defer c.Close()
	var b [fetchReqLen]byte
	putHello(b[:], idx)
	if _, err := c.Write(b[:helloLen]); err != nil {
		return 0, 0, err
	}
	if _, err := io.ReadFull(c, b[:1]); err != nil {
		return 0, 0, fmt.Errorf("wait for go: %w", err)
	}
	var h *xxhash.Digest
	if spec.Verify {
		h = xxhash.New()
	}
	read := readFetched
	if spec.Push {
		read = readPushed
	}
	n, err := read(c, spec, spec.Totals[idx], h)
	if err != nil {
		return n, 0, err
	}
	putFetch(b[:], 0, 0)
	if _, err := c.Write(b[:]); err != nil {
		return n, 0, fmt.Errorf("send done: %w", err)
	}
	if h == nil {
		return n, 0, nil
	}
	return n, h.Sum64(), nil
}

// readFetched issues one fetch at a time (a Kafka consumer has one fetch in
// flight per broker) until total bytes arrived.
func readFetched(c net.Conn, spec consumerSpec, total int64, h *xxhash.Digest) (int64, error) {
	buf := make([]byte, 1<<20)
	var req [fetchReqLen]byte
	var pos int64
	for pos < total {
		putFetch(req[:], pos, min(spec.Fetch, total-pos))
		if _, err := c.Write(req[:]); err != nil {
			return pos, err
		}
		if _, err := io.ReadFull(c, req[:respHdrLen]); err != nil {
			return pos, fmt.Errorf("read response at %d: %w", pos, err)
		}
		n := binary.BigEndian.Uint32(req[:respHdrLen])
		if n == 0 {
			return pos, fmt.Errorf("empty response at %d of %d", pos, total)
		}
		if err := readBody(c, int64(n), buf, h); err != nil {
			return pos, err
		}
		pos += int64(n)
	}
	return pos, nil
}

// readPushed reads the raw push to EOF.
func readPushed(c net.Conn, _ consumerSpec, total int64, h *xxhash.Digest) (int64, error) {
	buf := make([]byte, 1<<20)
	var n int64
	for {
		m, err := c.Read(buf)
		n += int64(m)
		if h != nil {
			h.Write(buf[:m])
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return n, err
		}
	}
	if n != total {
		return n, fmt.Errorf("push delivered %d bytes, want %d", n, total)
	}
	return n, nil
}

func readBody(c net.Conn, n int64, buf []byte, h *xxhash.Digest) error {
	for n > 0 {
		m, err := io.ReadFull(c, buf[:min(n, int64(len(buf)))])
		if h != nil {
			h.Write(buf[:m])
		}
		n -= int64(m)
		if err != nil {
			return fmt.Errorf("read response body: %w", err)
		}
	}
	return nil
}

// startConsumers starts the consumer side: a child process running this
// binary with -role consumer (so getrusage of this process counts only the
// sending side), or goroutines here when inproc is set.
func startConsumers(spec consumerSpec, inproc bool) (func() (consumerReport, error), error) {
	if inproc {
		ch := make(chan consumerReport, 1)
		go func() { ch <- consumeAll(spec) }()
		return func() (consumerReport, error) {
			rep := <-ch
			rep.CPU = -1 // not separable from the server's
			return rep, reportErr(rep)
		}, nil
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	return startChild(exe, spec)
}

func startChild(exe string, spec consumerSpec) (func() (consumerReport, error), error) {
	cmd := exec.Command(exe, "-role", "consumer")
	in, err := json.Marshal(spec)
	if err != nil {
		return nil, err
	}
	cmd.Stdin = bytes.NewReader(in)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start consumer process: %w", err)
	}
	return func() (consumerReport, error) {
		var rep consumerReport
		derr := json.NewDecoder(stdout).Decode(&rep)
		werr := cmd.Wait()
		if err := errors.Join(derr, werr); err != nil {
			return rep, fmt.Errorf("consumer process: %w", err)
		}
		return rep, reportErr(rep)
	}, nil
}

func reportErr(rep consumerReport) error {
	if rep.Err != "" {
		return errors.New("consumers: " + rep.Err)
	}
	return nil
}

// cpuSeconds is this process's user+system CPU time so far (getrusage).
func cpuSeconds() float64 {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		return -1
	}
	return tvSeconds(ru.Utime) + tvSeconds(ru.Stime)
}

func tvSeconds(tv unix.Timeval) float64 {
	return float64(tv.Sec) + float64(tv.Usec)/1e6
}
