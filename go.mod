module persistlab

go 1.26.8

require github.com/HdrHistogram/hdrhistogram-go v1.4.0

require (
	github.com/mattn/go-sqlite3 v1.14.53 // indirect
	golang.org/x/sys v0.49.0 // indirect
	gopkg.in/yaml.v3 v3.0.1 // indirect
)
