package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"persistlab/internal/leftover"
	"persistlab/internal/mounts"
	"persistlab/internal/proc"
	"persistlab/internal/sysinfo"
	"persistlab/lab/volume"
	"persistlab/param"
)

// cmdLabVolume mounts one emulated volume for a user's own tools until Ctrl-C, then prints what
// the model counted.
func cmdLabVolume(ctx context.Context, args []string) error {
	fs := newFlags("lab volume")
	mountAt := fs.String("mount", "", "an empty directory to mount the volume's file system at (required)")
	keep := fs.Bool("keep", false, "keep the volume's image file (in the work directory) after Ctrl-C")
	opts := map[string]*string{}
	for _, p := range volume.Options { // the volume backend's options, declared once, as flags in kebab-case
		opts[p.Name] = fs.String(strings.ReplaceAll(p.Name, "_", "-"), "", p.Help)
	}
	if _, err := parseInterspersed(fs, args); err != nil {
		return err
	}
	given := map[string]string{}
	for name, v := range opts {
		if *v != "" {
			given[name] = *v
		}
	}
	cfg, err := volume.ConfigFromOptions(given)
	if fe := (*param.FieldError)(nil); errors.As(err, &fe) { // names the option as a scenario does: say the flag
		fe.Field = "--" + strings.ReplaceAll(fe.Field, "_", "-")
	}
	if err != nil {
		return err
	}
	if *mountAt == "" {
		return fmt.Errorf("--mount: want an empty directory to mount the volume at")
	}
	if cfg.MountAt, err = filepath.Abs(*mountAt); err != nil {
		return err
	}
	if entries, err := os.ReadDir(cfg.MountAt); err != nil || len(entries) > 0 || mounts.Mounted(cfg.MountAt) {
		return fmt.Errorf("--mount %s: want an existing, empty directory that nothing is mounted at", *mountAt)
	}
	lock, err := leftover.CreateTemp("", "persistlab-volume-", leftover.Run{PID: os.Getpid(), Started: time.Now().UTC()})
	if err != nil {
		return err
	}
	defer lock.Release()
	cfg.WorkDir = lock.Dir()
	proc.NotifyStarts(lock.Record)
	defer proc.NotifyStarts(nil)
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE) // a closed pipe must not end the server under a mount
	cfg.Keep = *keep
	signals := make(chan os.Signal, 4)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP) // a closed terminal stops it as Ctrl-C does
	defer signal.Stop(signals)
	ctx, cancel := context.WithCancel(ctx)
	go func() { <-signals; cancel() }()
	v, err := volume.Start(ctx, cfg)
	if err != nil { // Start undid what it had done
		if !lock.Release() {
			os.RemoveAll(cfg.WorkDir)
		}
		return err
	}
	fmt.Printf("persistlab lab volume: %s %s (%s) mounted at %s\nmodel: %s\n\nCtrl-C unmounts it and prints what it counted.\n",
		cfg.Spec.Type, given["size"], cfg.FS, v.Dir, modelText(cfg, v))
	if policies := sysinfo.PageOutPolicies(sysinfo.DamonAdmin); len(policies) > 0 && !cfg.Off {
		fmt.Printf("warning: this machine pages out idle memory (%s): page cache idle that long is read again from the volume, where a cloud instance would still hold it\n",
			strings.Join(policies, "; "))
	}
	<-ctx.Done()
	stopErr := stopWhenFree(v, cfg.MountAt, signals)
	counts := v.Counters() // after the stop: what the kernel wrote back is the volume's too
	if kept := lock.Release(); cfg.Keep || kept {
		fmt.Printf("\nimage kept in %s\n", cfg.WorkDir)
	} else if stopErr == nil {
		os.RemoveAll(cfg.WorkDir)
	}
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	fmt.Println()
	for _, k := range keys {
		fmt.Printf("  %-22s %.0f\n", k, counts[k])
	}
	return stopErr
}

// stopWhenFree stops the volume; while its file system is busy (a shell's working directory, an
// open file) it keeps serving and says so, since a file system left mounted over a stopped
// server loses what was not yet written. A further signal says again why it waits.
func stopWhenFree(v *volume.Volume, mountAt string, signals <-chan os.Signal) error {
	for said := false; ; {
		err := v.Stop(context.Background())
		if err == nil || !v.Mounted() || !strings.Contains(err.Error(), "busy") {
			return err // stopped, or a failure that waiting would not end
		}
		if !said {
			fmt.Fprintf(os.Stderr, "\npersistlab lab volume: %s is busy (%v)\nstill serving it until it is free: close what uses it (fuser -vm %s lists it)\n", mountAt, err, mountAt)
			said = true
		}
		select {
		case <-signals:
			fmt.Fprintf(os.Stderr, "persistlab lab volume: still waiting for %s to be free (a stopped server under a mounted file system would lose what is not yet written)\n", mountAt)
		case <-time.After(time.Second):
		}
	}
}

func modelText(cfg volume.Config, v *volume.Volume) string {
	if cfg.Off {
		return "off (this machine's own speed)"
	}
	return v.Limits().String()
}
