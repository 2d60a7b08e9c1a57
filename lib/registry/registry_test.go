package registry

import (
	"slices"
	"testing"
)

func TestRegisterLookupNames(t *testing.T) {
	r := New[int]("widget")
	if names := r.Names(); names == nil || len(names) != 0 {
		t.Errorf("empty registry names %#v, want an empty list", names)
	}
	r.Register("b", 2)
	r.Register("a", 1)
	r.Register("c", 3)
	if got := r.Names(); !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Errorf("names %v, want sorted", got)
	}
	if got := r.Values(); !slices.Equal(got, []int{2, 1, 3}) {
		t.Errorf("values %v, want registration order", got)
	}
	if v, err := r.Lookup("c"); err != nil || v != 3 {
		t.Errorf("lookup c: %v, %v", v, err)
	}
	_, err := r.Lookup("d")
	if err == nil || err.Error() != `widget "d": want one of a, b, c` {
		t.Errorf("lookup d: %v", err)
	}
	if _, ok := r.Get("d"); ok {
		t.Error("get d found an entry never registered")
	}
}

func TestRegisterTwicePanics(t *testing.T) {
	r := New[int]("backend: volume model of")
	r.Register("gcsfuse", 1)
	defer func() {
		if got := recover(); got != "backend: volume model of gcsfuse registered twice" {
			t.Errorf("second registration: panic %v", got)
		}
		if v, _ := r.Get("gcsfuse"); v != 1 {
			t.Errorf("the second registration replaced the first: %d", v)
		}
	}()
	r.Register("gcsfuse", 2)
}
