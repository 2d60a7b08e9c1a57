package fio

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	iproc "persistlab/internal/proc"
)

// JobFile is the job file's name in a cell's work directory.
const JobFile = "job.fio"

// EnvBinary names the fio executable to use instead of the one on PATH.
const EnvBinary = "PERSISTLAB_FIO"

// Find returns the fio executable: $PERSISTLAB_FIO if set, else fio on PATH.
func Find() (string, error) {
	if p := os.Getenv(EnvBinary); p != "" {
		st, err := os.Stat(p)
		if err != nil {
			return "", fmt.Errorf("%s=%q: %w", EnvBinary, p, err)
		}
		if st.IsDir() || st.Mode()&0o111 == 0 {
			return "", fmt.Errorf("%s=%q: want an executable file", EnvBinary, p)
		}
		return p, nil
	}
	p, err := exec.LookPath("fio")
	if err != nil {
		return "", fmt.Errorf("fio not found (Debian package fio; run scripts/setup): %w", err)
	}
	return p, nil
}

// Version is what `fio --version` says, e.g. fio-3.33; empty if fio cannot tell.
func Version(bin string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, _, err := runFio(ctx, bin, "", "--version")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// Check asks fio to read the job (fio --parse-only) without running it, so that an option fio
// does not know or a value it refuses stops a scenario before its first cell. The error joins
// Validate's problem, if any, and fio's own words. The job goes to fio on its stdin: nothing is
// written, so nothing is left behind. A job with an option persistlab refuses never reaches fio:
// reading a job, fio already loads an ioengine of any path.
func Check(ctx context.Context, bin string, job Job) error {
	if err := job.safe(); err != nil {
		return err
	}
	stdout, stderr, err := runFioInput(ctx, bin, "", []byte(job.File()), "--parse-only", "-")
	if err != nil {
		err = withFio(fmt.Errorf("fio refuses job %q: %w", job.Name, err), stderr, stdout)
	}
	return errors.Join(job.Validate(), err)
}

// Run writes the job file into workDir and runs fio on it. It returns fio's parsed report and its
// raw JSON (json+: the plain JSON plus latency histograms, which Merge needs). Cancelling ctx
// stops fio and everything it started.
func Run(ctx context.Context, bin string, job Job, workDir string) (*Output, []byte, error) {
	if err := job.Validate(); err != nil {
		return nil, nil, err
	}
	path, err := writeJob(job, workDir)
	if err != nil {
		return nil, nil, err
	}
	stdout, stderr, err := runFio(ctx, bin, workDir, "--output-format=json+", path)
	return finish(fmt.Sprintf("fio job %q", job.Name), stdout, stderr, err)
}

// Prefill lays out job's files as fio would at the job's start (fio's create_only, in a job file of
// its own in workDir) and syncs the file system they are on, so that the measured run finds them
// in place and none of their write-back pending. With servers the files are on this machine too.
func Prefill(ctx context.Context, bin string, job Job, workDir string) error {
	layout := job
	layout.Name = job.Name + "-prefill"
	layout.Extra = append(append([][2]string{}, job.Extra...), [2]string{"create_only", "1"}, [2]string{"create_fsync", "1"})
	dir := filepath.Join(workDir, "prefill")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if _, _, err := Run(ctx, bin, layout, dir); err != nil {
		return fmt.Errorf("prefill: %w", err)
	}
	f, err := os.Open(job.Directory)
	if err != nil {
		return fmt.Errorf("prefill: %w", err)
	}
	defer f.Close()
	if err := unix.Syncfs(int(f.Fd())); err != nil {
		return fmt.Errorf("prefill: syncfs %s: %w", job.Directory, err)
	}
	return nil
}

// finish parses fio's output and turns a failed run or a job's error into an error that carries
// fio's own message. Whatever fio reported is returned with the error.
func finish(what string, stdout, stderr []byte, runErr error) (*Output, []byte, error) {
	out, parseErr := Parse(stdout)
	if runErr != nil {
		return out, stdout, withFio(fmt.Errorf("%s: %w", what, runErr), stderr, nil)
	}
	if parseErr != nil {
		return nil, stdout, fmt.Errorf("%s: %w", what, parseErr)
	}
	for _, j := range out.Jobs {
		if j.Error != 0 {
			return out, stdout, withFio(fmt.Errorf("%s: fio reports error %d (%v) in job %q",
				what, j.Error, syscall.Errno(j.Error), j.Name), stderr, nil)
		}
	}
	return out, stdout, nil
}

func writeJob(job Job, workDir string) (string, error) {
	path := filepath.Join(workDir, JobFile)
	if err := os.WriteFile(path, []byte(job.File()), 0o644); err != nil {
		return "", fmt.Errorf("fio job %q: %w", job.Name, err)
	}
	return path, nil
}

// withFio appends fio's message, on one line, to err: stderr, else stdout.
func withFio(err error, stderr, stdout []byte) error {
	msg := strings.TrimSpace(string(stderr))
	if msg == "" {
		msg = strings.TrimSpace(string(stdout))
	}
	if msg == "" {
		return err
	}
	msg = strings.Join(strings.Fields(strings.ReplaceAll(msg, "\n", " | ")), " ")
	if len(msg) > 2000 {
		msg = "..." + msg[len(msg)-2000:]
	}
	return fmt.Errorf("%w: %s", err, msg)
}

// runFio runs fio; when ctx ends it stops fio and the job processes it forked (stopTree). fio is
// in a process group of its own, so a terminal's signals reach persistlab alone, and it gets
// SIGTERM if persistlab dies: on SIGTERM fio stops its own jobs, which SIGKILL would orphan.
func runFio(ctx context.Context, bin, dir string, args ...string) (stdout, stderr []byte, err error) {
	return runFioInput(ctx, bin, dir, nil, args...)
}

// maxReport bounds the fio output read: its JSON report, per job, with json+'s latency bins.
var maxReport = 64 << 20

// stderrTail is how much of the end of fio's stderr is kept, for its error.
const stderrTail = 64 << 10

// runFioInput is runFio with input on fio's stdin (none if nil). Its stdout, at most maxReport
// bytes (more is an error), and the last stderrTail bytes of its stderr are all it holds of them.
func runFioInput(ctx context.Context, bin, dir string, input []byte, args ...string) (stdout, stderr []byte, err error) {
	out, errb := iproc.NewLimitedBuffer(bin, maxReport), iproc.NewTailWriter(stderrTail)
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	if input != nil {
		cmd.Stdin = bytes.NewReader(input)
	}
	cmd.Stdout, cmd.Stderr = out, errb
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	cmd.WaitDelay = grace // a leftover process holding fio's stdout must not hang Wait
	if err := cmd.Start(); err != nil {
		return nil, nil, fmt.Errorf("start %s: %w", bin, err)
	}
	iproc.Started(cmd)
	var waitErr error
	done := make(chan struct{})
	go func() { waitErr = cmd.Wait(); close(done) }()
	select {
	case <-done:
		if waitErr == nil {
			waitErr = out.Err()
		}
		return out.Bytes(), errb.Bytes(), waitErr
	case <-ctx.Done():
	}
	err = fmt.Errorf("%s stopped: %w", bin, ctx.Err())
	if left := stopTree(context.Background(), cmd.Process.Pid, done); len(left) > 0 {
		err = fmt.Errorf("%w; processes %v still alive after SIGKILL", err, left)
	}
	return out.Bytes(), errb.Bytes(), err
}
