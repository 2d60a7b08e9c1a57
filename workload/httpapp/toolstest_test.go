package httpapp

// The checkout's installed programs and examples, for tests run from go test's temporary directory.
import _ "persistlab/internal/tools/toolstest"
