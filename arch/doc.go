// Package arch holds no code: its tests keep the import arrows docs/design.md draws ("What links
// what"), walking each package's imports as the go command reads them.
package arch
