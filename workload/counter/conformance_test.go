package counter_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"testing"
	"time"

	appcounter "persistlab/app/counter"
	"persistlab/workload"
	"persistlab/workload/conformance"
	"persistlab/workload/counter"
)

// The test binary stands in for persistlab's `app counter` (cmd/persistlab/app.go): the same app
// package, its Rails 8 defaults, the same ready line and the same SIGTERM shutdown, with only the
// flags the workload passes at its defaults.
func TestMain(m *testing.M) {
	if len(os.Args) > 2 && os.Args[1] == "app" && os.Args[2] == "counter" {
		if err := appCounter(os.Args[3:]); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func appCounter(args []string) error {
	fs := flag.NewFlagSet("app counter", flag.ContinueOnError)
	db := fs.String("db", "", "")
	listen := fs.String("listen", "127.0.0.1:0", "")
	prepare := fs.Bool("prepare", false, "")
	if err := fs.Parse(args); err != nil {
		return err // a flag the stand-in lacks: a test that sets its parameter needs the real app
	}
	a, err := appcounter.Open(appcounter.Options{DBPath: *db})
	if err != nil {
		return err
	}
	defer a.Close()
	if *prepare {
		return nil
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: a.Handler(), ReadHeaderTimeout: 10 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		c, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(c)
	}()
	fmt.Printf("%shttp://%s\n", appcounter.ListeningMarker, ln.Addr())
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// The counter on a local directory: 2 VUs for a second, then killed under load after one.
func TestConformance(t *testing.T) {
	conformance.Run(t, counter.Name, conformance.Options{
		Fixed: map[string]string{"vus": "2"},
		Self:  os.Args[0],
		Result: func(t *testing.T, res *workload.Result) {
			m := res.Metrics
			ok := m["ok"]
			if ok < 1 || m["errors"] != 0 || m["count_delta"] != ok || m["lost_updates"] != 0 {
				t.Errorf("ok %v, errors %v, count_delta %v, lost_updates %v: the counter is exact on a local disk", ok, m["errors"], m["count_delta"], m["lost_updates"])
			}
			if h := res.Histograms["latency"]; h == nil || float64(h.Count()) != ok {
				t.Errorf("latency histogram %v, %v answers", h, ok)
			}
		},
	})
}
