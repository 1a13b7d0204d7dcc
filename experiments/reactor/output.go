package main

import (
	"encoding/csv"
	"errors"
	"fmt"
	"os"
	"sort"
	"strconv"
)

// row is one run as written to results.csv.
type row struct {
	spec
	Connected    int   // by the load generator
	ServerConns  int64 // open at the server at the end of the window
	DialError    string
	Throughput   float64 // responses per second in the window
	MBps         float64 // response body MB/s
	P50, P99     float64 // microseconds
	P999         float64
	ServerCores  float64 // server CPU seconds per wall second
	CPUPerReqUs  float64 // server CPU microseconds per response
	RSSMB        float64
	RSSPeakMB    float64
	HeapStackMB  float64 // Go heap in use + goroutine stacks
	Goroutines   int
	Threads      int64
	IdleRatio    float64 // processors' time in epoll_wait; -1 without processors
	ClientCores  float64
	Errors       int64
	FirstError   string
	WindowSecond float64
}

func makeRow(sp spec, sr serverReport, lr loadReport) row {
	r := row{spec: sp, Connected: lr.Connected, ServerConns: sr.Connections, DialError: lr.DialError,
		P50: lr.P50us, P99: lr.P99us, P999: lr.P999us,
		RSSMB: mb(sr.RSSBytes), RSSPeakMB: mb(sr.RSSPeakBytes), HeapStackMB: mb(int64(sr.HeapInuse + sr.StackInuse)),
		Goroutines: sr.Goroutines, Threads: sr.Threads, IdleRatio: sr.IdleRatio,
		Errors: lr.Errors, FirstError: lr.FirstError, WindowSecond: lr.WindowSeconds}
	if lr.WindowSeconds > 0 {
		r.Throughput = float64(lr.Responses) / lr.WindowSeconds
		r.MBps = float64(lr.ResponseBytes) / lr.WindowSeconds / 1e6
		r.ClientCores = (lr.UserCPUSeconds + lr.SysCPUSeconds) / lr.WindowSeconds
	}
	cpu := sr.UserCPUSeconds + sr.SysCPUSeconds
	if sr.WallSeconds > 0 {
		r.ServerCores = cpu / sr.WallSeconds
	}
	if lr.Responses > 0 {
		r.CPUPerReqUs = cpu / float64(lr.Responses) * 1e6
	}
	return r
}

func mb(b int64) float64 { return float64(b) / (1 << 20) }

var csvHeader = []string{"workload", "design", "conns", "rep", "connected", "server_connections", "dial_error",
	"throughput_rps", "mb_per_s", "p50_us", "p99_us", "p999_us",
	"server_cpu_cores", "server_cpu_us_per_req", "server_rss_mib", "server_rss_peak_mib",
	"server_heap_stack_mib", "server_goroutines", "server_threads", "processor_idle_ratio",
	"loadgen_cpu_cores", "errors", "first_error", "window_s"}

func (r row) record() []string {
	f := func(v float64, prec int) string { return strconv.FormatFloat(v, 'f', prec, 64) }
	return []string{r.workload, r.design, strconv.Itoa(r.conns), strconv.Itoa(r.rep + 1),
		strconv.Itoa(r.Connected), strconv.FormatInt(r.ServerConns, 10), r.DialError,
		f(r.Throughput, 0), f(r.MBps, 1), f(r.P50, 1), f(r.P99, 1), f(r.P999, 1),
		f(r.ServerCores, 3), f(r.CPUPerReqUs, 2), f(r.RSSMB, 1), f(r.RSSPeakMB, 1),
		f(r.HeapStackMB, 1), strconv.Itoa(r.Goroutines), strconv.FormatInt(r.Threads, 10), f(r.IdleRatio, 3),
		f(r.ClientCores, 3), strconv.FormatInt(r.Errors, 10), r.FirstError, f(r.WindowSecond, 3)}
}

