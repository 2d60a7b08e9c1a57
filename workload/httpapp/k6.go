package httpapp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"persistlab/internal/proc"
	"persistlab/internal/tools"
	"persistlab/lib/readfile"
	"persistlab/measure"
	"persistlab/workload"
	"persistlab/workload/httpload"
)

// MaxScriptBytes bounds a k6 script read.
const MaxScriptBytes = 1 << 20

// URLVariable is the environment variable a k6 script reads the app's URL from (__ENV.BASE_URL).
const URLVariable = "BASE_URL"

// elsewhere is every address but the app's, 127.0.0.1: k6 refuses to connect to them, so a script
// can reach no other machine and no other loopback address (IPv6 is refused whole: the app's URL
// is IPv4). Another port of 127.0.0.1 the blacklist cannot refuse: the kernel does where it can
// (confineK6), and driveK6 fails the cell if one was requested.
var elsewhere = func() []string {
	out := []string{"::/0"}
	// The complement of 127.0.0.1/32: at each prefix length, the half that does not hold it.
	const app = uint32(127)<<24 | 1
	for bits := 1; bits <= 32; bits++ {
		other := app ^ (1 << (32 - bits)) // flip the bit this length adds
		other &^= (1 << (32 - bits)) - 1  // and clear the bits below it
		out = append(out, fmt.Sprintf("%d.%d.%d.%d/%d", other>>24, other>>16&0xff, other>>8&0xff, other&0xff, bits))
	}
	return out
}()

// CheckScript reads a k6 script as a run would, before anything runs: a regular file within
// MaxScriptBytes that the installed k6 parses.
func CheckScript(ctx context.Context, path string) error {
	_, err := checkScript(ctx, path)
	return err
}

// checkScript reads the script as k6 would (a regular file, within a limit) and has k6 parse it.
func checkScript(ctx context.Context, path string) (bin string, err error) {
	if _, err := readfile.Regular(path, MaxScriptBytes); err != nil {
		return "", err
	}
	if bin, err = tools.Find("k6"); err != nil {
		return "", err
	}
	if err := proc.RunDiscarded(proc.Command(ctx, bin, "inspect", path), 3); err != nil {
		return "", err
	}
	return bin, nil
}

// k6Point is what persistlab reads of a line of k6's JSON output.
type k6Point struct {
	Type   string `json:"type"`
	Metric string `json:"metric"`
	Data   struct {
		Value float64 `json:"value"`
		Tags  struct {
			Status string `json:"status"`
			Error  string `json:"error"`
			URL    string `json:"url"`
			Check  string `json:"check"`
			// IP is the address k6 connected to (the ip system tag, which persistlab turns on).
			IP string `json:"ip"`
		} `json:"tags"`
	} `json:"data"`
}

