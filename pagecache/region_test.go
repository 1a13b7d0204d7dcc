package pagecache

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"testing/iotest"
	"time"

	"golang.org/x/sys/unix"
)

// Kafka: FileRecords.writeTo -> FileChannel.transferTo (sendfile). A fetch
// response's records must reach the consumer byte for byte, from any batch
// position (not page aligned) and of any length.
func TestRegionWriteToTCP(t *testing.T) {
	data := randomBytes(1, 5<<20+123)
	f := writeFile(t, data)
	cases := []struct{ off, n int64 }{
		{0, int64(len(data))},
		{1, 1},
		{4093, 70001},
		{int64(len(data)) - 17, 17},
		{12345, 3 << 20},
	}
	for _, c := range cases {
		client, server := tcpPair(t)
		got := drain(server)
		n, err := Region{File: f, Off: c.off, Len: c.n}.WriteTo(client)
		client.CloseWrite()
		if err != nil || n != c.n {
			t.Fatalf("WriteTo [%d,+%d) = %d, %v", c.off, c.n, n, err)
		}
		if want := data[c.off : c.off+c.n]; !bytes.Equal(<-got, want) {
			t.Fatalf("region [%d,+%d): bytes differ", c.off, c.n)
		}
	}
}

// Regions share one *os.File among all readers of a segment, so a send must
// not move the file's own offset (Kafka's FileChannel.transferTo takes an
// explicit position for the same reason).
func TestRegionLeavesFileOffsetAlone(t *testing.T) {
	data := randomBytes(2, 1<<20)
	f := writeFile(t, data)
	if _, err := f.Seek(777, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	client, server := tcpPair(t)
	got := drain(server)
	if _, err := (Region{File: f, Off: 10, Len: 1000}).WriteTo(client); err != nil {
		t.Fatal(err)
	}
	client.Close()
	<-got
	if pos, _ := f.Seek(0, io.SeekCurrent); pos != 777 {
		t.Fatalf("file offset moved to %d, want 777", pos)
	}
}

// A receiver that reads slowly fills the socket buffer, so sendfile moves
// only part of the region per call and SendTo must return EAGAIN and resume
// at exactly the next byte when epoll reports the socket writable (Kafka:
// RecordsSend keeps `remaining` and KafkaChannel keeps OP_WRITE interest
// until the send completes).
func TestRegionSendToSlowReceiverResumes(t *testing.T) {
	data := randomBytes(3, 2<<20+5)
	f := writeFile(t, data)
	client, server := tcpPair(t)
	fd := nonBlockingFd(t, client)
	if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_SNDBUF, 32<<10); err != nil {
		t.Fatal(err)
	}

	got := make(chan []byte, 1)
	go func() { got <- slowRead(server, len(data)-3) }()

	r := Region{File: f, Off: 3, Len: int64(len(data)) - 3}
	sent, eagains := sendWithEpoll(t, fd, &r)
	if sent != int64(len(data))-3 || r.Len != 0 || r.Off != int64(len(data)) {
		t.Fatalf("sent %d, region left %+v", sent, r)
	}
	if eagains == 0 {
		t.Fatal("socket never filled: the test did not exercise partial writes")
	}
	if !bytes.Equal(<-got, data[3:]) {
		t.Fatal("bytes differ after resumption")
	}
	t.Logf("%d EAGAIN resumptions", eagains)
}

// nonBlockingFd returns a non-blocking descriptor for c's socket, owned by
// the test (a dup, so the runtime's poller does not interfere).
func nonBlockingFd(t *testing.T, c interface{ File() (*os.File, error) }) int {
	t.Helper()
	f, err := c.File()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	fd := int(f.Fd())
	if err := unix.SetNonblock(fd, true); err != nil {
		t.Fatal(err)
	}
	return fd
}

// sendWithEpoll drives r.SendTo the way an event loop does.
func sendWithEpoll(t *testing.T, fd int, r *Region) (sent int64, eagains int) {
	t.Helper()
	ep, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(ep)
	ev := unix.EpollEvent{Events: unix.EPOLLOUT, Fd: int32(fd)}
	if err := unix.EpollCtl(ep, unix.EPOLL_CTL_ADD, fd, &ev); err != nil {
		t.Fatal(err)
	}
	events := make([]unix.EpollEvent, 1)
	deadline := time.Now().Add(30 * time.Second)
	for r.Len > 0 && time.Now().Before(deadline) {
		n, err := r.SendTo(fd)
		sent += n
		switch {
		case err == unix.EAGAIN:
			eagains++
			if _, err := unix.EpollWait(ep, events, 1000); err != nil && err != unix.EINTR {
				t.Fatal(err)
			}
		case err != nil:
			t.Fatalf("SendTo: %v", err)
		}
	}
	return sent, eagains
}

