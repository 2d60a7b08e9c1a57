package main

import (
	"fmt"
	"os"
	"strings"

	"persistlab/internal/damon"
	"persistlab/internal/sysinfo"
)

// checkPausePageOut refuses, before anything runs, --pause-host-pageout where it cannot act.
func checkPausePageOut(asked bool) error {
	if !asked {
		return nil
	}
	if err := damon.Check(sysinfo.DamonAdmin, os.Geteuid()); err != nil {
		return fmt.Errorf("--pause-host-pageout: %w", err)
	}
	return nil
}

// pausePageOut turns off the machine's running DAMON page-out policies, recorded in the run's
// work directory so that clean restores them after a kill, and says what it paused.
func (c *runCmd) pausePageOut() error {
	rec, err := damon.Pause(sysinfo.DamonAdmin, c.dir)
	if _, left := damon.Recorded(c.dir); err != nil && left {
		return fmt.Errorf("--pause-host-pageout: %w (persistlab clean %s turns on what it turned off)", err, c.dir)
	} else if err != nil {
		return fmt.Errorf("--pause-host-pageout: %w", err)
	}
	c.paused = rec.Policies()
	if len(c.paused) == 0 {
		fmt.Fprintln(os.Stderr, "persistlab run: --pause-host-pageout: no DAMON page-out policy runs on this machine: nothing paused")
	} else {
		fmt.Fprintf(terminalSafe(os.Stderr), "persistlab run: --pause-host-pageout: paused until the run ends: %s\n", strings.Join(c.paused, "; "))
	}
	return nil
}

// restorePageOut turns on again the page-out policies the run paused (recorded in dir), says so,
// and says how to finish it if it cannot.
func restorePageOut(dir string) error {
	done, err := damon.Restore(dir)
	for _, line := range done {
		fmt.Fprintf(terminalSafe(os.Stderr), "persistlab run: --pause-host-pageout: %s\n", line)
	}
	if err != nil {
		return fmt.Errorf("--pause-host-pageout: not every page-out policy could be restored: %w (persistlab clean %s tries again)", err, dir)
	}
	return nil
}
