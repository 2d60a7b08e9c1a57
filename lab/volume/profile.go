package volume

import (
	"path"
	"strings"

	"persistlab/param"
	"persistlab/profile"
)

// A volume profile (persistlab calibrate volume) sets what the probe measured on a real volume
// as options of the entries of its type: the service time (latency), the IOPS and throughput
// where the type provisions them, and the burst bucket's size (credit_scale). An entry whose
// type cannot take one of them (gp2 provisions no IOPS; gp3 no fewer than its baseline) declines
// it, and the run says so.
func init() {
	var figures, selectors []param.Param
	for _, o := range Options {
		switch o.Name {
		case "latency", "iops", "throughput", "credit_scale":
			figures = append(figures, o)
		case "type":
			selectors = append(selectors, o)
		}
	}
	profile.RegisterKind(profile.Kind{Name: "volume", Model: "volume", Options: figures, Selectors: selectors,
		Target:      "the machine and the directory probed, like vm-1:/mnt/data (an absolute path; no user, query or control characters)",
		ValidTarget: validProfileTarget,
		Fits: func(opts map[string]string) error {
			_, err := ConfigFromOptions(opts)
			return err
		}})
}

// validProfileTarget: host:/absolute/dir, nothing that could carry a credential.
func validProfileTarget(s string) bool {
	host, dir, ok := strings.Cut(s, ":")
	return ok && host != "" && !strings.ContainsAny(host, "/@?# \t") && path.IsAbs(dir) && !strings.ContainsAny(dir, "\t\n")
}
