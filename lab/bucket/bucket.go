// Package bucket is the lab's Cloud Storage: a GCS JSON API server on loopback (the embedded
// fake-gcs-server for metadata, with object bodies kept in files and streamed by the store in
// front of it) behind a cloud model of small stages: per-class latency, per-stream bandwidth,
// GCS's per-object write limit answered with 429, and request accounting by pricing class.
package bucket

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/fsouza/fake-gcs-server/fakestorage"
)

// Config of a lab bucket server.
type Config struct {
	Listen  string   // loopback address; port 0 picks a free one
	Buckets []string // created at start
	Model   Model
	Log     io.Writer // request log: a line per request (Common Log Format, then seconds taken); nil for none
	// StorageRoot is where object bodies are kept: Start makes a directory of its own in it, which
	// Close removes (metadata stays in the emulator's memory). A body costs disk there, not memory.
	// Required, and meant to be a run's work directory: the run records it, so `clean` removes
	// the bodies of a killed run's bucket with it.
	StorageRoot string
}

// Server is a running lab bucket.
type Server struct {
	emulator *fakestorage.Server
	store    *store
	listener net.Listener
	http     *http.Server
	acct     *accountant
	port     int
	done     chan error

	connsMu sync.Mutex
	unused  map[net.Conn]bool // connections that have not started a request yet
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
	if cfg.StorageRoot == "" {
		return nil, errors.New("lab bucket: StorageRoot is empty: want the directory to keep object bodies in (the run's work directory, which clean removes after a kill)")
	}
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return nil, fmt.Errorf("lab bucket: listen %s: %w", cfg.Listen, err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	public := "localhost:" + strconv.Itoa(port)
	// The emulator keeps metadata (in memory); the store in front of it keeps bodies, in files.
	dir, err := os.MkdirTemp(cfg.StorageRoot, "persistlab-bucket-")
	if err != nil {
		ln.Close()
		return nil, fmt.Errorf("lab bucket: storage root: %w", err)
	}
	emu, err := fakestorage.NewServerWithOptions(fakestorage.Options{
		NoListener: true, Scheme: "http", Host: "127.0.0.1", Port: uint16(port),
		PublicHost: public, ExternalURL: "http://" + public,
	})
	if err != nil {
		ln.Close()
		os.RemoveAll(dir)
		return nil, fmt.Errorf("lab bucket: %w", err)
	}
	for _, b := range cfg.Buckets {
		emu.CreateBucketWithOpts(fakestorage.CreateBucketOpts{Name: b})
	}
	st := newStore(emu, public, dir)
	s := &Server{emulator: emu, store: st, listener: ln, acct: newAccountant(), port: port, done: make(chan error, 1)}
	limiter := newObjectLimiter(cfg.Model.ObjectUpdateInterval, cfg.Model.ObjectUpdateBurst)
	handler := chain(st,
		logStage(cfg.Log),
		routeStage(public),
		classifyStage,
		s.acct.stage,
		limiter.stage,
		newLatencyStage(cfg.Model).stage,
		bandwidthStage(cfg.Model.StreamBytesPerSecond),
	)
	s.unused = map[net.Conn]bool{}
	s.http = &http.Server{Handler: withToken(handler), ReadHeaderTimeout: 30 * time.Second, ConnState: s.trackConn}
	go func() { s.done <- s.http.Serve(ln) }()
	return s, nil
}

// TokenPath serves an access token for the lab, outside the model and the accounting. A client
// given it (gcsfuse's --token-url) authenticates as against GCS; with --anonymous-access gcsfuse
// uses a bare http.Client instead of its own transport, and so ignores --client-protocol,
// --max-conns-per-host and --max-idle-conns-per-host (gcsfuse v3.11.4,
// internal/storage/storageutil/client.go: CreateHttpClient).
const TokenPath = "/_persistlab/token"

// LabToken is the access token the lab hands out; the lab accepts any, or none.
const LabToken = "persistlab-lab"

// LabBucket is the bucket the backends keep their objects in, and the one lab serve makes unless
// told otherwise.
const LabBucket = "persistlab"

// tokenBody is what TokenPath answers: an oauth2.Token as JSON, with no expiry, so it is
// fetched once per client.
var tokenBody = []byte(`{"access_token":"` + LabToken + `","token_type":"Bearer"}`)

func withToken(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != TokenPath {
			next.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(tokenBody)
	})
}

// TokenURL is where a client fetches the lab's access token (gcsfuse's --token-url).
func (s *Server) TokenURL() string { return "http://" + s.Host() + TokenPath }

// GcsfuseFlags are the flags that point gcsfuse at this bucket, authenticated.
func (s *Server) GcsfuseFlags() []string {
	return []string{"--custom-endpoint=" + s.JSONEndpoint(), "--token-url=" + s.TokenURL()}
}

// Host is "localhost:PORT", the host every client must use.
func (s *Server) Host() string { return "localhost:" + strconv.Itoa(s.port) }

// JSONEndpoint is the JSON API root for gcsfuse's --custom-endpoint.
func (s *Server) JSONEndpoint() string { return "http://" + s.Host() + "/storage/v1/" }

// Accounting is what the bucket has counted since it started.
func (s *Server) Accounting() Accounting { return s.acct.snapshot() }

// WritesSince lists the object writes completed at or after t (at most the first 65,536 of the
// server's life are kept).
func (s *Server) WritesSince(t time.Time) []Write { return s.acct.writesSince(t) }

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

// trackConn keeps the connections no request has used yet, which Close closes.
func (s *Server) trackConn(c net.Conn, state http.ConnState) {
	s.connsMu.Lock()
	defer s.connsMu.Unlock()
	if state == http.StateNew {
		s.unused[c] = true
	} else {
		delete(s.unused, c)
	}
}

// Close stops serving, letting requests in progress finish (up to 5 s), and removes the object
// bodies. Connections a client opened but never used are closed at once (http.Server.Shutdown
// would wait 5 s for their first request).
func (s *Server) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	shut := make(chan error, 1)
	go func() { shut <- s.http.Shutdown(ctx) }()
	for {
		select {
		case err := <-shut:
			return s.closed(err)
		case <-time.After(10 * time.Millisecond):
		}
		s.connsMu.Lock()
		for c := range s.unused {
			c.Close()
		}
		s.connsMu.Unlock()
	}
}

func (s *Server) closed(err error) error {
	if errors.Is(err, context.DeadlineExceeded) {
		err = s.http.Close()
	}
	s.emulator.Stop()
	s.store.close()
	return errors.Join(err, os.RemoveAll(s.store.dir))
}

// Snapshot copies every object of src whose name starts with prefix into bucket dst (made if
// needed, emptied of that prefix first), server-side and outside the model: it records what the
// bucket held at one moment without costing the workload anything. A copy's body is a hard link
// to the original's file; no write to the bucket lands meanwhile.
func (s *Server) Snapshot(src, dst, prefix string) (int, error) {
	s.store.mu.Lock()
	defer s.store.mu.Unlock()
	return s.store.snapshotLocked(s, src, dst, prefix)
}
