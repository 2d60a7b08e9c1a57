package bucket

import (
	"reflect"
	"testing"
	"time"

	"persistlab/param"
)

// The model option picks the base; only the figures given override it (the declared defaults
// are model gcs's, and must not turn no-delay or off into gcs); a bad value is the error its
// declaration's Check gives.
func TestModelFromOptionsOverridesOnlyWhatIsGiven(t *testing.T) {
	for _, tc := range []struct {
		opts map[string]string
		want Model
	}{
		{nil, DefaultModel()},
		{map[string]string{"model": "no-delay"}, NoDelayModel()},
		{map[string]string{"model": "off", "seed": "5"}, Model{Seed: 5}},
		{map[string]string{"model": "no-delay", "read_median": "3ms", "stream_mib_s": "2", "object_update_burst": "9"},
			func() Model {
				m := NoDelayModel()
				m.Read.Median, m.StreamBytesPerSecond, m.ObjectUpdateBurst = 3*time.Millisecond, 2<<20, 9
				return m
			}()},
	} {
		if got, err := ModelFromOptions(tc.opts); err != nil || got != tc.want {
			t.Errorf("%v: %+v, %v; want %+v", tc.opts, got, err, tc.want)
		}
	}
	for name, v := range map[string]string{"model": "s3", "read_p99": "soon", "stream_mib_s": "-1", "object_update_burst": "0", "seed": "x"} {
		p, _ := param.Find(ModelOptions, name)
		if _, err := ModelFromOptions(map[string]string{name: v}); !reflect.DeepEqual(err, p.Check(name, v)) {
			t.Errorf("%s %q: %v, want %v", name, v, err, p.Check(name, v))
		}
	}
}
