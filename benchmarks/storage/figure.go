package storage

import (
	"fmt"
	"time"
)

// Status says how a figure compares with its target.
type Status string

const (
	Pass  Status = "PASS"  // the target is met
	Below Status = "BELOW" // the target is missed
	Info  Status = "INFO"  // no target: shown for context
)

// Figure is one measured result beside the disk model's prediction for the
// same work and the target issue 2 sets for it.
type Figure struct {
	Name     string  `json:"name"`
	Unit     string  `json:"unit"` // "MB/s", "µs" or "allocs/append"
	Measured float64 `json:"measured"`
	// Model is diskmodel's prediction for the same work, in Unit; 0 when
	// no model applies (CPU-only figures, allocation counts).
	Model float64 `json:"model,omitempty"`
	// Ratio compares the measurement with the model as a speed: 1 means as
	// fast as the model predicts, 0.5 half as fast, above 1 faster.
	Ratio  float64 `json:"ratio,omitempty"`
	Target string  `json:"target"`
	Status Status  `json:"status"`
	// Peer is the same I/O without the log (plain pwrite, fdatasync or
	// pread; see peers.go), measured just before, in Unit; 0 when the
	// figure has no peer. VsPeer is the log's speed over the peer's.
	Peer   float64 `json:"peer,omitempty"`
	VsPeer float64 `json:"vs_peer,omitempty"`
	Detail string  `json:"detail,omitempty"`
}

// Units.
const (
	unitMBps   = "MB/s"
	unitMicros = "µs"
	unitAllocs = "allocs/append"
)

// throughput builds a figure measured and modelled in bytes/s, shown in
// MB/s (10^6 bytes).
func throughput(name string, measuredBps, modelBps float64) Figure {
	f := Figure{Name: name, Unit: unitMBps, Measured: measuredBps / 1e6, Model: modelBps / 1e6, Status: Info, Target: "-"}
	if modelBps > 0 {
		f.Ratio = measuredBps / modelBps
	}
	return f
}

// latency builds a figure measured and modelled as durations, shown in µs;
// its ratio is model/measured (a speed).
func latency(name string, measured, model time.Duration) Figure {
	f := Figure{Name: name, Unit: unitMicros, Measured: micros(measured), Model: micros(model), Status: Info, Target: "-"}
	if measured > 0 && model > 0 {
		f.Ratio = model.Seconds() / measured.Seconds()
	}
	return f
}

func micros(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

// ratioAtLeast sets a target of at least min times the model.
func (f Figure) ratioAtLeast(min float64, of string) Figure {
	f.Target = fmt.Sprintf(">= %.2fx %s", min, of)
	f.Status = status(f.Ratio >= min)
	return f
}

// atLeast sets a target of at least min in the figure's unit.
func (f Figure) atLeast(min float64) Figure {
	f.Target = fmt.Sprintf(">= %g %s", min, f.Unit)
	f.Status = status(f.Measured >= min)
	return f
}

// under sets a target of less than max in the figure's unit.
func (f Figure) under(max float64) Figure {
	f.Target = fmt.Sprintf("< %g %s", max, f.Unit)
	f.Status = status(f.Measured < max)
	return f
}

// withPeer records the peer's throughput (bytes/s) of a throughput figure.
func (f Figure) withPeer(peerBps float64) Figure {
	f.Peer = peerBps / 1e6
	if f.Peer > 0 {
		f.VsPeer = f.Measured / f.Peer
	}
	return f
}

// detail appends a note to the figure.
func (f Figure) detail(format string, args ...any) Figure {
	if f.Detail != "" {
		f.Detail += "; "
	}
	f.Detail += fmt.Sprintf(format, args...)
	return f
}

func status(ok bool) Status {
	if ok {
		return Pass
	}
	return Below
}
