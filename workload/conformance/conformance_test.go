package conformance

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"persistlab/measure"
	"persistlab/param"
	"persistlab/scenario"
	"persistlab/workload"
)

// selftest is a workload that keeps a count in a file and runs a `sleep` as its system under
// test; its parameters make it break one promise at a time, so the suite can be seen to catch it.
const selftest = "conformance-selftest"

func init() {
	flag := func(name, help string) param.Param {
		return param.Param{Name: name, Kind: param.KindBool, Default: "false", Help: help}
	}
	workload.Register(workload.Info{
		Name: selftest,
		Params: []param.Param{
			flag("leak", "Stop leaves the system under test running"),
			flag("orphan", "Start leaves a process behind that its parent no longer holds"),
			flag("lose", "acknowledge one more write than it makes"),
			flag("undeclared", "report a metric it does not declare"),
		},
		Metrics: []workload.Metric{{Name: "ok", Unit: "count"}},
		Timed:   true,
		New:     func(scenario.Workload) (workload.Workload, error) { return selfWorkload{}, nil },
	})
}

type selfWorkload struct{}

func (selfWorkload) Check(context.Context, workload.Params) error { return nil }
func (selfWorkload) Versions() map[string]string                  { return nil }

func (selfWorkload) Start(_ context.Context, env workload.Env) (workload.Instance, error) {
	on := func(name string) bool { v, _ := param.ParseBool(env.Params[name]); return v }
	in := &selfInstance{file: filepath.Join(env.Target.Dir, "count"), leak: on("leak"), lose: on("lose"), undeclared: on("undeclared"),
		done: make(chan struct{})}
	if on("orphan") { // a daemon's double fork: the sleep's parent exits at once
		if err := exec.Command("sh", "-c", "sleep 60 >/dev/null 2>&1 &").Run(); err != nil {
			return nil, err
		}
	}
	in.cmd = exec.Command("sleep", "60")
	in.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := in.cmd.Start(); err != nil {
		return nil, err
	}
	go func() { in.cmd.Wait(); close(in.done) }()
	return in, nil
}

func (selfWorkload) Inspect(dir, file string) workload.Survivor {
	if file == "" {
		file = filepath.Join(dir, "count")
	}
	n, err := readCount(file)
	if errors.Is(err, os.ErrNotExist) {
		return workload.Survivor{Counted: true, Integrity: "ok"}
	}
	if err != nil {
		return workload.Survivor{Exists: true, Counted: true, Integrity: err.Error()}
	}
	return workload.Survivor{Exists: true, Count: n, Counted: true, Integrity: "ok"}
}

func readCount(file string) (int64, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
}

type selfInstance struct {
	file                   string
	leak, lose, undeclared bool
	cmd                    *exec.Cmd
	done                   chan struct{}
	mu                     sync.Mutex
}

// write adds one to the count on disk and returns what it acknowledges.
func (in *selfInstance) write() (int64, error) {
	in.mu.Lock()
	defer in.mu.Unlock()
	n, err := readCount(in.file)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return 0, err
	}
	if err := os.WriteFile(in.file, []byte(strconv.FormatInt(n+1, 10)), 0o644); err != nil {
		return 0, err
	}
	if in.lose {
		return n + 2, nil
	}
	return n + 1, nil
}

func (in *selfInstance) Drive(ctx context.Context, d time.Duration) (*workload.Result, error) {
	res, _, err := in.DriveAcked(ctx, d)
	return res, err
}

func (in *selfInstance) DriveAcked(ctx context.Context, d time.Duration) (*workload.Result, *measure.AckLog, error) {
	start := time.Now()
	var acks []measure.Ack
	for time.Since(start) < d && ctx.Err() == nil {
		select {
		case <-in.done: // killed: nothing more is acknowledged
			return in.result(start, acks), measure.NewAckLog(acks), nil
		default:
		}
		n, err := in.write()
		if err != nil {
			return nil, nil, err
		}
		acks = append(acks, measure.Ack{Count: n, At: time.Now()})
		time.Sleep(2 * time.Millisecond)
	}
	return in.result(start, acks), measure.NewAckLog(acks), nil
}

func (in *selfInstance) result(start time.Time, acks []measure.Ack) *workload.Result {
	res := workload.NewResult()
	res.Elapsed = time.Since(start)
	res.Metrics["ok"] = float64(len(acks))
	if in.undeclared {
		res.Metrics["surprise"] = 1
	}
	return res
}

func (in *selfInstance) Kill() { _ = syscall.Kill(-in.cmd.Process.Pid, syscall.SIGKILL) }

func (in *selfInstance) Exited() <-chan struct{} { return in.done }

func (in *selfInstance) Count(context.Context) (int64, error) {
	n, err := readCount(in.file)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	return n, err
}

func (in *selfInstance) Stop(context.Context) error {
	if in.leak {
		return nil
	}
	in.Kill()
	<-in.done
	return nil
}

var (
	_ workload.Inspector    = selfWorkload{}
	_ workload.Acknowledged = (*selfInstance)(nil)
)

// A workload that keeps its promises passes the whole suite, the kill included.
func TestConformance(t *testing.T) {
	Run(t, selftest, Options{Drive: 200 * time.Millisecond, KillAfter: 200 * time.Millisecond})
}

// A process left behind by a child that exited is reparented to the test process and found by
// parent pid.
func TestConformanceFindsOrphans(t *testing.T) {
	becomeSubreaper(t)
	before := processes()
	out, err := exec.Command("sh", "-c", "sleep 60 >/dev/null 2>&1 & echo $!").Output()
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatal(err)
	}
	var found proc
	for k, p := range processes() {
		if _, ok := before[k]; !ok && p.PID == pid {
			found = p
		}
	}
	if found.PID != pid || found.PPID != os.Getpid() {
		t.Errorf("the orphaned sleep %d: found %+v, want it a child of this process (%d)", pid, found, os.Getpid())
	}
	if found.PID == pid && same(found) {
		syscall.Kill(pid, syscall.SIGKILL)
	}
	settle(t, before, "after the orphan was killed")
}

// Each broken promise fails the suite with its own message. The suite runs in a child test
// process (a failure there is what is tested), with a short grace for leaked processes.
func TestConformanceCatchesBrokenPromises(t *testing.T) {
	if os.Getenv(caseEnv) != "" {
		t.Skip("in the child")
	}
	for name, want := range map[string]string{
		"leak":       "after Stop, still running",
		"orphan":     "after Stop, still running",
		"lose":       "a process kill on a local disk loses nothing acknowledged",
		"undeclared": "metrics reported but not declared in Info.Metrics (no unit in the results file; a threshold on them is refused): surprise",
	} {
		t.Run(name, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestConformanceChild$", "-test.v", "-test.count=1")
			cmd.Env = append(os.Environ(), caseEnv+"="+name)
			out, err := cmd.CombinedOutput()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || !strings.Contains(string(out), want) {
				t.Errorf("case %s: %v; want a failure saying %q:\n%s", name, err, want, out)
			}
		})
	}
}

const caseEnv = "PERSISTLAB_CONFORMANCE_CASE"

func TestConformanceChild(t *testing.T) {
	name := os.Getenv(caseEnv)
	if name == "" {
		t.Skip("run by TestConformanceCatchesBrokenPromises")
	}
	settleWithin = 500 * time.Millisecond
	Run(t, selftest, Options{Fixed: map[string]string{name: "true"}, Drive: 200 * time.Millisecond, KillAfter: 200 * time.Millisecond})
}
