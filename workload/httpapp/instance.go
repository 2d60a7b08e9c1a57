package httpapp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"

	"persistlab/internal/cgroup"
	"persistlab/internal/proc"
	"persistlab/internal/tools"
	"persistlab/measure"
	"persistlab/workload"
	"persistlab/workload/httpload"
)

// placeholders fill an instance's placeholders: its directory and port, and where the target
// names a MySQL server (dsn), that server's address and user.
func placeholders(dir string, port int, dsn string) (*strings.Replacer, error) {
	pairs := []string{DirPlaceholder, dir, PortPlaceholder, strconv.Itoa(port), HostPlaceholder, host}
	if dsn != "" {
		cfg, err := mysql.ParseDSN(dsn)
		if err != nil {
			return nil, fmt.Errorf("the backend's MySQL server: %w", err)
		}
		if cfg.Net != "tcp" {
			return nil, fmt.Errorf("the backend's MySQL server is on %s, not TCP: mysql_env's %s and %s name a server on TCP (give the mysql backend a DSN like user@tcp(host:3306)/)", cfg.Net, MySQLHostPlaceholder, MySQLPortPlaceholder)
		}
		serverHost, serverPort, err := net.SplitHostPort(cfg.Addr)
		if err != nil {
			return nil, fmt.Errorf("the backend's MySQL server's address: %w", err)
		}
		pairs = append(pairs, MySQLHostPlaceholder, serverHost, MySQLPortPlaceholder, serverPort, MySQLUserPlaceholder, cfg.User)
	}
	return strings.NewReplacer(pairs...), nil
}

// substitute fills the placeholders of args.
func substitute(r *strings.Replacer, args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = r.Replace(a)
	}
	return out
}

// Start runs the preparation, if any, then the app on a free loopback port in the instance, and
// waits until it answers.
func (w *Workload) Start(ctx context.Context, env workload.Env) (workload.Instance, error) {
	s, err := read(env.Params, w.scenarioDir)
	if err == nil {
		err = w.checkRequestParams(env.Params)
	}
	if err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	server := "" // the server mysql_env names, where the app has one and the target names one
	if len(w.mysqlEnv) > 0 {
		server = env.Target.DSN
	}
	fill, err := placeholders(env.Target.Dir, port, server)
	if err != nil {
		return nil, err
	}
	environ := append(os.Environ(), substitute(fill, w.env)...)
	if server != "" {
		environ = append(environ, substitute(fill, w.mysqlEnv)...)
	}
	// In the emulated instance (Target.Wrap), on the app's CPUs (the driver has the others).
	var pin []string
	if len(env.CPUs) > 0 {
		list := make([]string, len(env.CPUs))
		for i, c := range env.CPUs {
			list[i] = strconv.Itoa(c)
		}
		pin = []string{"taskset", "-c", strings.Join(list, ",")}
	}
	// The preparation and the app in a cgroup of their own, inside the instance's: whatever they
	// start is stopped with them.
	group, noGroup := httpload.NewAppGroup(env)
	started := false
	defer func() {
		if !started {
			group.Close(cgroup.GroupWait) // a failed start leaves nothing of the app
		}
	}()
	inInstance := func(args []string) []string {
		return slices.Concat(env.Target.Wrap, group.Wrap(), pin, args)
	}
	log, tag := httpload.AppLog(env.CellDir)
	if len(w.prepare) > 0 {
		args := inInstance(substitute(fill, w.prepare))
		if err := w.runPrepare(ctx, args, environ, env.Target.Dir, filepath.Join(env.CellDir, "prepare"+tag+".log"), s.PrepareTimeout); err != nil {
			return nil, err
		}
	}
	child, err := proc.Start("app", log, environ, inInstance(substitute(fill, w.command))...)
	if err != nil {
		return nil, err
	}
	in := &instance{s: s, tag: tag, child: child, group: group, noGroup: noGroup, url: "http://" + net.JoinHostPort(host, strconv.Itoa(port)), port: port, log: log, cpus: len(env.CPUs), cellDir: env.CellDir,
		requests: w.requests, requestKeys: w.requestKeys}
	if s.k6Script != "" {
		if in.k6, err = tools.Find("k6"); err != nil {
			in.Stop(context.WithoutCancel(ctx))
			return nil, err
		}
	}
	if err := in.waitReady(ctx); err != nil {
		in.Stop(context.WithoutCancel(ctx))
		return nil, err
	}
	started = true
	return in, nil
}

