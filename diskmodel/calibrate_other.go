//go:build !linux

package diskmodel

import "context"

// Calibrate needs Linux (fdatasync, O_DIRECT, fadvise, mincore); elsewhere
// it returns ErrUnsupported. Cached calibrations and models still work.
func Calibrate(ctx context.Context, dir string, opts Options) (Calibration, error) {
	return Calibration{}, wrap("calibrate", dir, ErrUnsupported)
}
