package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/google"

	"persistlab/calibrate"
	"persistlab/cost"
	"persistlab/internal/sysinfo"
	"persistlab/lab/bucket"
	"persistlab/lib/readfile"
	"persistlab/profile"
	"persistlab/report"
	"persistlab/results"
)

// DefaultGCSEndpoint is Cloud Storage's JSON API, in the form gcsfuse's --custom-endpoint takes.
const DefaultGCSEndpoint = "https://storage.googleapis.com/storage/v1/"

// storageScope is the OAuth scope the probe asks for: it writes and deletes objects.
const storageScope = "https://www.googleapis.com/auth/devstorage.read_write"

// maxKeyFileBytes bounds a service account key file: one is about 2.3 KiB.
const maxKeyFileBytes = 64 << 10

// cmdCalibrateBucket measures a bucket with a fixed, small probe, fits the bucket model's options
// to it, and writes them as a profile for run --profile.
func cmdCalibrateBucket(ctx context.Context, args []string) error {
	fs := newFlags("calibrate bucket")
	endpoint := fs.String("endpoint", DefaultGCSEndpoint, "the GCS JSON API endpoint (a lab serve's http://localhost:PORT/storage/v1/ too)")
	bucketName := fs.String("bucket", "", "the bucket to probe (required); the probe writes only under persistlab-probe-ID/ in it, and deletes what it wrote")
	keyFile := fs.String("key-file", "", "a service account key (JSON), as gcsfuse's --key-file; default: Application Default Credentials, or on loopback the lab's token")
	maxUSD := fs.Float64("max-usd", 0.05, "refuse a probe whose requests would cost more than this at GCS list prices (USD)")
	out := fs.String("out", "", "the profile to write (default: a new persistlab-profile-BUCKET-TIME.yaml here)")
	force := fs.Bool("force", false, "replace an existing --out file")
	plan := calibrate.DefaultBucketPlan()
	fs.IntVar(&plan.Samples, "samples", plan.Samples, "small uploads, reads and listings: this many of each (their medians and p99s)")
	fs.DurationVar(&plan.Burst, "burst", plan.Burst, "how long to write one object again and again to find its write limit")
	positional, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(positional) > 0 {
		return fmt.Errorf("want flags only, not %q", positional[0])
	}
	if *bucketName == "" {
		return fmt.Errorf("--bucket: want the bucket to probe")
	}
	if !(*maxUSD > 0 && *maxUSD <= 10) {
		return fmt.Errorf("--max-usd %g: want more than 0 and at most 10 (USD)", *maxUSD)
	}
	if err := plan.Check(); err != nil {
		return err
	}
	client, err := calibrate.NewClient(nil, *endpoint, *bucketName)
	if err != nil {
		return err
	}
	if *out == "" {
		*out = fmt.Sprintf("persistlab-profile-%s-%s.yaml", safeName(*bucketName), time.Now().UTC().Format("20060102-150405"))
	}
	outPath, err := results.OutputPath("--out", *out, *force)
	if err != nil {
		return err
	}
	var keyData []byte
	if *keyFile != "" {
		if keyData, err = readfile.Regular(*keyFile, maxKeyFileBytes); err != nil {
			return fmt.Errorf("--key-file %s: %w", *keyFile, err)
		}
	}
	secrets := &redactor{}
	secrets.addKeyFile(keyData)
	stdout, stderr := secrets.writer(terminalSafe(os.Stdout)), secrets.writer(terminalSafe(os.Stderr))
	err = calibrateBucket(ctx, client, plan, *maxUSD, *endpoint, *keyFile, keyData, outPath, secrets, stdout, stderr)
	if err != nil {
		return secrets.err(err)
	}
	return nil
}