// slowRead reads n bytes in small pieces with pauses, like a slow consumer.
func slowRead(c io.Reader, n int) []byte {
	out := make([]byte, 0, n)
	buf := make([]byte, 8<<10)
	for i := 0; len(out) < n; i++ {
		m, err := c.Read(buf[:min(len(buf), n-len(out))])
		out = append(out, buf[:m]...)
		if err != nil {
			break
		}
		if i%16 == 0 {
			time.Sleep(time.Millisecond)
		}
	}
	return out
}

// Kafka sends empty record sets for fetches at the log end; an empty region
// must cost nothing and succeed on every path, including at end of file.
func TestRegionZeroLength(t *testing.T) {
	data := randomBytes(4, 10000)
	f := writeFile(t, data)
	for _, r := range []Region{{}, {File: f, Off: 0}, {File: f, Off: 10000}, {File: f, Off: 5000}} {
		client, _ := tcpPair(t)
		if n, err := r.WriteTo(client); n != 0 || err != nil {
			t.Fatalf("%+v WriteTo = %d, %v", r, n, err)
		}
		if n, err := r.SendTo(-1); n != 0 || err != nil {
			t.Fatalf("%+v SendTo = %d, %v", r, n, err)
		}
		if b, err := r.Bytes(); len(b) != 0 || err != nil {
			t.Fatalf("%+v Bytes = %d bytes, %v", r, len(b), err)
		}
	}
}

// A region ending exactly at end of file (the active segment's last batch)
// is complete.
func TestRegionEndingAtEOF(t *testing.T) {
	data := randomBytes(5, 100000)
	f := writeFile(t, data)
	r := Region{File: f, Off: 99000, Len: 1000}
	client, server := tcpPair(t)
	got := drain(server)
	if n, err := r.WriteTo(client); n != 1000 || err != nil {
		t.Fatalf("WriteTo = %d, %v", n, err)
	}
	client.Close()
	if !bytes.Equal(<-got, data[99000:]) {
		t.Fatal("bytes differ")
	}
	b, err := r.Bytes()
	if err != nil || !bytes.Equal(b, data[99000:]) {
		t.Fatalf("Bytes: %v", err)
	}
}

// A region past end of file (the segment was truncated after the read cut
// it) delivers the bytes that exist and then fails with ErrTruncated,
// Kafka's "truncated during write", on every path.
func TestRegionPastEOF(t *testing.T) {
	data := randomBytes(6, 100000)
	f := writeFile(t, data)
	r := Region{File: f, Off: 90000, Len: 20000}

	client, server := tcpPair(t)
	got := drain(server)
	n, err := r.WriteTo(client)
	client.Close()
	if n != 10000 || !errors.Is(err, ErrTruncated) {
		t.Fatalf("WriteTo = %d, %v; want 10000, ErrTruncated", n, err)
	}
	if !bytes.Equal(<-got, data[90000:]) {
		t.Fatal("WriteTo prefix differs")
	}

	var buf bytes.Buffer
	if n, err := r.WriteTo(&buf); n != 10000 || !errors.Is(err, ErrTruncated) {
		t.Fatalf("copying WriteTo = %d, %v", n, err)
	}
	if _, err := r.Bytes(); !errors.Is(err, ErrTruncated) {
		t.Fatalf("Bytes err = %v", err)
	}
	p := make([]byte, 20000)
	if n, err := r.ReadAt(p, 0); n != 10000 || !errors.Is(err, ErrTruncated) {
		t.Fatalf("ReadAt = %d, %v", n, err)
	}

	client2, server2 := tcpPair(t)
	got2 := drain(server2)
	fd := nonBlockingFd(t, client2)
	rr := r
	sent, _ := sendUntilError(fd, &rr)
	client2.Close()
	unix.Shutdown(fd, unix.SHUT_WR)
	if sent.n != 10000 || !errors.Is(sent.err, ErrTruncated) {
		t.Fatalf("SendTo = %d, %v", sent.n, sent.err)
	}
	if rr.Off != 100000 || rr.Len != 10000 {
		t.Fatalf("SendTo left region %+v; want it to point at the first missing byte", rr)
	}
	if !bytes.Equal(<-got2, data[90000:]) {
		t.Fatal("SendTo prefix differs")
	}
	var re *RegionError
	if !errors.As(sent.err, &re) || re.Op != "sendfile" || re.Off != 100000 {
		t.Fatalf("error %v does not locate the failure", sent.err)
	}
}

type sendResult struct {
	n   int64
	err error
}

// sendUntilError calls SendTo until it completes or fails with something
// other than EAGAIN (the socket buffer is large enough for these tests).
func sendUntilError(fd int, r *Region) (sendResult, int) {
	var res sendResult
	for i := 0; ; i++ {
		n, err := r.SendTo(fd)
		res.n += n
		if err != unix.EAGAIN || i > 1000 {
			res.err = err
			return res, i
		}
		time.Sleep(time.Millisecond)
	}
}

