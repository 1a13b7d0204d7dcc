package main

import (
	"bufio"
	"os"
	"strconv"
	"strings"
)

// tcpCounters are the machine's TCP retransmission counters: on loopback
// a retransmitted segment waits for the retransmission timeout (200 ms
// at least), which a replication round trip then includes.
type tcpCounters struct {
	RetransSegs int64 // /proc/net/snmp Tcp RetransSegs
	Timeouts    int64 // /proc/net/netstat TcpExt TCPTimeouts: retransmissions after an RTO
}

func readTCPCounters() tcpCounters {
	return tcpCounters{RetransSegs: procNetField("/proc/net/snmp", "Tcp:", "RetransSegs"),
		Timeouts: procNetField("/proc/net/netstat", "TcpExt:", "TCPTimeouts")}
}

// procNetField reads one counter of a /proc/net file laid out as pairs
// of lines, names then values, each starting with prefix; -1 when
// absent.
func procNetField(path, prefix, name string) int64 {
	f, err := os.Open(path)
	if err != nil {
		return -1
	}
	defer f.Close()
	return netField(bufio.NewScanner(f), prefix, name)
}

func netField(sc *bufio.Scanner, prefix, name string) int64 {
	var names []string
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, prefix) {
			continue
		}
		fields := strings.Fields(line)[1:]
		if names == nil {
			names = fields
			continue
		}
		for i, n := range names {
			if n == name && i < len(fields) {
				v, err := strconv.ParseInt(fields[i], 10, 64)
				if err == nil {
					return v
				}
			}
		}
		return -1
	}
	return -1
}

// sub is the counters' change since before.
func (c tcpCounters) sub(before tcpCounters) tcpCounters {
	return tcpCounters{c.RetransSegs - before.RetransSegs, c.Timeouts - before.Timeouts}
}