// driveK6 runs the user's k6 script against the app for d with vus virtual users (k6's flags
// replace the script's own vus and duration; in an open loop, vus serve iterations that start at
// rate per second, k6's constant-arrival-rate), reading k6's per-request points through a FIFO as
// they come: http_req_duration of each 200 answer into the latency histogram, every other answer
// and failure counted.
func (in *instance) driveK6(ctx context.Context, d time.Duration, vus int, rate float64) (*workload.Result, error) {
	// Each instance's own files: several instances of the app may share a cell.
	file := func(base, ext string) string { return filepath.Join(in.cellDir, base+in.tag+ext) }
	fifo := file("k6-points", ".fifo")
	os.Remove(fifo)
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		return nil, fmt.Errorf("k6 output: %w", err)
	}
	defer os.Remove(fifo)
	// Our reader, and a writer of our own held until k6 has exited: no open ever waits for k6,
	// and the reader's end of file comes only once k6 is done and every point it wrote is read.
	points, err := os.OpenFile(fifo, os.O_RDONLY|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("k6 output: %w", err)
	}
	defer points.Close()
	hold, err := os.OpenFile(fifo, os.O_WRONLY, 0)
	if err != nil {
		return nil, fmt.Errorf("k6 output: %w", err)
	}
	defer hold.Close()
	// --address "": no REST API on 127.0.0.1:6565, through which anyone here could steer the run.
	args := []string{"run", "--quiet", "--no-usage-report", "--no-color", "--no-summary", "--address", "", "--out", "json=" + fifo,
		"--env", URLVariable + "=" + in.url, "--system-tags", k6SystemTags}
	for _, cidr := range elsewhere {
		args = append(args, "--blacklist-ip", cidr)
	}
	// The script runs inside a module of persistlab's, which drops the options refused by
	// checkK6Options whatever they come to when k6 runs it.
	var script string
	if in.s.Mode == httpload.ModeOpen {
		if script, err = writeArrivalScript(file("k6-arrival", ".js"), in.s.k6Script, rate, vus, d); err != nil {
			return nil, err
		}
	} else {
		args = append(args, "--vus", strconv.Itoa(vus), "--duration", d.String())
		if script, err = writeClosedScript(file("k6-script", ".js"), in.s.k6Script); err != nil {
			return nil, err
		}
	}
	config, err := writeK6Config(file("k6-config", ".json"))
	if err != nil {
		return nil, err
	}
	args = append(args, "--config", config, script)
	log, err := os.OpenFile(file("k6", ".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	defer log.Close()
	cmd := proc.Command(ctx, in.k6, args...)
	cmd.Stdout, cmd.Stderr = log, log
	start := time.Now()
	unconfined, err := confineK6(cmd, in.port)
	if err != nil {
		return nil, fmt.Errorf("start k6: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start k6: %w", err)
	}
	proc.Started(cmd)
	read := make(chan k6Tally, 1)
	go func() { read <- tallyK6(points, in.port, unconfined == nil) }()
	waitErr := cmd.Wait()
	hold.Close()
	tally := <-read
	elapsed := time.Since(start)
	if ctx.Err() != nil {
		return nil, context.Cause(ctx)
	}
	// k6 exits 99 when a threshold of the script's own is crossed: the run still measured.
	if waitErr != nil && cmd.ProcessState.ExitCode() != 99 {
		return nil, &proc.CommandError{Args: []string{"k6"}, Output: "the end of " + log.Name() + ":\n" + tailFile(log.Name(), 10), Err: waitErr}
	}
	if tally.err != nil {
		return nil, fmt.Errorf("k6 output: %w", tally.err)
	}
	if err := tally.offAppError(in.url, unconfined); err != nil {
		return nil, err
	}
	if err := tally.noRequestError(log.Name()); err != nil {
		return nil, err
	}
	out := workload.NewResult()
	out.Elapsed = elapsed
	tally.latency.Summarize(elapsed).Metrics("", out.Metrics)
	out.Histograms["latency"] = tally.latency
	out.Metrics["ok"] = float64(tally.ok)
	var errs int64
	for code, n := range tally.statuses {
		out.Counters["http_"+strconv.Itoa(code)] = n
		errs += n
	}
	out.Metrics["errors"] = float64(errs + tally.transport)
	out.Metrics["transport_errors"] = float64(tally.transport)
	out.Errors = tally.samples
	if code := cmd.ProcessState.ExitCode(); code == 99 {
		out.Facts["k6_thresholds"] = "crossed (k6 exited 99)"
	}
	if unconfined != nil {
		out.Facts["k6_network"] = "not confined to the app's port (" + unconfined.Error() + "): requests were checked by the URLs k6 reported"
	}
	// The script's own checks: they fail no request, as in k6; a threshold (checks_failed == 0)
	// can gate on them.
	if in.s.Mode == httpload.ModeOpen {
		out.Metrics["dropped"] = float64(tally.dropped)
	}
	out.Metrics["checks_passed"] = float64(tally.checksPassed)
	out.Metrics["checks_failed"] = float64(tally.checksFailed)
	if tally.checksFailed > 0 {
		out.Facts["k6_checks_failed"] = fmt.Sprintf("%d of %d checks failed: %s", tally.checksFailed,
			tally.checksFailed+tally.checksPassed, strings.Join(tally.failedChecks, ", "))
	}
	return out, nil
}

// k6Tally is what k6's points added up to.
type k6Tally struct {
	latency       *measure.Recorder
	ok, transport int64
	statuses      map[int]int64
	samples       []string
	// checksPassed and checksFailed count the script's own check() results; failedChecks names
	// the first checks that failed.
	checksPassed, checksFailed int64
	failedChecks               []string
	// offApp counts requests k6 made to anything but the app (another port of 127.0.0.1, which
	// k6's address blacklist cannot refuse); offAppURLs names the first of them. named counts
	// those of them k6 reported by a name of the script's, not by their URL.
	offApp     int64
	offAppURLs []string
	named      int64
	// confined says that k6 could connect to the app's port alone (Landlock): a request k6
	// reports by its name went there. lines counts the lines k6 wrote.
	confined bool
	lines    int64
	// dropped counts iterations k6's arrival-rate executor could not start: every VU was busy.
	dropped int64
	err     error
}

// tallyK6 reads k6's JSON lines from f until its end; appPort is the app's port, the only one a
// request may go to, and confined says the kernel held k6 to it.
func tallyK6(f *os.File, appPort int, confined bool) k6Tally {
	t := k6Tally{latency: measure.NewRecorder(), statuses: map[int]int64{}, confined: confined}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), maxK6Point)
	defer io.Copy(io.Discard, f) // a line too long stops the scanner: k6 must still be read to its end
	duration, checks, dropped := []byte(`"metric":"http_req_duration"`), []byte(`"metric":"checks"`), []byte(`"metric":"dropped_iterations"`)
	app := appURLs(appPort)
	for sc.Scan() {
		line := sc.Bytes()
		t.lines++
		isDuration, isCheck, isDropped := bytes.Contains(line, duration), bytes.Contains(line, checks), bytes.Contains(line, dropped)
		// Any protocol's point (k6/http, k6/ws, gRPC) names where it went: only the app is allowed.
		// A request's other HTTP points carry its duration's tags, which are checked.
		offApp := bytes.Contains(line, urlTag) && !app.in(line) && (isDuration || !bytes.Contains(line, httpRequestMetric))
		if !isDuration && !isCheck && !isDropped && !offApp {
			continue // k6 writes a dozen metrics per request; one is the request's duration
		}
		var p k6Point
		if err := json.Unmarshal(line, &p); err != nil || p.Type != "Point" {
			continue
		}
		if offApp && !isDuration && p.Data.Tags.URL != "" {
			t.checkWhere(p, appPort)
		}
		if !isDuration && !isCheck && !isDropped {
			continue // read only for where it went
		}
		if isDropped {
			t.dropped += int64(p.Data.Value)
			continue
		}
		if isCheck {
			if p.Data.Value == 0 {
				t.checksFailed++
				if len(t.failedChecks) < 5 && !slices.Contains(t.failedChecks, p.Data.Tags.Check) {
					t.failedChecks = append(t.failedChecks, p.Data.Tags.Check)
				}
			} else {
				t.checksPassed++
			}
			continue
		}
		status, _ := strconv.Atoi(p.Data.Tags.Status)
		t.checkWhere(p, appPort)
		switch {
		case status == 200:
			t.ok++
			t.latency.Record(time.Duration(p.Data.Value * float64(time.Millisecond)))
		case status == 0:
			t.transport++
			t.sample(p.Data.Tags.Error)
		default:
			t.statuses[status]++
			t.sample("HTTP " + p.Data.Tags.Status)
		}
	}
	if t.err = sc.Err(); errors.Is(t.err, bufio.ErrTooLong) {
		t.err = fmt.Errorf("a point of k6's JSON output is longer than %d bytes, the most persistlab reads of one (a tag's value too long?)", maxK6Point)
	}
	return t
}

