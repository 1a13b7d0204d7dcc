// Command readpath measures Varve's read paths against each other and
// against the disk model: issue 4's experiment.
//
// Kafka's read path bets on the OS page cache and on sendfile(2), so fetched
// bytes never cross user space. This experiment sends the same segment
// files to consumers over loopback TCP through seven paths:
//
//	raw         sendfile(2) called directly, pushing each stream with no
//	            protocol
//	raw-fetch   the same raw loop answering fetch requests; the faster of
//	            raw and raw-fetch in the same run is the limit the sendfile
//	            path is held to (issue 4: at least 90% of it)
//	sendfile    pagecache.Region.WriteTo (Varve's path)
//	readwrite   Region's copying path: pread into a pooled buffer, write
//	mmap        pagecache.MmapReader: write slices of a read-only mapping
//	blockcache  pagecache.BlockCache on ristretto (64 KiB blocks)
//	ssl         pagecache.Region.WriteTo on a crypto/tls connection: the
//	            broker's SSL listener, where sendfile is lost and Region
//	            copies through a pooled buffer into the TLS writer
//
// under two workloads: tail reads (the newest bytes, resident in the page
// cache; the block cache is warm) and catch-up reads (the whole log, evicted
// with fdatasync + fadvise(DONTNEED) before every run; the block cache is
// cold), with 1, 4 and 16 concurrent consumers.
//
// # Running
//
// From the repository root:
//
//	go run ./experiments/readpath -quick   # smoke run: 512 MiB log, a minute or two
//	go run ./experiments/readpath          # full run: 4 GiB log in 1 GiB segments
//
// It shows a progress bar and writes, under
// experiments/readpath/results/<YYYY-MM-DD>/ (results/quick/ for -quick): readpath.csv (one row per
// run), calibration.json (the disk model used), PNG and SVG plots, and
// summary.md (tables, the targets of issue 4 with pass/fail, and for -quick
// the expected length of a full run). Segment files go to a temporary
// directory under -dir (default the system temp directory) and are removed
// at the end unless -keep. Run it on an otherwise idle machine: it measures
// CPU time and bandwidth, and other work on the machine distorts both.
//
// Flags: -catchup-bytes, -tail-bytes, -tail-passes, -segment-bytes,
// -fetch-bytes (Kafka's max.partition.fetch.bytes, default 1 MiB),
// -cache-bytes, -consumers, -paths, -workloads, -reps, -no-model,
// -fadvise-sequential, -inproc, -verify, -no-progress; see -help.
//
// summary.md compares ssl with sendfile (a PLAINTEXT listener) and with
// readwrite (the same copy without the encryption) in the same run, and
// records what the kernel says about kernel TLS: the tls upper-layer
// protocol (TCP_ULP "tls", then TLS_TX with the handshake's keys) that
// would let sendfile(2) carry on under TLS. The probe reads
// /proc/sys/net/ipv4/tcp_available_ulp and asks for the ULP on a
// connected loopback socket; there is no kTLS path until a kernel that
// offers it is at hand to measure it on.
//
// # Method
//
// Each consumer reads one contiguous page-aligned slice of the range (one
// partition each) with one fetch in flight, as a Kafka consumer has per
// broker. Consumers run in a child process (this binary with -role
// consumer), so getrusage of the sending process counts only the send path;
// they hash what they receive and a run fails on any wrong byte. The clock
// runs from the server's "go" to the last consumer's "done". Catch-up runs
// are compared with diskmodel's sequential-read, cold
// buffered-read and seek predictions (ratios predicted/measured), tail runs
// with its page-cache read prediction.
//
// The segment files hold synthetic incompressible bytes whose content is a
// function of the byte's position, so expected hashes are computed without
// reading the files back (which would warm the page cache).
//
// # Concurrency
//
// The server runs one goroutine per consumer connection for the length of a
// run, plus one goroutine feeding the progress bar; a BlockCache adds
// ristretto's goroutines while its run lasts. Runs happen one at a time.
package main
