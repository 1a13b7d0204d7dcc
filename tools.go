//go:build tools

// Package tools pins dependencies that packages still under construction will use.
// It is removed once every dependency is imported by real code.
package tools

import (
	_ "github.com/anishathalye/porcupine"
	_ "github.com/cespare/xxhash/v2"
	_ "github.com/dgraph-io/ristretto/v2"
	_ "github.com/edsrzf/mmap-go"
	_ "github.com/google/btree"
	_ "github.com/google/go-cmp/cmp"
	_ "github.com/klauspost/compress/zstd"
	_ "github.com/pierrec/lz4/v4"
	_ "github.com/prometheus/client_golang/prometheus"
	_ "github.com/spf13/cobra"
	_ "github.com/twmb/franz-go/pkg/kadm"
	_ "github.com/twmb/franz-go/pkg/kerr"
	_ "github.com/twmb/franz-go/pkg/kfake"
	_ "github.com/twmb/franz-go/pkg/kgo"
	_ "github.com/twmb/franz-go/pkg/kmsg"
	_ "github.com/vbauerster/mpb/v8"
	_ "go.uber.org/goleak"
	_ "golang.org/x/sys/unix"
	_ "gonum.org/v1/plot"
	_ "pgregory.net/rapid"
)
