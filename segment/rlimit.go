package segment

import (
	"errors"
	"fmt"
	"log/slog"

	"golang.org/x/sys/unix"
)

// ReservedDescriptors is what the descriptor budget keeps aside for
// everything but segments: client and peer connections, checkpoints,
// producer snapshots being written, the metadata log.
const ReservedDescriptors = 1024

// ErrTooManyOpenFiles: creating the logs asked for would take the
// process past its open-files limit.
var ErrTooManyOpenFiles = errors.New("open-files limit too low")

// DescriptorsNeeded is what partitions logs need open at once: each
// log's active segment, the sealed segments the file cache may keep
// open, and ReservedDescriptors.
func DescriptorsNeeded(partitions int, files *FileCache) uint64 {
	if files == nil {
		files = defaultFiles
	}
	return uint64(partitions) + uint64(files.MaxOpen()) + ReservedDescriptors
}

// RaiseFileLimit raises the soft RLIMIT_NOFILE to the hard limit (as
// Kafka's start scripts leave to the operator, and as Go does for
// itself since 1.19) and returns the soft limit now in force.
func RaiseFileLimit() (uint64, error) {
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
		return 0, fmt.Errorf("getrlimit(RLIMIT_NOFILE): %w", err)
	}
	if lim.Cur < lim.Max {
		want := lim
		want.Cur = lim.Max
		if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &want); err != nil {
			return lim.Cur, fmt.Errorf("setrlimit(RLIMIT_NOFILE, %d): %w", lim.Max, err)
		}
		lim.Cur = lim.Max
	}
	return lim.Cur, nil
}

// CheckFileLimit is the start-up check: it raises the soft open-files
// limit to the hard one and, when that is still below what partitions
// logs need (DescriptorsNeeded), logs one error line saying what to
// raise and to what. The broker goes on: the file cache keeps sealed
// segments within its bound, and creations are refused by
// CheckCanCreate.
func CheckFileLimit(partitions int, files *FileCache, logger *slog.Logger) {
	if logger == nil {
		logger = slog.Default()
	}
	soft, err := RaiseFileLimit()
	need := DescriptorsNeeded(partitions, files)
	switch {
	case err != nil:
		logger.Warn("could not raise the open-files limit", "limit", soft, "needed", need, "err", err)
	case soft < need:
		logger.Error("open-files limit too low for the log dirs: raise RLIMIT_NOFILE (ulimit -n, or LimitNOFILE= in the systemd unit)",
			"limit", soft, "raise_to", need, "partitions", partitions)
	}
}

// CheckCanCreate says whether adding partitions more logs to the
// existing ones keeps the process within its open-files limit, so that
// a topic or partition creation is refused whole instead of failing
// midway. The error wraps ErrTooManyOpenFiles and says what to raise.
func CheckCanCreate(existing, adding int, files *FileCache) error {
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
		return nil // nothing to check against
	}
	if need := DescriptorsNeeded(existing+adding, files); lim.Cur < need {
		return fmt.Errorf("%w: %d partitions would need %d open files, the limit is %d: raise RLIMIT_NOFILE (ulimit -n) to at least %d",
			ErrTooManyOpenFiles, existing+adding, need, lim.Cur, need)
	}
	return nil
}
