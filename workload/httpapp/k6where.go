package httpapp

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"slices"
	"strings"

	"persistlab/internal/landlock"
	"persistlab/internal/proc"
)

// Where k6 sends a script's requests, and what it reports of them, is persistlab's to say: the
// kernel holds k6 to the app's port (Landlock) where it can, k6's own reports are checked
// request by request, and the options that would send a request elsewhere, or report it as
// another, are refused before the run and dropped from it.

// k6SystemTags are k6 1.1's default system tags and ip, the address each request connected to.
// Given on the command line they replace a script's systemTags: no script can leave url out.
const k6SystemTags = "proto,subproto,status,method,url,name,group,check,error,error_code,tls_version,scenario,service,expected_response,ip"

// httpRequestMetric starts the name of every per-request HTTP metric k6 reports.
var httpRequestMetric = []byte(`"metric":"http_req`)

// keptOptions is JavaScript that sets rest to the user's options but drop (execution options the
// module replaces) and those that would send a request elsewhere (hosts) or tag it with another
// URL (tags.url). k6 reads option names in any case (HOSTS is hosts): they are dropped in any.
func keptOptions(drop ...string) string {
	names, _ := json.Marshal(append([]string{"hosts"}, drop...))
	return `const keep = (o, drop) => Object.fromEntries(Object.entries(o || {}).filter(([k]) => !drop.includes(k.toLowerCase())));
const rest = keep(user.options, ` + string(names) + `);
for (const k of Object.keys(rest)) if (k.toLowerCase() === "tags") rest[k] = keep(rest[k], ["url"]);`
}

// writeClosedScript writes the module a closed loop runs: the user's script with every export
// (setup, teardown, handleSummary, its options but those keptOptions drops), whatever its
// options come to when k6 runs it, not only when persistlab inspected it.
func writeClosedScript(path, script string) (string, error) {
	from, err := json.Marshal(script)
	if err != nil {
		return "", err
	}
	text := fmt.Sprintf(`// Written by persistlab: %[1]s, with the options that keep its requests on the app.
export * from %[1]s;
import * as user from %[1]s;
%[2]s
export const options = rest;
export default user.default;
`, from, keptOptions())
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		return "", fmt.Errorf("k6 script module: %w", err)
	}
	return path, nil
}

// writeK6Config writes the configuration file k6 runs with: none of its own. k6 would otherwise
// read the machine's ($XDG_CONFIG_HOME/k6/config.json), whose hosts would send requests
// elsewhere whatever the script says.
func writeK6Config(path string) (string, error) {
	if err := os.WriteFile(path, []byte("{}\n"), 0o644); err != nil {
		return "", fmt.Errorf("k6 configuration: %w", err)
	}
	return path, nil
}

// landlockSupported is landlock.Supported; a test stands in a kernel without it.
var landlockSupported = landlock.Supported

// confineK6 makes k6 start able to connect over TCP to the app's port alone, where the kernel
// can hold it there (Landlock); unconfined says why it could not, nil when it will.
func confineK6(cmd *exec.Cmd, appPort int) (unconfined error, err error) {
	if unconfined = landlockSupported(); unconfined != nil {
		return unconfined, nil
	}
	return nil, landlock.Confine(cmd, appPort)
}

// checkWhere notes p's request if it went, or was sent, anywhere but the app, as k6 reports it.
func (t *k6Tally) checkWhere(p k6Point, appPort int) {
	tags := p.Data.Tags
	switch {
	case tags.IP != "" && tags.IP != host:
		t.noteOffApp(tags.URL + " (connected to " + tags.IP + ")")
	case refusedConnect(tags.Error):
		t.noteOffApp(tags.URL + " as k6 reports it, whose connection the kernel refused: not to the app's port")
	case isAppURL(tags.URL, appPort), strings.Contains(tags.Error, "blacklisted"):
	case !strings.Contains(tags.URL, "://") && t.confined:
		// A name tag of the script's, which k6 reports as the url too: the kernel held k6 to the
		// app's port, and its blacklist to the app's address.
	default:
		if !strings.Contains(tags.URL, "://") {
			t.named++
		}
		t.noteOffApp(tags.URL)
	}
}