// writeCSV rewrites path with every row so far (a partial run keeps its data).
func writeCSV(path string, rows []row) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("write csv: %w", err)
	}
	w := csv.NewWriter(f)
	w.Write(csvHeader)
	for _, r := range rows {
		w.Write(r.record())
	}
	w.Flush()
	if err := w.Error(); err != nil {
		f.Close()
		return fmt.Errorf("write csv %s: %w", path, err)
	}
	return f.Close()
}

// cellKey groups the repetitions of one point.
type cellKey struct {
	workload, design string
	conns            int
}

// medians reduces repetitions to the median of each figure.
func medians(rows []row) map[cellKey]row {
	groups := map[cellKey][]row{}
	for _, r := range rows {
		k := cellKey{r.workload, r.design, r.conns}
		groups[k] = append(groups[k], r)
	}
	out := map[cellKey]row{}
	for k, rs := range groups {
		m := rs[0]
		pick := func(get func(row) float64) float64 {
			vals := make([]float64, len(rs))
			for i, r := range rs {
				vals[i] = get(r)
			}
			sort.Float64s(vals)
			return vals[len(vals)/2]
		}
		m.Throughput = pick(func(r row) float64 { return r.Throughput })
		m.MBps = pick(func(r row) float64 { return r.MBps })
		m.P50 = pick(func(r row) float64 { return r.P50 })
		m.P99 = pick(func(r row) float64 { return r.P99 })
		m.P999 = pick(func(r row) float64 { return r.P999 })
		m.ServerCores = pick(func(r row) float64 { return r.ServerCores })
		m.CPUPerReqUs = pick(func(r row) float64 { return r.CPUPerReqUs })
		m.RSSMB = pick(func(r row) float64 { return r.RSSMB })
		m.HeapStackMB = pick(func(r row) float64 { return r.HeapStackMB })
		m.IdleRatio = pick(func(r row) float64 { return r.IdleRatio })
		m.ClientCores = pick(func(r row) float64 { return r.ClientCores })
		out[k] = m
	}
	return out
}

// readCSV loads the rows of a results.csv written by writeCSV (for -replot).
func readCSV(path string) ([]row, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read csv: %w", err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("read csv %s: %w", path, err)
	}
	if len(recs) == 0 || len(recs[0]) != len(csvHeader) {
		return nil, fmt.Errorf("read csv %s: header does not match this version", path)
	}
	var rows []row
	for i, rec := range recs[1:] {
		r, err := parseRecord(rec)
		if err != nil {
			return nil, fmt.Errorf("read csv %s line %d: %w", path, i+2, err)
		}
		rows = append(rows, r)
	}
	return rows, nil
}

// parseRecord is the inverse of row.record.
func parseRecord(rec []string) (row, error) {
	var r row
	var errs []error
	num := func(s string) float64 {
		v, err := strconv.ParseFloat(s, 64)
		errs = append(errs, err)
		return v
	}
	col := map[string]string{}
	for i, name := range csvHeader {
		col[name] = rec[i]
	}
	r.workload, r.design = col["workload"], col["design"]
	r.conns, r.rep = int(num(col["conns"])), int(num(col["rep"]))-1
	r.Connected, r.ServerConns = int(num(col["connected"])), int64(num(col["server_connections"]))
	r.Throughput, r.MBps = num(col["throughput_rps"]), num(col["mb_per_s"])
	r.P50, r.P99, r.P999 = num(col["p50_us"]), num(col["p99_us"]), num(col["p999_us"])
	r.ServerCores, r.CPUPerReqUs = num(col["server_cpu_cores"]), num(col["server_cpu_us_per_req"])
	r.RSSMB, r.HeapStackMB = num(col["server_rss_mib"]), num(col["server_heap_stack_mib"])
	r.Goroutines, r.IdleRatio = int(num(col["server_goroutines"])), num(col["processor_idle_ratio"])
	r.ClientCores, r.Errors = num(col["loadgen_cpu_cores"]), int64(num(col["errors"]))
	r.DialError, r.FirstError = col["dial_error"], col["first_error"]
	r.RSSPeakMB, r.Threads = num(col["server_rss_peak_mib"]), int64(num(col["server_threads"]))
	r.WindowSecond = num(col["window_s"])
	return r, errors.Join(errs...)
}
