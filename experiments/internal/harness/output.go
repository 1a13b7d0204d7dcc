package harness

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// WriteCSV writes a header line and rows to path.
func WriteCSV(path string, header []string, rows [][]string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	w.Write(header)
	w.WriteAll(rows) // flushes
	if err := w.Error(); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	return f.Close()
}

// WriteCalibration writes the session's disk model to calibration.json in
// dir, without the measuring machine's path; nothing without a model.
func (s *Session) WriteCalibration(dir string) error {
	if s.Model == nil {
		return nil
	}
	c := *s.Model
	c.Dir = "" // a path of the measuring machine, not a result
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "calibration.json"), append(b, '\n'), 0o644)
}

// G formats a CSV figure with six significant digits.
func G(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }

// US formats a duration as microseconds for a CSV column.
func US(d time.Duration) string { return G(float64(d) / 1e3) }

// SizeName is 512B, 1KiB, 16KiB, 1MiB, 4GiB: the largest unit that
// divides n exactly.
func SizeName(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%dGiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%dMiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%dKiB", n>>10)
	}
	return fmt.Sprintf("%dB", n)
}

// BytesName is a byte count in B, KiB, MiB or GiB, for tables.
func BytesName(v float64) string {
	switch {
	case v >= 1<<30:
		return fmt.Sprintf("%.2f GiB", v/(1<<30))
	case v >= 1<<20:
		return fmt.Sprintf("%.1f MiB", v/(1<<20))
	case v >= 1<<10:
		return fmt.Sprintf("%.1f KiB", v/(1<<10))
	}
	return fmt.Sprintf("%.0f B", v)
}