// Writers without a descriptor (a bytes.Buffer, a TLS conn) and descriptor
// pairs the kernel will not sendfile between (an O_APPEND file) get the
// copying path, with the same bytes (Kafka: SslTransportLayer copies).
func TestRegionCopyingFallback(t *testing.T) {
	data := randomBytes(7, 300000)
	f := writeFile(t, data)
	r := Region{File: f, Off: 1234, Len: 250000}

	var buf bytes.Buffer
	if n, err := r.WriteTo(&buf); n != r.Len || err != nil {
		t.Fatalf("WriteTo(buffer) = %d, %v", n, err)
	}
	if !bytes.Equal(buf.Bytes(), data[1234:251234]) {
		t.Fatal("buffer bytes differ")
	}

	path := filepath.Join(t.TempDir(), "append")
	af, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer af.Close()
	if n, err := r.WriteTo(af); n != r.Len || err != nil {
		t.Fatalf("WriteTo(O_APPEND file) = %d, %v", n, err)
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, data[1234:251234]) {
		t.Fatal("appended bytes differ")
	}
}

// sendfile to a plain file (a follower's copy, a test) works too.
func TestRegionWriteToFile(t *testing.T) {
	data := randomBytes(8, 1<<20)
	f := writeFile(t, data)
	path := filepath.Join(t.TempDir(), "copy")
	out, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	if n, err := (Region{File: f, Off: 100, Len: 1 << 19}).WriteTo(out); n != 1<<19 || err != nil {
		t.Fatalf("WriteTo(file) = %d, %v", n, err)
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, data[100:100+1<<19]) {
		t.Fatal("file bytes differ")
	}
}

// A write deadline on the connection bounds a blocked WriteTo (Kafka closes
// connections whose sends stall past request.timeout on the client side).
func TestRegionWriteToHonoursDeadline(t *testing.T) {
	data := randomBytes(9, 8<<20)
	f := writeFile(t, data)
	client, _ := tcpPair(t) // nobody reads
	client.SetWriteBuffer(4096)
	client.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
	n, err := Region{File: f, Len: int64(len(data))}.WriteTo(client)
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("err = %v, want deadline exceeded", err)
	}
	if n >= int64(len(data)) {
		t.Fatalf("sent %d of %d to a receiver that never read", n, len(data))
	}
}

// Closing the file while a send is blocked must give an error, never a
// crash or bytes from a recycled descriptor (Kafka keeps deleted segments
// open until a delayed delete for the same reason).
func TestRegionFileClosedDuringSend(t *testing.T) {
	data := randomBytes(10, 16<<20)
	path := filepath.Join(t.TempDir(), "seg.log")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	client, server := tcpPair(t)
	client.SetWriteBuffer(4096)
	var wg sync.WaitGroup
	wg.Add(1)
	var n int64
	var werr error
	go func() {
		defer wg.Done()
		n, werr = Region{File: f, Len: int64(len(data))}.WriteTo(client)
	}()
	time.Sleep(20 * time.Millisecond) // the sender is now blocked on a full socket
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	got := drain(server)
	wg.Wait()
	client.Close()
	prefix := <-got
	if !errors.Is(werr, os.ErrClosed) {
		t.Fatalf("WriteTo after Close: n=%d err=%v, want os.ErrClosed", n, werr)
	}
	if int64(len(prefix)) != n || !bytes.Equal(prefix, data[:n]) {
		t.Fatalf("received %d bytes, WriteTo reported %d, or they differ", len(prefix), n)
	}

	r := Region{File: f, Len: 10}
	if _, err := r.SendTo(-1); !errors.Is(err, os.ErrClosed) {
		t.Fatalf("SendTo on closed file: %v", err)
	}
	if _, err := r.Bytes(); !errors.Is(err, os.ErrClosed) {
		t.Fatalf("Bytes on closed file: %v", err)
	}
}

// ReadAt obeys the io.ReaderAt contract over the region's bounds.
func TestRegionReadAt(t *testing.T) {
	data := randomBytes(11, 70000)
	f := writeFile(t, data)
	r := Region{File: f, Off: 5000, Len: 60000}
	if err := iotest.TestReader(io.NewSectionReader(r, 0, r.Len), data[5000:65000]); err != nil {
		t.Fatal(err)
	}
	p := make([]byte, 100)
	if n, err := r.ReadAt(p, 59950); n != 50 || err != io.EOF {
		t.Fatalf("ReadAt across end = %d, %v", n, err)
	}
	if _, err := r.ReadAt(p, -1); err == nil {
		t.Fatal("negative offset accepted")
	}
}

func TestRegionSlice(t *testing.T) {
	r := Region{Off: 100, Len: 50}
	cases := []struct {
		off, n    int64
		wOff, wLn int64
	}{
		{0, 50, 100, 50},
		{10, 10, 110, 10},
		{40, 100, 140, 10},
		{-5, 10, 100, 10},
		{60, 10, 150, 0},
		{10, -1, 110, 0},
	}
	for _, c := range cases {
		s := r.Slice(c.off, c.n)
		if s.Off != c.wOff || s.Len != c.wLn {
			t.Errorf("Slice(%d,%d) = [%d,+%d), want [%d,+%d)", c.off, c.n, s.Off, s.Len, c.wOff, c.wLn)
		}
	}
}
