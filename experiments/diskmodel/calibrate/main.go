// Command calibrate measures the disk under a directory, prints the
// calibration as a table and caches it in that directory (.diskmodel.json),
// where diskmodel.Load and LoadOrCalibrate find it.
//
//	go run ./experiments/diskmodel/calibrate -dir DIR [-quick] [-force] [-json]
//
// -dir defaults to the temp directory, whose cache diskmodel.ForTempDir
// (and so every benchmark) reads.
// Without -force a cached calibration younger than -max-age taken on the
// same device is printed instead of measuring again.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"time"

	"github.com/varve/varve/diskmodel"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run() error {
	dir := flag.String("dir", os.TempDir(), "directory on the device to calibrate; the cache is written here (the default is the one benchmarks read, via diskmodel.ForTempDir)")
	quick := flag.Bool("quick", false, "rough calibration in a few seconds (32 MiB file, 250 ms per figure)")
	force := flag.Bool("force", false, "measure even if a fresh cache exists")
	maxAge := flag.Duration("max-age", diskmodel.DefaultMaxAge, "oldest cached calibration to accept")
	fileSize := flag.Int64("file-size", 0, "bytes per sequential test file (0: default)")
	budget := flag.Duration("duration", 0, "time budget per measurement (0: default)")
	noDirect := flag.Bool("no-direct", false, "read the device via fadvise(DONTNEED)+pread instead of O_DIRECT")
	asJSON := flag.Bool("json", false, "print JSON instead of a table")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	opts := diskmodel.Options{FileSize: *fileSize, Duration: *budget, Quick: *quick, DisableDirectIO: *noDirect}
	age := *maxAge
	if *force {
		age = time.Nanosecond // nothing cached is that fresh
	}
	c, err := diskmodel.LoadOrCalibrate(ctx, *dir, age, opts)
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(c)
	}
	fmt.Print(c.String())
	return nil
}
