// Package bucket is the lab's Cloud Storage: a GCS JSON API server on loopback (the embedded
// fake-gcs-server) behind a cloud model of small stages: per-class latency, per-stream bandwidth,
// GCS's per-object write limit answered with 429, and request accounting by pricing class.
package bucket

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/fsouza/fake-gcs-server/fakestorage"
)

// Config of a lab bucket server.
type Config struct {
	Listen  string   // loopback address; port 0 picks a free one
	Buckets []string // created at start
	Model   Model
	Log     io.Writer // request log of the emulator; nil for none
}

// Server is a running lab bucket.
type Server struct {
	emulator *fakestorage.Server
	listener net.Listener
	http     *http.Server
	acct     *accountant
	port     int
	done     chan error
}

// Start serves the bucket. The emulator answers as host "localhost:PORT", as gcsfuse needs.
func Start(cfg Config) (*Server, error) {
	if cfg.Listen == "" {
		cfg.Listen = "127.0.0.1:0"
	}
	host, _, err := net.SplitHostPort(cfg.Listen)
	if err != nil {
		return nil, fmt.Errorf("lab bucket: listen %q: want HOST:PORT on loopback", cfg.Listen)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return nil, fmt.Errorf("lab bucket: listen %q: the lab serves loopback only (127.0.0.1, ::1, localhost)", cfg.Listen)
	}
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return nil, fmt.Errorf("lab bucket: listen %s: %w", cfg.Listen, err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	public := "localhost:" + strconv.Itoa(port)
	emu, err := fakestorage.NewServerWithOptions(fakestorage.Options{
		NoListener: true, Scheme: "http", Host: "127.0.0.1", Port: uint16(port),
		PublicHost: public, ExternalURL: "http://" + public, Writer: cfg.Log,
	})
	if err != nil {
		ln.Close()
		return nil, fmt.Errorf("lab bucket: %w", err)
	}
	for _, b := range cfg.Buckets {
		emu.CreateBucketWithOpts(fakestorage.CreateBucketOpts{Name: b})
	}
	s := &Server{emulator: emu, listener: ln, acct: newAccountant(), port: port, done: make(chan error, 1)}
	limiter := newObjectLimiter(cfg.Model.ObjectUpdateInterval, cfg.Model.ObjectUpdateBurst)
	handler := chain(emu.HTTPHandler(),
		classifyStage,
		s.acct.stage,
		limiter.stage,
		newLatencyStage(cfg.Model).stage,
		bandwidthStage(cfg.Model.StreamBytesPerSecond),
	)
	s.http = &http.Server{Handler: handler, ReadHeaderTimeout: 30 * time.Second}
	go func() { s.done <- s.http.Serve(ln) }()
	return s, nil
}

// Host is "localhost:PORT", the host every client must use.
func (s *Server) Host() string { return "localhost:" + strconv.Itoa(s.port) }

// JSONEndpoint is the JSON API root for gcsfuse's --custom-endpoint.
func (s *Server) JSONEndpoint() string { return "http://" + s.Host() + "/storage/v1/" }

// Accounting is what the bucket has counted since it started.
func (s *Server) Accounting() Accounting { return s.acct.snapshot() }

// LastWriteUnder is the latest completed write to an object named bucket/prefix...
func (s *Server) LastWriteUnder(bucket, prefix string) (string, time.Time) {
	return s.acct.lastWriteUnder(bucket + "/" + prefix)
}

// objectsUnder lists every object of bucket whose name starts with prefix, following pages.
func (s *Server) objectsUnder(bucket, prefix string) ([]fakestorage.ObjectAttrs, error) {
	var all []fakestorage.ObjectAttrs
	opts := fakestorage.ListOptions{Prefix: prefix}
	for {
		page, err := s.emulator.ListObjectsWithOptionsPaginated(bucket, opts)
		if err != nil {
			return nil, err
		}
		all = append(all, page.Objects...)
		if page.NextPageToken == "" {
			return all, nil
		}
		opts.PageToken = page.NextPageToken
	}
}

// ObjectNames lists a bucket's objects (for tests and recovery checks).
func (s *Server) ObjectNames(bucket string) ([]string, error) {
	objs, err := s.objectsUnder(bucket, "")
	if err != nil {
		return nil, err
	}
	names := make([]string, len(objs))
	for i, o := range objs {
		names[i] = o.Name
	}
	return names, nil
}

// Close stops serving.
func (s *Server) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := s.http.Shutdown(ctx)
	if errors.Is(err, context.DeadlineExceeded) {
		err = s.http.Close()
	}
	s.emulator.Stop()
	return err
}

// Snapshot copies every object of src whose name starts with prefix into bucket dst (made if
// needed, emptied of that prefix first), server-side and outside the model: it records what the
// bucket held at one moment without costing the workload anything.
func (s *Server) Snapshot(src, dst, prefix string) (int, error) {
	s.emulator.CreateBucketWithOpts(fakestorage.CreateBucketOpts{Name: dst})
	old, err := s.objectsUnder(dst, prefix)
	if err != nil {
		return 0, err
	}
	for _, o := range old {
		if err := s.emulator.Backend().DeleteObject(dst, o.Name); err != nil {
			return 0, err
		}
	}
	objs, err := s.objectsUnder(src, prefix)
	if err != nil {
		return 0, err
	}
	for _, attrs := range objs {
		obj, err := s.emulator.GetObject(src, attrs.Name)
		if err != nil {
			return 0, err
		}
		obj.BucketName = dst
		s.emulator.CreateObject(obj)
	}
	return len(objs), nil
}
