package chaos

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// netnsEnv marks a test process that runs inside the private network
// namespace EnterNetns made for it; its value is the test's name.
const netnsEnv = "VARVE_CHAOS_NETNS"

// EnterNetns runs the calling test in a private network namespace of
// its own, where nodes on 127.0.0.1, .2, .3 and the nft rules between
// them cannot touch the host or other tests:
//
//	func TestX(t *testing.T) {
//		if !chaos.EnterNetns(t) {
//			return // it ran, in its namespace; its result is this test's
//		}
//		... // inside the namespace
//	}
//
// Outside, it re-runs this one test in a child of the test binary
// started in a new network namespace (unshare(CLONE_NEWNET), as
// `unshare -n` does), streams the child's output into the test's, and
// returns false once the child is done, having failed or skipped t as
// the child did. Inside, it brings the loopback interface up and
// returns true. The namespace, and every nft rule in it, goes away
// with its last process.
//
// It needs root and nft. Without them the test skips, unless the CI
// environment variable is set: then it fails and says why.
func EnterNetns(t *testing.T) bool {
	t.Helper()
	if os.Getenv(netnsEnv) != "" {
		if err := enterOnce(); err != nil {
			t.Fatalf("in the test's network namespace: %v", err)
		}
		return true
	}
	if err := netnsAvailable(); err != nil {
		unavailable(t, err)
	}
	runInNetns(t)
	return false
}

var (
	enterOnceDone sync.Once
	enterOnceErr  error
)

// enterOnce checks that this process is in a namespace of its own and
// brings its loopback interface up.
func enterOnce() error {
	enterOnceDone.Do(func() {
		if private, err := privateNetns(); err != nil || !private {
			enterOnceErr = errors.Join(err, errors.New("not in a private network namespace"))
			return
		}
		enterOnceErr = loopbackUp()
	})
	return enterOnceErr
}

// netnsAvailable says what is missing to run a test in a namespace.
func netnsAvailable() error {
	if os.Geteuid() != 0 {
		return errors.New("network namespaces and nft rules need root")
	}
	if _, err := exec.LookPath("nft"); err != nil {
		return errors.New("nft is not installed (apt-get install nftables)")
	}
	return nil
}

// unavailable skips t, or fails it under CI, where a fault test that
// cannot run must not pass quietly.
func unavailable(t *testing.T, why error) {
	t.Helper()
	if os.Getenv("CI") != "" {
		t.Fatalf("cannot run in a network namespace (CI is set, so this fails rather than skips): %v", why)
	}
	t.Skipf("cannot run in a network namespace: %v", why)
}

// runInNetns runs t alone in a child test process in a new network
// namespace and reports its result as t's.
func runInNetns(t *testing.T) {
	t.Helper()
	host, err := netnsOf("self")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], childTestArgs(t)...)
	cmd.Env = append(os.Environ(), netnsEnv+"="+t.Name(), hostNetnsEnv+"="+host)
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNET, Pdeathsig: syscall.SIGKILL}
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	result := make(chan string, 1)
	go func() { result <- copyResult(t.Output(), pr, t.Name()) }()
	err = cmd.Start()
	if err == nil {
		err = cmd.Wait()
	}
	pw.Close()
	res := <-result
	switch {
	case errors.Is(err, syscall.EPERM):
		unavailable(t, fmt.Errorf("unshare(CLONE_NEWNET): %w", err))
	case err != nil:
		t.Fatalf("in its network namespace: %v", err)
	case res == "SKIP":
		t.Skip("skipped in its network namespace")
	case res != "PASS":
		t.Fatalf("the test did not run in its network namespace (-test.run matched nothing?)")
	}
}