// refusedConnect says whether k6's error is a connection the kernel refused (EACCES: Landlock's
// answer to a port but the app's).
func refusedConnect(k6Error string) bool {
	return strings.HasPrefix(k6Error, "dial") && strings.Contains(k6Error, "permission denied")
}

// offAppError fails a run whose script sent requests anywhere but the app at url.
func (t *k6Tally) offAppError(url string, unconfined error) error {
	if t.offApp == 0 {
		return nil
	}
	err := fmt.Errorf("the k6 script made %d request(s) to what is not the app (%s): persistlab loads only the app it started, at %s (__ENV.%s)",
		t.offApp, strings.Join(t.offAppURLs, ", "), url, URLVariable)
	if t.named > 0 && unconfined != nil {
		err = fmt.Errorf("%w; %d of them k6 reported by a name tag, not by their URL, and k6 could not be held to the app's port (%v) to vouch for them: drop the name tags, or run on Linux 6.7 or later",
			err, t.named, unconfined)
	}
	return err
}

// noRequestError fails a run in which k6 timed no HTTP request, or wrote nothing at all: its
// row would be zeros, read as a measurement of nothing done.
func (t *k6Tally) noRequestError(logPath string) error {
	requests := t.ok + t.transport
	for _, n := range t.statuses {
		requests += n
	}
	switch {
	case requests > 0:
		return nil
	case t.lines == 0:
		return fmt.Errorf("k6 wrote no metric at all (not even their declarations): nothing was measured; the end of %s:\n%s", logPath, tailFile(logPath, 10))
	case t.dropped > 0:
		return fmt.Errorf("k6 timed no HTTP request: all %d iterations were dropped (every VU was busy); the end of %s:\n%s", t.dropped, logPath, tailFile(logPath, 10))
	}
	return fmt.Errorf("k6 timed no HTTP request: the k6 script made none to the app (persistlab measures k6's http_req_duration); the end of %s:\n%s", logPath, tailFile(logPath, 10))
}

// maxInspect bounds what persistlab reads of k6 inspect's options.
const maxInspect = 1 << 20

// checkK6Options refuses a script whose options would send a request elsewhere (hosts), or
// report it by another URL (tags.url), as k6 reads them (k6 inspect): the run drops them, and
// a script that needs them would not run as written.
func checkK6Options(ctx context.Context, bin, script string) error {
	cmd := proc.Command(ctx, bin, "inspect", script)
	var stdout, stderr headBuffer
	stdout.max, stderr.max = maxInspect, 64<<10
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return &proc.CommandError{Args: cmd.Args, Output: proc.Tail(string(stderr.buf), 3), Err: err}
	}
	if stdout.over {
		return fmt.Errorf("k6 inspect printed over %d bytes of options", maxInspect)
	}
	var o struct {
		Hosts map[string]any    `json:"hosts"`
		Tags  map[string]string `json:"tags"`
	}
	if err := json.Unmarshal(stdout.buf, &o); err != nil {
		return fmt.Errorf("k6 inspect's options: %w", err)
	}
	if len(o.Hosts) > 0 {
		var mapped []string
		for _, name := range slices.Sorted(maps.Keys(o.Hosts)) {
			mapped = append(mapped, fmt.Sprintf("%s to %v", name, o.Hosts[name]))
		}
		return fmt.Errorf("a script without options.hosts (it maps %s): persistlab's k6 sends every request to the app it started, at __ENV.%s, and hosts would send one elsewhere",
			strings.Join(mapped, ", "), URLVariable)
	}
	if u, ok := o.Tags["url"]; ok {
		return fmt.Errorf("a script without a url in options.tags (it sets %q): k6 tags each request with its own URL, which persistlab checks is the app's", u)
	}
	return nil
}

// headBuffer keeps the first max bytes written to it, and whether there were more.
type headBuffer struct {
	buf  []byte
	max  int
	over bool
}

func (b *headBuffer) Write(p []byte) (int, error) {
	if room := b.max - len(b.buf); len(p) > room {
		b.over = true
		b.buf = append(b.buf, p[:max(room, 0)]...)
	} else {
		b.buf = append(b.buf, p...)
	}
	return len(p), nil
}
