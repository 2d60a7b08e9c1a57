package scenario

// Advise holds persistlab advise's inputs beside the app they are for (persistlab advise --app
// FILE), so that a CI job's question lives in one file: each is the default of the flag of the
// same name, which the command line replaces (--require replaces the whole list). The scenario
// package keeps them as written; advise checks them, naming the field.
type Advise struct {
	Platform    string   `yaml:"platform,omitempty"`
	CPUs        float64  `yaml:"cpus,omitempty"`
	Memory      string   `yaml:"memory,omitempty"`
	Bucket      string   `yaml:"bucket,omitempty"`
	Rate        float64  `yaml:"rate,omitempty"`
	Require     []string `yaml:"require,omitempty"`
	DBSize      string   `yaml:"db_size,omitempty"`
	Time        Duration `yaml:"time,omitempty"`
	Crashes     int      `yaml:"crashes,omitempty"`
	Connections int      `yaml:"connections,omitempty"`
	Candidates  []string `yaml:"candidates,omitempty"`
	Files       int      `yaml:"files,omitempty"`
	CloudSQLRTT Duration `yaml:"cloudsql_rtt,omitempty"`
	Instances   int      `yaml:"instances,omitempty"`
	// K6Script and Profile are paths relative to the scenario's file.
	K6Script string `yaml:"k6_script,omitempty"`
	Profile  string `yaml:"profile,omitempty"`
}