func calibrateBucket(ctx context.Context, client *calibrate.Client, plan calibrate.BucketPlan, maxUSD float64, endpoint, keyFile string, keyData []byte,
	outPath string, secrets *redactor, stdout, stderr io.Writer) error {
	id := calibrate.NewProbeID()
	prefix := calibrate.ProbePrefix(id)
	writePlanTable(stdout, client, plan, prefix)
	if usd := plan.USD(); usd > maxUSD {
		return fmt.Errorf("refused before any request: the probe's requests would cost up to $%.4f at GCS list prices, above --max-usd $%g: raise --max-usd, or lower --samples or --burst", usd, maxUSD)
	}
	transport, how, err := credentials(ctx, client.Host(), keyFile, keyData, secrets)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "credentials: %s\n\n", how)
	client.HTTP = &http.Client{Transport: transport, Timeout: 5 * time.Minute}
	// A probe killed before its cleanup leaves this record, from which persistlab clean deletes
	// what it wrote; it names a key file by its path, never its contents.
	keyPath := ""
	if keyFile != "" {
		if keyPath, err = filepath.Abs(keyFile); err != nil {
			return fmt.Errorf("--key-file %s: %w", keyFile, err)
		}
	}
	record, err := calibrate.HoldProbeRecord(calibrate.ProbeRecordPath(os.TempDir(), id), calibrate.ProbeRecord{PID: os.Getpid(), Started: time.Now().UTC(),
		Endpoint: endpoint, Bucket: client.Bucket(), Prefix: prefix, KeyFile: keyPath, Objects: plan.Objects(prefix)})
	if err != nil {
		return fmt.Errorf("refused before any request: the probe's record (what persistlab clean deletes if the probe is killed) could not be written: %w", err)
	}
	probe := &calibrate.BucketProbe{Client: client, Plan: plan, Prefix: prefix, Progress: stderr}
	fmt.Fprintf(stderr, "probing %s (objects under %s) ...\n", client.Target(), prefix)
	samples, runErr := probe.Run(ctx)
	// The objects go whatever happened, Ctrl-C included: on a context of their own.
	cleanCtx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	deleted, left := probe.Cleanup(cleanCtx)
	cancel()
	record.Release(len(left) == 0 || probe.Written() == 0) // a refused probe wrote nothing: what is there is not its own
	leftovers := func(w io.Writer) {
		if len(left) == 0 {
			fmt.Fprintf(w, "objects: all %d the probe wrote under %s deleted\n", deleted, prefix)
			return
		}
		writeLeftovers(w, client, deleted, left)
		fmt.Fprintf(w, "  (its record %s stays: persistlab clean tries the deletes again)\n", record.Path())
	}
	if runErr != nil {
		leftovers(stderr)
		if ctx.Err() != nil {
			return &exitError{code: 130, err: fmt.Errorf("interrupted: no profile written")}
		}
		var se *calibrate.StatusError
		if errors.As(runErr, &se) && (se.Status == http.StatusUnauthorized || se.Status == http.StatusForbidden) {
			return fmt.Errorf("%w (the credentials need storage.objects.create, get, list and delete on bucket %s, as roles/storage.objectUser gives)", runErr, strings.SplitN(client.Target(), "/", 2)[1])
		}
		return fmt.Errorf("the probe failed, no profile written: %w", runErr)
	}
	fit := calibrate.FitBucket(samples, plan)
	p := &profile.Profile{Schema: profile.Schema, Kind: "bucket", Measured: measuredBlock(client.Target()),
		Figures: fit.Figures, NotFitted: fit.NotFitted, HeldOut: fit.HeldOut}
	if err := p.Check(outPath); err != nil {
		return fmt.Errorf("the fit is not a valid profile: %w", err)
	}
	writeFitAnswer(stdout, client, samples, fit)
	leftovers(stdout)
	if err := writeProfileFile(outPath, p, secrets); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "profile: %s (persistlab run SCENARIO --profile %s: its figures replace the bucket model's defaults)\n", outPath, report.ShellWord(outPath))
	if len(left) > 0 {
		return fmt.Errorf("%d probe object(s) could not be deleted (named above)", len(left))
	}
	return nil
}

// writeLeftovers names the objects a probe could not delete.
func writeLeftovers(w io.Writer, client *calibrate.Client, deleted int, left []calibrate.Leftover) {
	fmt.Fprintf(w, "objects: %d deleted; %d could NOT be deleted (delete them yourself, e.g. gcloud storage rm):\n", deleted, len(left))
	for _, l := range left {
		fmt.Fprintf(w, "  gs://%s/%s: %s\n", client.Bucket(), l.Name, l.Why)
	}
}

// writePlanTable prints, before the first request, what the probe will send and what that costs.
func writePlanTable(w io.Writer, client *calibrate.Client, plan calibrate.BucketPlan, prefix string) {
	a, b, _ := plan.Requests()
	up, down := plan.Bytes()
	fmt.Fprintf(w, "persistlab calibrate bucket: %s, writing only under %s (deleted at the end)\n", client.Target(), prefix)
	fmt.Fprintf(w, "the probe's requests, at most, priced at GCS list prices (class A $%g, class B $%g per 1,000):\n", cost.GCSClassAPer1000USD, cost.GCSClassBPer1000USD)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  class\trequests\tUSD\twhat")
	for _, l := range plan.Lines() {
		usd := 0.0
		switch l.Class {
		case "A":
			usd = cost.GCSUSD(int64(l.Requests), 0)
		case "B":
			usd = cost.GCSUSD(0, int64(l.Requests))
		}
		fmt.Fprintf(tw, "  %s\t%d\t%.5f\t%s\n", l.Class, l.Requests, usd, l.What)
	}
	fmt.Fprintf(tw, "  total\t%d A, %d B\t%.5f\t\n", a, b, plan.USD())
	tw.Flush()
	fmt.Fprintf(w, "data: %.0f MiB up, %.0f MiB down: free within the bucket's region; from elsewhere it is priced as network egress, which this total leaves out\n",
		float64(up)/(1<<20), float64(down)/(1<<20))
}

