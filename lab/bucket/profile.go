package bucket

import (
	"fmt"
	"time"

	"persistlab/param"
	"persistlab/profile"
)

// A bucket profile (persistlab calibrate bucket) sets the model's single-figure options from a
// real bucket; the base model and the draws' seed are no measurement.
func init() {
	var opts []param.Param
	for _, o := range ModelOptions {
		if o.Name != "model" && o.Name != "seed" {
			opts = append(opts, o)
		}
	}
	profile.RegisterKind(profile.Kind{Name: "bucket", Model: "bucket", Options: opts, Check: checkProfileFigures})
}

// checkProfileFigures refuses figures no bucket could have measured: a p99 below its median.
func checkProfileFigures(opts map[string]string) error {
	m, err := ModelFromOptions(opts)
	if err != nil {
		return err
	}
	for _, c := range []struct {
		class string
		l     Latency
	}{{"read", m.Read}, {"write", m.Write}, {"list", m.List}} {
		_, hasMedian := opts[c.class+"_median"]
		_, hasP99 := opts[c.class+"_p99"]
		if hasMedian && hasP99 && c.l.P99 < c.l.Median {
			return fmt.Errorf("%s_p99 %s is below %s_median %s: want a p99 at least its median", c.class, c.l.P99.Round(time.Microsecond), c.class, c.l.Median.Round(time.Microsecond))
		}
	}
	return nil
}