// runPrepare runs the preparation (args, as it runs in the instance) in dir, its output appended
// to logPath, for at most timeout: then it is killed with its whole process group.
func (w *Workload) runPrepare(ctx context.Context, args, environ []string, dir, logPath string, timeout time.Duration) error {
	bounded, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	prep := proc.Command(bounded, args[0], args[1:]...)
	prep.Env, prep.Dir = environ, dir
	err := proc.RunLogged(prep, logPath, 10)
	ce, ran := errors.AsType[*proc.CommandError](err)
	if !ran {
		if err != nil {
			return fmt.Errorf("prepare (%s): %w", strings.Join(w.prepare, " "), err)
		}
		return nil
	}
	end := "nothing in " + logPath
	if ce.Output != "" {
		end = "the end of " + logPath + ":\n" + ce.Output
	}
	if ctx.Err() == nil && bounded.Err() != nil {
		return fmt.Errorf("prepare (%s) did not end within %v (prepare_timeout): it was killed with what it started; %s", strings.Join(w.prepare, " "), timeout, end)
	}
	// The command line named is the scenario's, without the instance's prefix.
	return fmt.Errorf("prepare (%s): %w; %s", strings.Join(w.prepare, " "), ce.Err, end)
}

// freePort is a loopback port nothing listens on now.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// instance is a running app.
type instance struct {
	s     settings
	child *proc.Child
	url   string
	port  int
	log   string
	cpus  int
	// cellDir holds k6's log and output; k6 is its path when the load is the user's k6 script.
	cellDir, k6 string
	// tag tells this instance's files from another's in one cell: "" for the first, "-2", ...
	tag string
	// requests is the list of requests, if any (then s.Method and s.Path are unused), and
	// requestKeys their names in counters' keys.
	requests    []httpload.Request
	requestKeys []string
	// group holds the app and all it starts; nil where no cgroup could be made (noGroup says why),
	// and then the app's process group alone is stopped.
	group   *cgroup.Group
	noGroup string
}

// waitReady polls the ready path until the app answers below 500. Before each poll the app's
// sockets are checked (checkSockets): every one it listens on is on loopback, and what listens on
// its port is the app. The app exiting first, or the timeout passing, fails with its last log
// lines.
func (in *instance) waitReady(ctx context.Context) error {
	deadline := time.Now().Add(in.s.ReadyTimeout)
	for {
		// Before any request: what listens on the port must be the app, on loopback only.
		listening, err := checkSockets(in.port, in.processes)
		if err != nil {
			return err
		}
		if listening {
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, in.url+in.s.Ready, nil)
			if err != nil {
				return err
			}
			if resp, err := appClient.Do(req); err == nil {
				resp.Body.Close()
				if resp.StatusCode < 500 {
					return nil
				}
			}
		}
		select {
		case <-in.child.Done():
			return fmt.Errorf("the app exited before it answered GET %s; the end of %s:\n%s", in.s.Ready, in.log, tailFile(in.log, 10))
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the app did not answer GET %s below 500 within %v (ready_timeout); the end of %s:\n%s", in.s.Ready, in.s.ReadyTimeout, in.log, tailFile(in.log, 10))
		}
	}
}

// appClient asks the app itself: a redirect is an answer, never followed elsewhere.
var appClient = &http.Client{
	Timeout:       2 * time.Second,
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

// tailFile is the last n lines of a log, read through a limit.
func tailFile(path string, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return "(no log: " + err.Error() + ")"
	}
	defer f.Close()
	const limit = 64 << 10
	if st, err := f.Stat(); err == nil && st.Size() > limit {
		f.Seek(st.Size()-limit, 0)
	}
	buf := make([]byte, limit)
	k, _ := f.Read(buf)
	return lastLines(string(buf[:k]), n)
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func (in *instance) config(d time.Duration, share workload.Share) httpload.Config {
	vus, rate := in.load(share)
	return httpload.Config{URL: in.url + in.s.Path, Method: in.s.Method, Mode: in.s.Mode, VUs: vus, Rate: rate,
		Duration: d, Timeout: in.s.Timeout, NetworkRTT: in.s.NetworkRTT, AckField: in.s.Ack, Requests: in.requests}
}

// load is this instance's share of the VUs and of the rate, when several instances share a
// backend.
func (in *instance) load(share workload.Share) (vus int, rate float64) {
	return httpload.Split(in.s.VUs, in.s.Rate, share)
}

// DriveAcked implements workload.Acknowledged: persistlab's driver with every acknowledged count
// (the ack field of each 200 answer) recorded, until d passes or ctx ends (a crash run's kill).
func (in *instance) DriveAcked(ctx context.Context, d time.Duration) (*workload.Result, *measure.AckLog, error) {
	if in.s.Ack == "" {
		return nil, nil, errors.New("workload.ack: unset: the app states no acknowledged count")
	}
	if _, err := checkSockets(in.port, in.processes); err != nil {
		return nil, nil, err
	}
	c := in.config(d, workload.Share{})
	c.RecordAcks = true
	r, err := httpload.Run(ctx, c)
	if err != nil {
		return nil, nil, err
	}
	out := in.result(r)
	httpload.AddGroupFact(out, in.noGroup)
	return out, measure.NewAckLog(r.Acks), nil
}

// Kill implements workload.Acknowledged: SIGKILL to every process of the app, without waiting.
func (in *instance) Kill() {
	in.group.Kill()
	in.child.SignalKill()
}

// Exited implements workload.Acknowledged.
func (in *instance) Exited() <-chan struct{} { return in.child.Done() }

// Count implements workload.Acknowledged: the ack field of the app's answer to GET recover.
func (in *instance) Count(ctx context.Context) (int64, error) {
	if in.s.Recover == "" {
		return 0, errors.New("workload.recover: unset: the app states no persisted count")
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, in.url+in.s.Recover, nil)
	if err != nil {
		return 0, err
	}
	resp, err := appClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return 0, err
	}
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("GET %s: HTTP %d: %.200s", in.s.Recover, resp.StatusCode, body)
	}
	n, ok := httpload.FieldValue(body, []byte(`"`+in.s.Ack+`":`))
	if !ok {
		return 0, fmt.Errorf("GET %s: no %q number in the answer: %.200s", in.s.Recover, in.s.Ack, body)
	}
	return n, nil
}

