package scenario

import "persistlab/param"

// A workload's parameters are declared with package param, which the backends and the lab share
// without importing the scenario. These names forward to it so the code written against package
// scenario keeps compiling; new code should use package param.

// Kind is param.Kind.
type Kind = param.Kind

// Kinds of parameters: param's.
const (
	KindInt      = param.KindInt
	KindFloat    = param.KindFloat
	KindSize     = param.KindSize
	KindDuration = param.KindDuration
	KindBool     = param.KindBool
	KindEnum     = param.KindEnum
	KindString   = param.KindString
)

// Param is param.Param.
type Param = param.Param

// FieldError is param.FieldError: which field of a scenario is wrong, what it holds and what it
// may hold.
type FieldError = param.FieldError

// ParseBool is param.ParseBool: true/false, 1/0, on/off, yes/no.
func ParseBool(v string) (bool, error) { return param.ParseBool(v) }

// ParseSize is param.ParseSize: a size as fio reads it, every unit a power of 1024.
func ParseSize(s string) (int64, error) { return param.ParseSize(s) }

// FormatSize is param.FormatSize: bytes in the largest binary unit that divides them exactly.
func FormatSize(n int64) string { return param.FormatSize(n) }

// plainNumber writes x as people write numbers: 1073741824, not 1.073741824e+09.
func plainNumber(x float64) string { return param.PlainNumber(x) }
