// Package registry holds the named things packages make known from init: workloads, backends,
// their models, presenters, profile kinds. A name registers once: a second registration is two
// packages claiming one name, a build mistake no run could recover from, so it panics.
package registry

import (
	"fmt"
	"slices"
	"strings"
	"sync"
)

// Registry maps names to entries, safe for use from many goroutines.
type Registry[T any] struct {
	what  string // what an entry is, for messages: "workload", "backend: volume model of"
	mu    sync.RWMutex
	byKey map[string]T
	order []string // names in the order they registered
}

// New returns an empty registry whose messages call an entry what.
func New[T any](what string) *Registry[T] {
	return &Registry[T]{what: what, byKey: map[string]T{}}
}

// Register adds v under name; a second registration of name panics.
func (r *Registry[T]) Register(name string, v T) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.byKey[name]; dup {
		panic(r.what + " " + name + " registered twice")
	}
	r.byKey[name] = v
	r.order = append(r.order, name)
}

// Get finds the entry registered under name.
func (r *Registry[T]) Get(name string) (T, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	v, ok := r.byKey[name]
	return v, ok
}

// Lookup is Get whose miss is an error naming what may be asked for.
func (r *Registry[T]) Lookup(name string) (T, error) {
	v, ok := r.Get(name)
	if !ok {
		return v, fmt.Errorf("%s %q: want one of %s", r.what, name, strings.Join(r.Names(), ", "))
	}
	return v, nil
}

// Names lists the registered names, sorted; empty, not nil, when none is.
func (r *Registry[T]) Names() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	names := slices.Clone(r.order)
	if names == nil {
		names = []string{}
	}
	slices.Sort(names)
	return names
}

// Values lists the entries in the order they registered.
func (r *Registry[T]) Values() []T {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]T, 0, len(r.order))
	for _, n := range r.order {
		out = append(out, r.byKey[n])
	}
	return out
}
