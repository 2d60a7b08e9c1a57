package main

import (
	"context"
	"flag"
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
	"persistlab/lab/volume"
)

// cmdLabVolume mounts one emulated volume for a user's own tools until Ctrl-C, then prints what
// the model counted.
func cmdLabVolume(args []string) error {
	fs := flag.NewFlagSet("lab volume", flag.ContinueOnError)
	mountAt := fs.String("mount", "", "an empty directory to mount the volume's file system at (required)")
	keep := fs.Bool("keep", false, "keep the volume's image file (in the work directory) after Ctrl-C")
	opts := map[string]*string{}
	help := map[string]string{
		"type": "volume type: " + strings.Join(volume.TypeNames(), ", "), "size": "size, like 100GiB", "iops": "provisioned IOPS (gp3, io1, io2)",
		"throughput": "provisioned MiB/s (gp3)", "fs": "file system: ext4 or xfs", "instance": "the instance's own limits: none, c4.large, n1-standard-1/2/4/8/16, db-n1-standard-2",
		"era": "current, or 2018 (the seeds' figures)", "model": "on, or off (this machine's own speed)", "latency": "service time per I/O, replacing the type's assumed one (e.g. 1ms)",
		"credit_scale": "factor on the burst bucket's size (1: the published one)",
		"merge_window": "contiguous I/Os arriving within this of each other bill as one (e.g. 10ms; unset: no bound)",
	}
	for _, name := range volume.OptionNames {
		opts[name] = fs.String(name, "", help[name])
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
	if err != nil {
		return fmt.Errorf("lab volume: %w", err)
	}
	if *mountAt == "" {
		return fmt.Errorf("lab volume: --mount: want an empty directory to mount the volume at")
	}
	if cfg.MountAt, err = filepath.Abs(*mountAt); err != nil {
		return err
	}
	if entries, err := os.ReadDir(cfg.MountAt); err != nil || len(entries) > 0 || mounts.Mounted(cfg.MountAt) {
		return fmt.Errorf("lab volume: --mount %s: want an existing, empty directory that nothing is mounted at", *mountAt)
	}
	if cfg.WorkDir, err = os.MkdirTemp("", "persistlab-volume-"); err != nil {
		return err
	}
	release, err := leftover.Hold(cfg.WorkDir, leftover.Run{PID: os.Getpid(), Started: time.Now().UTC()})
	if err != nil {
		return err
	}
	cfg.Keep = *keep
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	v, err := volume.Start(ctx, cfg)
	if err != nil {
		release()
		os.RemoveAll(cfg.WorkDir)
		return fmt.Errorf("lab volume: %w", err)
	}
	fmt.Printf("persistlab lab volume: %s %s (%s) mounted at %s\nmodel: %s\n\nCtrl-C unmounts it and prints what it counted.\n",
		cfg.Spec.Type, given["size"], cfg.FS, v.Dir, modelText(cfg, v))
	<-ctx.Done()
	counts := v.Counters()
	stopErr := v.Stop(context.Background())
	release()
	if cfg.Keep {
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

func modelText(cfg volume.Config, v *volume.Volume) string {
	if cfg.Off {
		return "off (this machine's own speed)"
	}
	return v.Limits().String()
}