// credentials is the transport that authorizes the probe's requests, and how, in words that name
// no secret: a key file's service account, the lab's token on loopback, or Application Default
// Credentials. Every token it fetches is added to secrets before it is used.
func credentials(ctx context.Context, host, keyFile string, keyData []byte, secrets *redactor) (http.RoundTripper, string, error) {
	base := http.DefaultTransport.(*http.Transport).Clone()
	base.MaxIdleConnsPerHost = 4
	var src oauth2.TokenSource
	var how string
	switch {
	case keyData != nil:
		// A service account key only: another type (an external account) could make the
		// program fetch from wherever the file says.
		creds, err := google.CredentialsFromJSONWithType(ctx, keyData, google.ServiceAccount, storageScope)
		if err != nil {
			return nil, "", fmt.Errorf("--key-file %s: not a usable key (want a service account key in JSON, as gcloud iam service-accounts keys create writes): %s", keyFile, secrets.redact(err.Error()))
		}
		src, how = creds.TokenSource, "the service account key in "+keyFile
	case loopback(host):
		token, ok := labToken(ctx, host)
		if !ok {
			return base, "none (a loopback endpoint that serves no lab token)", nil
		}
		secrets.add(token)
		src, how = oauth2.StaticTokenSource(&oauth2.Token{AccessToken: token, TokenType: "Bearer"}), "the lab's token (a loopback endpoint)"
	default:
		creds, err := google.FindDefaultCredentials(ctx, storageScope)
		if err != nil {
			return nil, "", fmt.Errorf("no credentials: give --key-file FILE (a service account key), or set up Application Default Credentials (gcloud auth application-default login; on a VM or Cloud Run, its service account): %s", secrets.redact(err.Error()))
		}
		src, how = creds.TokenSource, "Application Default Credentials"
	}
	return &oauth2.Transport{Source: &recordedTokens{src: src, secrets: secrets}, Base: base}, how, nil
}

// recordedTokens adds every token it hands out to the secrets kept out of the output.
type recordedTokens struct {
	src     oauth2.TokenSource
	secrets *redactor
}

func (r *recordedTokens) Token() (*oauth2.Token, error) {
	t, err := r.src.Token()
	if err != nil {
		return nil, errors.New(r.secrets.redact(err.Error()))
	}
	r.secrets.add(t.AccessToken)
	r.secrets.add(t.RefreshToken)
	return t, nil
}

func loopback(host string) bool {
	h, _, err := net.SplitHostPort(host)
	if err != nil {
		h = host
	}
	ip := net.ParseIP(h)
	return h == "localhost" || (ip != nil && ip.IsLoopback())
}

// labToken fetches a lab bucket's token (bucket.TokenPath) from host.
func labToken(ctx context.Context, host string) (string, bool) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, (&url.URL{Scheme: "http", Host: host, Path: bucket.TokenPath}).String(), nil)
	if err != nil {
		return "", false
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", false
	}
	defer resp.Body.Close()
	var t struct {
		AccessToken string `json:"access_token"`
	}
	if resp.StatusCode != http.StatusOK || json.NewDecoder(io.LimitReader(resp.Body, 4<<10)).Decode(&t) != nil || t.AccessToken == "" {
		return "", false
	}
	return t.AccessToken, true
}

// measuredBlock is the profile's what, where and when.
func measuredBlock(target string) profile.Measured {
	m := sysinfo.Describe()
	commit := sysinfo.Versions()["persistlab_commit"]
	if commit == "" {
		commit = "unstamped"
	}
	orUnknown := func(s string) string {
		if s == "" {
			return "unknown"
		}
		return s
	}
	return profile.Measured{Target: target, When: time.Now().UTC().Format(time.RFC3339), Commit: commit,
		Machine: profile.Machine{Hostname: orUnknown(m.Hostname), CPU: orUnknown(m.CPUModel), Kernel: orUnknown(m.Kernel)}}
}

