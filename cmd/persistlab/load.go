package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"strconv"

	"persistlab/workload/httpload"
)

// cmdLoad drives load until its duration ends or ctx does (SIGINT, SIGTERM).
func cmdLoad(ctx context.Context, args []string) error {
	fs := newFlags("load")
	target := fs.String("url", "", "endpoint on loopback, e.g. http://127.0.0.1:8080/count_up")
	method := fs.String("method", "POST", "HTTP method")
	vus := fs.Int("vus", 10, "virtual users (closed loop) or connections (open loop)")
	duration := fs.Duration("duration", 0, "how long to start requests, e.g. 30s")
	rate := fs.Float64("rate", 0, "open loop: requests started per second (latency counts from each intended start)")
	asJSON := fs.Bool("json", false, "print the result as JSON")
	if _, err := parseInterspersed(fs, args); err != nil {
		return err
	}
	// The flags a parameter of the load also sets are bounded by its declaration, as a scenario's.
	for _, f := range []struct{ name, value string }{{"vus", strconv.Itoa(*vus)}, {"rate", strconv.FormatFloat(*rate, 'g', -1, 64)}} {
		if err := httpload.Param(f.name).Check("--"+f.name, f.value); err != nil {
			return err
		}
	}
	u, err := url.Parse(*target)
	if err != nil || u.Host == "" {
		return fmt.Errorf("--url %q: want http://HOST:PORT/PATH on loopback", *target)
	}
	if err := checkLoopback("--url", u.Host); err != nil {
		return err
	}
	mode := httpload.ModeClosed
	if *rate > 0 {
		mode = httpload.ModeOpen
	}
	res, err := httpload.Run(ctx, httpload.Config{URL: *target, Method: *method, Mode: mode, VUs: *vus, Rate: *rate, Duration: *duration})
	if err != nil {
		return err
	}
	s := res.Latency.Summarize(res.Elapsed)
	if *asJSON {
		return json.NewEncoder(os.Stdout).Encode(map[string]any{"summary": s, "result": res, "elapsed_s": res.Elapsed.Seconds()})
	}
	fmt.Printf("requests %d ok, %d errors in %.2fs: %.1f req/s\n", res.OK, res.Errors(), res.Elapsed.Seconds(), s.Rate)
	fmt.Printf("latency ms: min %.3f  med %.3f  avg %.3f  p(90) %.3f  p(95) %.3f  p(99) %.3f  max %.3f\n",
		s.MinMs, s.MedMs, s.AvgMs, s.P90Ms, s.P95Ms, s.P99Ms, s.MaxMs)
	for _, e := range res.ErrorSamples {
		fmt.Printf("error: %s\n", e)
	}
	return nil
}
