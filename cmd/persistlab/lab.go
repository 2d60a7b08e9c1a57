package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"persistlab/internal/leftover"
	"persistlab/lab/bucket"
	"persistlab/profile"
	"persistlab/provenance"
)

// cmdLabServe serves the emulated GCS bucket until ctx ends (SIGINT, SIGTERM), then prints what
// it counted.
func cmdLabServe(ctx context.Context, args []string) error {
	fs := newFlags("lab serve")
	listen := fs.String("listen", "127.0.0.1:4443", "loopback address to serve on")
	buckets := fs.String("bucket", bucket.LabBucket, "bucket(s) to create, comma-separated")
	model := bucket.DefaultModel()
	addModelFlags(fs, &model)
	noDelay := fs.Bool("no-delay", false, "serve at loopback speed (keep only the per-object write limit)")
	logPath := fs.String("log", "", "append every request, in Apache Common Log Format (plus the seconds taken), to this file")
	if _, err := parseInterspersed(fs, args); err != nil {
		return err
	}
	if *noDelay {
		model = bucket.NoDelayModel()
	}
	// Bodies in a directory of its own, recorded as lab volume's is: Ctrl-C removes it, and
	// clean removes it after a kill.
	lock, err := leftover.CreateTemp("", "persistlab-serve-", leftover.Run{PID: os.Getpid(), Started: time.Now().UTC()})
	if err != nil {
		return err
	}
	defer func() {
		if !lock.Release() {
			os.RemoveAll(lock.Dir())
		}
	}()
	cfg := bucket.Config{Listen: *listen, Buckets: strings.Split(*buckets, ","), Model: model, StorageRoot: lock.Dir()}
	if *logPath != "" {
		f, err := os.OpenFile(*logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return fmt.Errorf("--log: %w", err)
		}
		defer f.Close()
		cfg.Log = f
	}
	srv, err := bucket.Start(cfg)
	if err != nil {
		return err
	}
	defer srv.Close()
	first := strings.Split(*buckets, ",")[0]
	fmt.Printf(`persistlab lab bucket: GCS JSON API on http://%[1]s (buckets: %[2]s)
model: read %[3]v/%[4]v, write %[5]v/%[6]v, list %[7]v/%[8]v (median/p99), %.0f MiB/s per stream, one write per %[10]v per object (burst %[11]d)

gcsfuse:
  gcsfuse --foreground --implicit-dirs --custom-endpoint=%[12]s --token-url=%[14]s %[13]s MOUNTPOINT
Litestream (replica url gs://%[13]s/PATH):
  STORAGE_EMULATOR_HOST=%[1]s litestream replicate -config litestream.yml
Any Google Cloud client library:
  STORAGE_EMULATOR_HOST=%[1]s   (the endpoint must say localhost, not 127.0.0.1, for gcsfuse)

Ctrl-C stops; request counts by pricing class are printed then.
`, srv.Host(), *buckets, model.Read.Median, model.Read.P99, model.Write.Median, model.Write.P99, model.List.Median, model.List.P99,
		model.StreamBytesPerSecond/(1<<20), model.ObjectUpdateInterval, model.ObjectUpdateBurst, srv.JSONEndpoint(), first, srv.TokenURL())
	<-ctx.Done()
	a := srv.Accounting()
	fmt.Printf("\nclass A %d, class B %d, free %d, throttled (429) %d; %d bytes in, %d bytes out; $%.6f at list prices\n",
		a.ClassA, a.ClassB, a.Free, a.Throttled, a.BytesIn, a.BytesOut, a.CostUSD())
	for _, m := range a.Methods() {
		fmt.Printf("  %-40s %d\n", m, a.ByMethod[m])
	}
	return nil
}

// addModelFlags lets a user reshape the bucket's cloud model.
func addModelFlags(fs *flag.FlagSet, m *bucket.Model) {
	lat := func(name, what string, l *bucket.Latency) {
		fs.DurationVar(&l.Median, name+"-median", l.Median, what+" latency median (an assumption: GCS publishes none)")
		fs.DurationVar(&l.P99, name+"-p99", l.P99, what+" latency 99th percentile")
	}
	lat("read", "class B (get)", &m.Read)
	lat("write", "class A mutation (insert, compose, patch)", &m.Write)
	lat("list", "class A listing", &m.List)
	fs.Float64Var(&m.StreamBytesPerSecond, "stream-bytes-per-second", m.StreamBytesPerSecond, "bandwidth of each request body, each way; 0 for none")
	fs.DurationVar(&m.ObjectUpdateInterval, "object-update-interval", m.ObjectUpdateInterval, "per-object write limit (GCS: one per second); 0 for none")
	fs.IntVar(&m.ObjectUpdateBurst, "object-update-burst", m.ObjectUpdateBurst, "writes to one object allowed at once before the limit applies")
	fs.Int64Var(&m.Seed, "seed", m.Seed, "seed of the latency draws")
}

// cmdLabModel prints the models' figures and where each comes from: published (page and date),
// assumed (why, what it moves) or fitted (from which seed's table: calibration for that seed).
func cmdLabModel(args []string, w io.Writer) error {
	fs := newFlags("lab model")
	markdown := fs.Bool("markdown", false, "a Markdown table (docs/fidelity.md) instead of aligned columns")
	profilePath := fs.String("profile", "", "the figures as a profile persistlab calibrate wrote sets them: its figures measured, in place of the defaults")
	names, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	want := "all"
	switch len(names) {
	case 0:
	case 1:
		want = names[0]
	default:
		return fmt.Errorf("lab model: want one model: %s or all", strings.Join(provenance.Names(), ", "))
	}
	var figs []provenance.Figure
	if want == "all" {
		figs = provenance.All()
	} else if m, ok := provenance.Lookup(want); ok {
		figs = m.Figures()
	} else {
		return fmt.Errorf("lab model %q: want %s or all", want, strings.Join(provenance.Names(), ", "))
	}
	if *profilePath != "" {
		p, err := profile.Load(*profilePath)
		if err != nil {
			return fmt.Errorf("--profile: %w", err)
		}
		measured, err := p.Provenance(*profilePath)
		if err != nil {
			return err
		}
		kind, _ := profile.LookupKind(p.Kind)
		replaced, done := 0, map[string]bool{}
		for i, f := range figs {
			// The row the measured figure stands for (Provenance chose it: the model's own, of
			// the profile's volume type); a named variant's (model gcsfuse-bench-2024's read
			// median) is what an entry choosing it would run, and stays listed as it is.
			if m, ok := measured[f.Option]; ok && f.Model == kind.Model && f.Option != "" && !done[f.Option] && m.Name == f.Name && m.Go == f.Go {
				figs[i], replaced, done[f.Option] = m, replaced+1, true
			}
		}
		fmt.Fprintf(w, "%d %s figures as profile %s sets them: measured on %s at %s from %s\n\n", replaced, kind.Model, *profilePath,
			p.Measured.Target, p.Measured.When, p.Measured.Machine)
	}
	if *markdown {
		return provenance.Markdown(w, figs)
	}
	return provenance.Print(w, figs)
}