// Drive runs the load for d.
func (in *instance) Drive(ctx context.Context, d time.Duration) (*workload.Result, error) {
	return in.DriveShare(ctx, d, workload.Share{})
}

// DriveShare implements workload.Shared: this instance's share of the VUs and of the rate, while
// other instances of the app on other mounts of one backend take theirs.
func (in *instance) DriveShare(ctx context.Context, d time.Duration, share workload.Share) (*workload.Result, error) {
	if in.child.Exited() {
		return nil, fmt.Errorf("the app exited before the load began; the end of %s:\n%s", in.log, tailFile(in.log, 10))
	}
	// Once more before the load: a socket the app opened after it was ready.
	if _, err := checkSockets(in.port, in.processes); err != nil {
		return nil, err
	}
	cpuBefore, _ := proc.CPUTime(in.child.Pid())
	var out *workload.Result
	var elapsed time.Duration
	if in.k6 != "" {
		vus, rate := in.load(share)
		r, err := in.driveK6(ctx, d, vus, rate)
		if err != nil {
			return nil, err
		}
		out, elapsed = r, r.Elapsed
	} else {
		r, err := httpload.Run(ctx, in.config(d, share))
		if err != nil {
			return nil, err
		}
		if ctx.Err() != nil {
			return nil, context.Cause(ctx)
		}
		out, elapsed = in.result(r), r.Elapsed
	}
	cpuAfter, _ := proc.CPUTime(in.child.Pid())
	if in.child.Exited() {
		return nil, fmt.Errorf("the app exited during the load; the end of %s:\n%s", in.log, tailFile(in.log, 10))
	}
	out.Metrics["app_cpu_s"] = (cpuAfter - cpuBefore).Seconds()
	out.Metrics["app_cpu_util"] = httpload.CPUUtil(cpuAfter-cpuBefore, elapsed, in.cpus)
	httpload.AddGroupFact(out, in.noGroup)
	return out, nil
}

// result turns persistlab's driver's measurements into a workload result; an acknowledged count
// only where the app states one; with a list of requests, each entry's 200 answers and errors
// as counters req_NAME_ok and req_NAME_errors.
func (in *instance) result(r *httpload.Result) *workload.Result {
	out := httpload.ResultOf(r, in.s.Mode == httpload.ModeOpen)
	if in.s.Ack == "" {
		delete(out.Metrics, "max_acked")
	}
	for i, c := range r.ByRequest {
		out.Counters["req_"+in.requestKeys[i]+"_ok"] = c.OK
		out.Counters["req_"+in.requestKeys[i]+"_errors"] = c.Errors
	}
	return out
}

// Stop stops the app by its process id and group (SIGTERM, then SIGKILL after 10 s), then
// whatever else of it is left in its cgroup (SIGKILL), and removes the cgroup. One that does not
// empty is left for clean, a *cgroup.StuckError.
func (in *instance) Stop(ctx context.Context) error {
	err := in.child.Stop(ctx)
	if errors.Is(err, context.Canceled) {
		err = nil
	}
	return errors.Join(err, in.group.Close(cgroup.GroupWait))
}