// maxK6Point bounds a line of k6's JSON output: one point, its value and its tags.
const maxK6Point = 1 << 20

// noteOffApp counts a request k6 sent, or attempted, somewhere persistlab did not start.
func (t *k6Tally) noteOffApp(url string) {
	t.offApp++
	if len(t.offAppURLs) < 3 && !slices.Contains(t.offAppURLs, url) {
		t.offAppURLs = append(t.offAppURLs, url)
	}
}

var urlTag = []byte(`"url":"`)

// appBases are the app's URLs as a point's url tag starts with them, for a quick test of a line.
type appBases [][]byte

func appURLs(port int) appBases {
	var out appBases
	for _, scheme := range []string{"http", "ws"} {
		for _, host := range []string{"127.0.0.1", "localhost"} {
			out = append(out, []byte(`"url":"`+scheme+"://"+host+":"+strconv.Itoa(port)))
		}
	}
	return out
}

// in says whether every url tag of line is the app's (a base followed by /, ?, # or the end).
func (bases appBases) in(line []byte) bool {
	for rest := line; ; {
		i := bytes.Index(rest, urlTag)
		if i < 0 {
			return true
		}
		rest = rest[i:]
		ok := false
		for _, b := range bases {
			if bytes.HasPrefix(rest, b) && len(rest) > len(b) && strings.IndexByte(`/?#"`, rest[len(b)]) >= 0 {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
		rest = rest[len(urlTag):]
	}
}

// isAppURL says whether a URL k6 requested is the app's: the app's port on 127.0.0.1, over HTTP
// or a WebSocket.
func isAppURL(raw string, appPort int) bool {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "ws") {
		return false
	}
	host := u.Hostname()
	return (host == "127.0.0.1" || host == "localhost") && u.Port() == strconv.Itoa(appPort)
}

func (t *k6Tally) sample(s string) {
	if len(t.samples) < 5 && !strings.Contains(strings.Join(t.samples, "\x00"), s) {
		t.samples = append(t.samples, s)
	}
}

// writeArrivalScript writes a module that runs the user's script at a constant arrival rate (k6's
// open model: iterations start at rate per second whatever the app's answers, on at most vus
// VUs; one that finds every VU busy is dropped and counted). It re-exports everything the script
// exports (setup, teardown, handleSummary, its options but the execution ones it replaces and
// those keptOptions drops).
func writeArrivalScript(path, script string, rate float64, vus int, d time.Duration) (string, error) {
	from, err := json.Marshal(script)
	if err != nil {
		return "", err
	}
	perUnit, unit := k6Rate(rate)
	text := fmt.Sprintf(`// Written by persistlab: %[1]s at a constant arrival rate.
export * from %[1]s;
import * as user from %[1]s;
%[6]s
export const options = Object.assign({}, rest, { scenarios: { persistlab: {
  executor: 'constant-arrival-rate', rate: %[2]d, timeUnit: '%[3]s', duration: '%[4]s',
  preAllocatedVUs: %[5]d, maxVUs: %[5]d, exec: 'default' } } });
export default user.default;
`, from, perUnit, unit, d, vus, keptOptions("vus", "duration", "stages", "iterations", "scenarios"))
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		return "", fmt.Errorf("k6 arrival script: %w", err)
	}
	return path, nil
}

// k6Rate writes a rate in requests per second as k6's whole iterations per time unit.
func k6Rate(rate float64) (int, string) {
	if rate == math.Trunc(rate) && rate < math.MaxInt32 {
		return int(rate), "1s"
	}
	return int(math.Round(rate * 1000)), "1000s"
}
