// Package calibrate measures a user's own target with a fixed, small probe and fits the lab's
// model to it: a bucket's latencies by class, its per-stream bandwidth and its per-object write
// limit (Bucket). Each probe holds out one point it does not fit and predicts it from the fit, so
// a user sees how far the fitted model can be trusted. What it fits becomes a profile (package
// profile) that a run takes with --profile.
package calibrate

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strings"
	"time"
)

// Client speaks the GCS JSON API to one bucket: its requests carry whatever authorization the
// http.Client's transport adds, and nothing of it is ever part of an error.
type Client struct {
	HTTP   *http.Client
	base   string // scheme://host[/prefix] before /storage/v1
	bucket string
	host   string
}

// NewClient is a client for bucket at endpoint, a JSON API endpoint such as
// https://storage.googleapis.com/storage/v1/ (gcsfuse's --custom-endpoint form) or the bare host.
func NewClient(h *http.Client, endpoint, bucket string) (*Client, error) {
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("--endpoint %q: want a GCS JSON API endpoint URL like https://storage.googleapis.com/storage/v1/ (no user, query or fragment)", endpoint)
	}
	if !validBucketName(bucket) {
		return nil, fmt.Errorf("--bucket %q: want a bucket name: 3 to 222 characters of lower-case letters, digits, '-', '_' and '.'", bucket)
	}
	prefix := strings.TrimSuffix(strings.TrimSuffix(u.Path, "/"), "/storage/v1")
	return &Client{HTTP: h, base: u.Scheme + "://" + u.Host + prefix, bucket: bucket, host: u.Host}, nil
}

func validBucketName(s string) bool {
	if len(s) < 3 || len(s) > 222 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			return false
		}
	}
	return true
}

// Target is what the probe measures, as a profile names it: the endpoint's host and the bucket.
func (c *Client) Target() string { return c.host + "/" + c.bucket }

// Bucket is the bucket's name.
func (c *Client) Bucket() string { return c.bucket }

// Host is the endpoint's host (and port).
func (c *Client) Host() string { return c.host }

// StatusError is an answer other than the one wanted.
type StatusError struct {
	Op     string
	Status int
	Reason string // GCS's error message, cut short
}

func (e *StatusError) Error() string {
	s := fmt.Sprintf("%s: HTTP %d", e.Op, e.Status)
	if e.Reason != "" {
		s += ": " + e.Reason
	}
	return s
}

// Throttled says whether the answer is GCS's rate limit (429) or its overload (503).
func (e *StatusError) Throttled() bool {
	return e.Status == http.StatusTooManyRequests || e.Status == http.StatusServiceUnavailable
}

// Timing is one request's time to its answer's first byte and to its last.
type Timing struct {
	FirstByte time.Duration
	Total     time.Duration
	Bytes     int64
}

// do sends one request and reads its whole answer; an answer other than want is a *StatusError.
func (c *Client) do(ctx context.Context, op, method, rawURL string, body []byte, want int) (Timing, []byte, error) {
	var t Timing
	var start time.Time
	trace := &httptrace.ClientTrace{GotFirstResponseByte: func() { t.FirstByte = time.Since(start) }}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(httptrace.WithClientTrace(ctx, trace), method, rawURL, rd)
	if err != nil {
		return t, nil, fmt.Errorf("%s: %w", op, err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/octet-stream")
	}
	start = time.Now()
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return t, nil, fmt.Errorf("%s: %w", op, scrubURLError(err))
	}
	defer resp.Body.Close()
	var kept bytes.Buffer
	// The answer is read whole (a large read is the measurement); only its first 64 KiB are kept,
	// for an error's reason or a listing.
	n, err := io.Copy(&limitedBuffer{buf: &kept, max: 1 << 16}, resp.Body)
	t.Total, t.Bytes = time.Since(start), n
	if err != nil {
		return t, nil, fmt.Errorf("%s: reading the answer: %w", op, scrubURLError(err))
	}
	if resp.StatusCode != want {
		return t, nil, &StatusError{Op: op, Status: resp.StatusCode, Reason: reasonOf(kept.Bytes())}
	}
	return t, kept.Bytes(), nil
}

// limitedBuffer keeps the first max bytes written to it and counts the rest as written.
type limitedBuffer struct {
	buf *bytes.Buffer
	max int
}

func (l *limitedBuffer) Write(b []byte) (int, error) {
	if room := l.max - l.buf.Len(); room > 0 {
		l.buf.Write(b[:min(len(b), room)])
	}
	return len(b), nil
}

// reasonOf is GCS's error message from an error answer, cut to a line.
func reasonOf(body []byte) string {
	var e struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	msg := strings.TrimSpace(string(body))
	if json.Unmarshal(body, &e) == nil && e.Error.Message != "" {
		msg = e.Error.Message
	}
	msg = strings.Join(strings.Fields(msg), " ")
	if len(msg) > 200 {
		msg = msg[:200] + "..."
	}
	return msg
}

// scrubURLError keeps a transport error's cause without its URL's query (never a credential
// here, but no reason to print one).
func scrubURLError(err error) error {
	if ue, ok := err.(*url.Error); ok {
		return fmt.Errorf("%s %s: %w", ue.Op, strings.SplitN(ue.URL, "?", 2)[0], ue.Err)
	}
	return err
}

func (c *Client) objectURL(name string) string {
	return c.base + "/storage/v1/b/" + url.PathEscape(c.bucket) + "/o/" + url.PathEscape(name)
}

// Put uploads body as object name in one request (a simple media upload: one class A insert).
func (c *Client) Put(ctx context.Context, name string, body []byte) (Timing, error) {
	u := c.base + "/upload/storage/v1/b/" + url.PathEscape(c.bucket) + "/o?uploadType=media&name=" + url.QueryEscape(name)
	t, _, err := c.do(ctx, "upload "+name, http.MethodPost, u, body, http.StatusOK)
	return t, err
}

// Get reads object name whole (one class B get).
func (c *Client) Get(ctx context.Context, name string) (Timing, error) {
	t, _, err := c.do(ctx, "read "+name, http.MethodGet, c.objectURL(name)+"?alt=media", nil, http.StatusOK)
	return t, err
}

// List lists at most max objects under prefix (one class A list) and returns their names.
func (c *Client) List(ctx context.Context, prefix string, max int) (Timing, []string, error) {
	u := c.base + "/storage/v1/b/" + url.PathEscape(c.bucket) + "/o?prefix=" + url.QueryEscape(prefix) + fmt.Sprintf("&maxResults=%d&fields=items(name),nextPageToken", max)
	t, body, err := c.do(ctx, "list "+prefix, http.MethodGet, u, nil, http.StatusOK)
	if err != nil {
		return t, nil, err
	}
	var page struct {
		Items []struct {
			Name string `json:"name"`
		} `json:"items"`
	}
	if err := json.Unmarshal(body, &page); err != nil {
		return t, nil, fmt.Errorf("list %s: the answer is not a listing: %w", prefix, err)
	}
	var names []string
	for _, it := range page.Items {
		names = append(names, it.Name)
	}
	return t, names, nil
}

// Delete deletes object name (free); an object already gone is deleted.
func (c *Client) Delete(ctx context.Context, name string) error {
	_, _, err := c.do(ctx, "delete "+name, http.MethodDelete, c.objectURL(name), nil, http.StatusNoContent)
	if se, ok := err.(*StatusError); ok && (se.Status == http.StatusNotFound || se.Status == http.StatusOK) {
		return nil
	}
	return err
}
