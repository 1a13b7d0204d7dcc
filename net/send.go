package net

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	stdnet "net"

	"golang.org/x/sys/unix"

	"github.com/varve/varve/pagecache"
)

// Response frame layout, big-endian:
//
//	offset 0  int32  size: bytes that follow
//	offset 4  int32  correlation_id (response header v0)
//	offset 8  uint8  0 = no tagged fields (response header v1 only: flexible
//	                 versions except ApiVersions)
//	then the parts of Response, in order, as the handler encoded them.
const maxResponseHeader = 9

// maxIovecs bounds the byte parts gathered into one writev.
const maxIovecs = 64

// errResponseTooLarge is returned for a response whose frame would not fit
// the int32 size prefix.
var errResponseTooLarge = errors.New("net: response larger than 2 GiB - 1")

// encodeResponseHeader writes the size prefix and response header for a
// body of bodyLen bytes and returns how many bytes of dst it used.
func encodeResponseHeader(dst *[maxResponseHeader]byte, req *Request, bodyLen int64) (int, error) {
	hl := responseHeaderLen(req.Key, req.Flexible)
	size := int64(hl) + bodyLen
	if bodyLen < 0 || size > math.MaxInt32 {
		return 0, fmt.Errorf("response to key %d correlation %d (%d body bytes): %w", req.Key, req.CorrelationID, bodyLen, errResponseTooLarge)
	}
	binary.BigEndian.PutUint32(dst[0:], uint32(size))
	binary.BigEndian.PutUint32(dst[4:], uint32(req.CorrelationID))
	dst[8] = 0
	return sizePrefixLen + hl, nil
}

// validParts reports an error for a region with a negative length.
func validParts(parts []Part) error {
	for i, p := range parts {
		if p.Region != nil && p.Region.Len < 0 {
			return fmt.Errorf("response part %d: region length %d: %w", i, p.Region.Len, errBadPart)
		}
	}
	return nil
}

var errBadPart = errors.New("net: invalid response part")

// sendState is a response being written to a non-blocking socket, resumable
// after EAGAIN at exactly the next unsent byte. Byte parts are gathered into
// one writev; regions go through Region.SendTo (sendfile).
type sendState struct {
	resp     Response
	hdr      [maxResponseHeader]byte
	hdrLen   int
	hdrOff   int
	part     int // index of the part being sent
	off      int // bytes of parts[part] sent, for a byte part
	region   pagecache.Region
	inRegion bool
	iov      [][]byte
}

// init prepares s to send resp as the answer to req.
func (s *sendState) init(req *Request, resp Response) error {
	*s = sendState{resp: resp, iov: s.iov[:0]}
	if err := validParts(resp.Parts); err != nil {
		return err
	}
	n, err := encodeResponseHeader(&s.hdr, req, resp.size())
	s.hdrLen = n
	return err
}

// writeTo writes what fd takes. It returns the bytes written, whether the
// response is complete, and an error other than EAGAIN (EAGAIN returns
// done == false and err == nil: wait for EPOLLOUT).
func (s *sendState) writeTo(fd int) (n int64, done bool, err error) {
	for {
		if s.inRegion {
			k, err := s.region.SendTo(fd)
			n += k
			if err != nil {
				return n, false, ignoreAgain(err)
			}
			s.inRegion = false
			s.part++
			continue
		}
		iov := s.gather()
		if len(iov) == 0 {
			// Nothing left before the next region: step over empty byte parts.
			for s.part < len(s.resp.Parts) && s.resp.Parts[s.part].Region == nil {
				s.part++
				s.off = 0
			}
			if s.part >= len(s.resp.Parts) {
				return n, true, nil
			}
			s.region = *s.resp.Parts[s.part].Region
			s.inRegion = true
			continue
		}
		k, err := writev(fd, iov)
		if k > 0 {
			n += int64(k)
			s.advance(k)
		}
		if err != nil {
			return n, false, ignoreAgain(err)
		}
	}
}

// ignoreAgain maps EAGAIN to nil.
func ignoreAgain(err error) error {
	if err == unix.EAGAIN {
		return nil
	}
	return err
}

// gather returns the unsent header bytes and byte parts up to the next region.
func (s *sendState) gather() [][]byte {
	iov := s.iov[:0]
	if s.hdrOff < s.hdrLen {
		iov = append(iov, s.hdr[s.hdrOff:s.hdrLen])
	}
	off := s.off
	for i := s.part; i < len(s.resp.Parts) && len(iov) < maxIovecs; i++ {
		p := s.resp.Parts[i]
		if p.Region != nil {
			break
		}
		if len(p.Bytes) > off {
			iov = append(iov, p.Bytes[off:])
		}
		off = 0
	}
	s.iov = iov
	return iov
}

// advance records k bytes written from what gather returned, and steps over
// empty byte parts so the next gather starts at a region or unsent byte.
func (s *sendState) advance(k int) {
	h := min(k, s.hdrLen-s.hdrOff)
	s.hdrOff += h
	k -= h
	for s.part < len(s.resp.Parts) && s.resp.Parts[s.part].Region == nil {
		rest := len(s.resp.Parts[s.part].Bytes) - s.off
		if k < rest {
			s.off += k
			return
		}
		k -= rest
		s.part++
		s.off = 0
	}
}

// writev writes iov to fd, retrying EINTR.
func writev(fd int, iov [][]byte) (int, error) {
	for {
		var n int
		var err error
		if len(iov) == 1 {
			n, err = unix.Write(fd, iov[0])
		} else {
			n, err = unix.Writev(fd, iov)
		}
		if err != unix.EINTR {
			return max(n, 0), err
		}
	}
}

// writeBlocking writes a response to a blocking connection: header and byte
// parts gathered with writev (net.Buffers), regions with Region.WriteTo
// (sendfile through the runtime's poller).
func writeBlocking(w io.Writer, req *Request, resp *Response) (int64, error) {
	if err := validParts(resp.Parts); err != nil {
		return 0, err
	}
	var hdr [maxResponseHeader]byte
	hl, err := encodeResponseHeader(&hdr, req, resp.size())
	if err != nil {
		return 0, err
	}
	bufs := stdnet.Buffers{hdr[:hl]}
	var total int64
	for _, p := range resp.Parts {
		if p.Region == nil {
			if len(p.Bytes) > 0 {
				bufs = append(bufs, p.Bytes)
			}
			continue
		}
		n, err := bufs.WriteTo(w)
		total += n
		if err != nil {
			return total, err
		}
		m, err := p.Region.WriteTo(w)
		total += m
		if err != nil {
			return total, err
		}
	}
	n, err := bufs.WriteTo(w)
	return total + n, err
}