// writeFitAnswer prints what the probe found: the figures in a sentence, the held-out read
// against its prediction, then each figure beside the lab's default and how it was measured.
func writeFitAnswer(w io.Writer, client *calibrate.Client, s *calibrate.BucketSamples, fit calibrate.BucketFit) {
	fmt.Fprintf(w, "\nANSWER\n  bucket %s measured in %s (%d requests, deletes included):", client.Target(), s.Elapsed.Round(100*time.Millisecond), s.Requests())
	var parts []string
	for _, c := range []struct{ class, what string }{{"read", "reads"}, {"write", "writes"}, {"list", "listings"}} {
		if m := fit.Value(c.class + "_median"); m != "" {
			parts = append(parts, fmt.Sprintf("%s %s median, %s p99", c.what, m, fit.Value(c.class+"_p99")))
		}
	}
	if v := fit.Value("stream_mib_s"); v != "" {
		parts = append(parts, v+" MiB/s per stream")
	}
	if v := fit.Value("object_update_interval"); v != "" {
		parts = append(parts, "one write per "+v+" per object")
	}
	fmt.Fprintf(w, " %s\n", strings.Join(parts, "; "))
	for _, h := range fit.HeldOut {
		fmt.Fprintf(w, "  held out: the %s took %.3f %s (median); the fit predicts %.3f %s (read_median + size / stream_mib_s): error %+.1f%%\n",
			h.Point, h.Measured, h.Unit, h.Predicted, h.Unit, 100*h.Error)
	}
	if len(fit.HeldOut) == 0 {
		fmt.Fprintln(w, "  held out: nothing (no bandwidth fitted): how far the fit predicts is unknown")
	}
	defaults := map[string]string{}
	units := map[string]string{}
	for _, o := range bucket.ModelOptions {
		defaults[o.Name], units[o.Name] = o.Default, o.Unit
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  option\tmeasured\tlab default\thow")
	for _, f := range fit.Figures {
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", f.Option, withUnit(f.Value, units[f.Option]), withUnit(defaults[f.Option], units[f.Option]), f.How)
	}
	tw.Flush()
	for _, n := range fit.NotFitted {
		fmt.Fprintf(w, "  not fitted: %s (the model keeps its default, %s): %s\n", n.Option, withUnit(defaults[n.Option], units[n.Option]), n.Why)
	}
	fmt.Fprintf(w, "  (the latencies are first bytes seen from this machine: a probe from the VM or region your app runs in measures what it will see)\n\n")
}

func withUnit(v, unit string) string {
	if unit == "" {
		return v
	}
	return v + " " + unit
}

// writeProfileFile writes the profile beside its path and renames it over, so that an
// interrupted write leaves no half profile; a secret in it would be a bug, refused.
func writeProfileFile(path string, p *profile.Profile, secrets *redactor) error {
	var b strings.Builder
	if err := p.Write(&b); err != nil {
		return err
	}
	if secrets.redact(b.String()) != b.String() {
		return errors.New("the profile would hold a credential: not written")
	}
	return writeFileAtomically(path, []byte(b.String()))
}

// redactor keeps credentials out of everything the command prints: the key file's secrets and
// every token fetched are replaced wherever they would appear.
type redactor struct {
	mu      sync.Mutex
	secrets []string
}

// minSecret is the shortest string held as a secret: a shorter one would redact ordinary words.
const minSecret = 8

func (r *redactor) add(s string) {
	s = strings.TrimSpace(s)
	if len(s) < minSecret {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.secrets = append(r.secrets, s)
}

// addKeyFile holds a key file's secret fields (its private key and id, a client secret, a
// refresh token), and each line of its private key, as secrets.
func (r *redactor) addKeyFile(data []byte) {
	if data == nil {
		return
	}
	var fields map[string]any
	if json.Unmarshal(data, &fields) != nil {
		r.add(string(data)) // not JSON: the whole of it
		return
	}
	for _, k := range []string{"private_key", "private_key_id", "client_secret", "refresh_token"} {
		if v, ok := fields[k].(string); ok {
			r.add(v)
			for _, line := range strings.Split(v, "\n") {
				if !strings.HasPrefix(line, "-----") {
					r.add(line)
				}
			}
		}
	}
}

func (r *redactor) redact(s string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, secret := range r.secrets {
		s = strings.ReplaceAll(s, secret, "[redacted]")
	}
	return s
}

// err is err with every secret redacted, its exit status kept.
func (r *redactor) err(err error) error {
	text := r.redact(err.Error())
	var ee *exitError
	if errors.As(err, &ee) {
		return &exitError{code: ee.code, err: errors.New(text)}
	}
	if isFlagMistake(err) {
		return &flagMistake{errors.New(text)}
	}
	return errors.New(text)
}

func (r *redactor) writer(w io.Writer) io.Writer { return redactingWriter{r: r, w: w} }

type redactingWriter struct {
	r *redactor
	w io.Writer
}

func (rw redactingWriter) Write(p []byte) (int, error) {
	if _, err := io.WriteString(rw.w, rw.r.redact(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}
