package main

import (
	"encoding/json"
	"fmt"
	"time"
)

// Orchestrator <-> children, one line each way:
//
//	server stdout  "addr <host:port>"        once listening
//	server stdin   "mark"    -> "ok"          start of the measured window
//	server stdin   "report"  -> <serverReport JSON>
//	server stdin   EOF                         shut down and exit
//	loadgen stdout "connected <n> <error or ->" after dialing
//	loadgen stdout "start" / "stop"            measured window begins / ends
//	loadgen stdin  "close"                     close the connections (after the server reported)
//	loadgen stdout <loadReport JSON>           then exits
const (
	lineAddr      = "addr"
	lineMark      = "mark"
	lineOK        = "ok"
	lineReport    = "report"
	lineConnected = "connected"
	lineStart     = "start"
	lineStop      = "stop"
	lineClose     = "close"
)

// serverReport is what the server measured over the window.
type serverReport struct {
	WallSeconds    float64 `json:"wall_s"`
	UserCPUSeconds float64 `json:"user_cpu_s"`
	SysCPUSeconds  float64 `json:"sys_cpu_s"`
	RSSBytes       int64   `json:"rss_bytes"`
	RSSPeakBytes   int64   `json:"rss_peak_bytes"`
	HeapInuse      uint64  `json:"heap_inuse_bytes"`
	StackInuse     uint64  `json:"stack_inuse_bytes"`
	GoSys          uint64  `json:"go_sys_bytes"`
	Goroutines     int     `json:"goroutines"`
	Threads        int64   `json:"threads"`
	Connections    int64   `json:"connections"`
	Requests       int64   `json:"requests"`
	BytesOut       int64   `json:"bytes_out"`
	IdleRatio      float64 `json:"processor_idle_ratio"` // -1 for the goroutine server
}

// loadReport is what the load generator measured.
type loadReport struct {
	Connected      int     `json:"connected"`
	DialError      string  `json:"dial_error,omitempty"`
	DialSeconds    float64 `json:"dial_s"`
	WindowSeconds  float64 `json:"window_s"`
	Responses      int64   `json:"responses"`
	ResponseBytes  int64   `json:"response_bytes"`
	Errors         int64   `json:"errors"`
	FirstError     string  `json:"first_error,omitempty"`
	P50us          float64 `json:"p50_us"`
	P99us          float64 `json:"p99_us"`
	P999us         float64 `json:"p999_us"`
	UserCPUSeconds float64 `json:"user_cpu_s"`
	SysCPUSeconds  float64 `json:"sys_cpu_s"`
}

func encodeLine(v any) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("encode %T: %w", v, err)
	}
	return string(b), nil
}

func micros(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
