package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// pingPong measures round trips per second of size-byte messages between
// two goroutines over loopback TCP: the ceiling for one request at a time
// on this machine, when client and server share a process (as the bench
// and kfake do).
func pingPong(ctx context.Context, size int, d time.Duration) (float64, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	go echo(ln, size)
	return pingPongTo(ctx, ln.Addr().String(), size, d)
}

// pingPongChild is pingPong with the echo server in a child process (this
// binary, run with -echo-server), as a broker is to its clients.
func pingPongChild(ctx context.Context, size int, d time.Duration) (float64, error) {
	exe, err := os.Executable()
	if err != nil {
		return 0, err
	}
	cmd := exec.CommandContext(ctx, exe, "-echo-server", strconv.Itoa(size))
	out, err := cmd.StdoutPipe()
	if err != nil {
		return 0, err
	}
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	addr, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		return 0, err
	}
	return pingPongTo(ctx, strings.TrimSpace(addr), size, d)
}

// runEchoServer is the child of pingPongChild: it prints its address and
// echoes one connection.
func runEchoServer(size int) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		os.Exit(2)
	}
	fmt.Println(ln.Addr().String())
	echo(ln, size)
}

func echo(ln net.Listener, size int) {
	c, err := ln.Accept()
	if err != nil {
		return
	}
	defer c.Close()
	buf := make([]byte, size)
	for {
		if _, err := io.ReadFull(c, buf); err != nil {
			return
		}
		if _, err := c.Write(buf); err != nil {
			return
		}
	}
}

func pingPongTo(ctx context.Context, addr string, size int, d time.Duration) (float64, error) {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	buf := make([]byte, size)
	n := 0
	start := time.Now()
	for time.Since(start) < d && ctx.Err() == nil {
		if _, err := c.Write(buf); err != nil {
			return 0, err
		}
		if _, err := io.ReadFull(c, buf); err != nil {
			return 0, err
		}
		n++
	}
	return float64(n) / time.Since(start).Seconds(), nil
}