// childTestArgs selects t alone, verbosely, with the flags this
// process was given that are not the testing package's (such as
// -chaos.seed), -test.short, and what is left of t's deadline.
func childTestArgs(t *testing.T) []string {
	parts := strings.Split(t.Name(), "/")
	for i, p := range parts {
		parts[i] = "^" + regexp.QuoteMeta(p) + "$"
	}
	args := []string{"-test.run=" + strings.Join(parts, "/"), "-test.v=true", "-test.count=1"}
	if testing.Short() {
		args = append(args, "-test.short")
	}
	if d, ok := t.Deadline(); ok {
		// A few seconds less, so the child reports its own timeout.
		args = append(args, "-test.timeout="+max(time.Until(d)-5*time.Second, time.Second).String())
	}
	flag.Visit(func(f *flag.Flag) {
		if !strings.HasPrefix(f.Name, "test.") {
			args = append(args, "-"+f.Name+"="+f.Value.String())
		}
	})
	return args
}

// copyResult copies the child's output to w line by line and returns
// what it said of the test named name: PASS, FAIL, SKIP, or "".
func copyResult(w io.Writer, r io.Reader, name string) string {
	verdict := regexp.MustCompile(`^\s*--- (PASS|FAIL|SKIP): ` + regexp.QuoteMeta(name) + ` \(`)
	res := ""
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		fmt.Fprintln(w, sc.Text())
		if m := verdict.FindStringSubmatch(sc.Text()); m != nil {
			res = m[1]
		}
	}
	io.Copy(io.Discard, r) // an over-long line: drain, so the child never blocks
	return res
}

// hostNetnsEnv carries the network namespace of the process that ran
// EnterNetns to its child, so the child can tell that its own differs.
const hostNetnsEnv = "VARVE_CHAOS_HOST_NETNS"

// privateNetns reports whether this process's network namespace differs
// from the one it must never change: the namespace of the test process
// that started it through EnterNetns, or else process 1's (the host's,
// or the container's).
func privateNetns() (bool, error) {
	self, err := netnsOf("self")
	if err != nil {
		return false, err
	}
	if host := os.Getenv(hostNetnsEnv); host != "" {
		return self != host, nil
	}
	first, err := netnsOf("1")
	if err != nil {
		return false, err
	}
	return self != first, nil
}

// netnsOf names the network namespace of a process ("self" or a pid),
// as /proc shows it: net:[inode].
func netnsOf(pid string) (string, error) {
	ns, err := os.Readlink("/proc/" + pid + "/ns/net")
	if err != nil {
		return "", fmt.Errorf("network namespace of process %s: %w", pid, err)
	}
	return ns, nil
}

// loopbackUp sets the IFF_UP flag of lo, as `ip link set lo up` does:
// a new network namespace starts with its loopback interface down.
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("loopback up: %w", err)
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return fmt.Errorf("loopback up: %w", err)
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return fmt.Errorf("loopback up: SIOCGIFFLAGS: %w", err)
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	if err := unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr); err != nil {
		return fmt.Errorf("loopback up: SIOCSIFFLAGS: %w", err)
	}
	return nil
}

// RunInNetns is EnterNetns for a program rather than a test: outside,
// it runs this program again with the same arguments in a new private
// network namespace, its output and input the program's, and returns
// inside=false with the child's error once the child exits; inside
// (the child), it brings the loopback interface up and returns
// inside=true. Without root or nft it returns an error saying which.
func RunInNetns() (inside bool, err error) {
	if os.Getenv(netnsEnv) != "" {
		return true, enterOnce()
	}
	if err := netnsAvailable(); err != nil {
		return false, fmt.Errorf("chaos: cannot run in a network namespace: %w", err)
	}
	host, err := netnsOf("self")
	if err != nil {
		return false, err
	}
	cmd := exec.Command(os.Args[0], os.Args[1:]...)
	cmd.Env = append(os.Environ(), netnsEnv+"=process", hostNetnsEnv+"="+host)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNET, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Run(); err != nil {
		return false, fmt.Errorf("chaos: in its network namespace: %w", err)
	}
	return false, nil
}
