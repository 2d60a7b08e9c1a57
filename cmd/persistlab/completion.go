package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"

	"persistlab/backend"
	"persistlab/provenance"
	"persistlab/scenario"
)

// cmdCompletion prints a completion script for bash or zsh: commands, subcommands, each
// command's flags (the flag sets its help lists), and the built-in scenarios' names.
func cmdCompletion(args []string, w io.Writer) error {
	fs := newFlags("completion")
	shells, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(shells) != 1 || (shells[0] != "bash" && shells[0] != "zsh") {
		return fmt.Errorf("want one shell, bash or zsh, got %q", strings.Join(shells, " "))
	}
	script, err := completionScript()
	if err != nil {
		return err
	}
	if shells[0] == "zsh" {
		// zsh runs the bash function through its own bash emulation (bashcompinit).
		_, err = fmt.Fprintf(w, "# zsh completion for persistlab: source <(persistlab completion zsh), after compinit.\nautoload -U +X bashcompinit && bashcompinit\n%s", script)
		return err
	}
	_, err = fmt.Fprintf(w, "# bash completion for persistlab: source <(persistlab completion bash)\n%s", script)
	return err
}

// positional says what a command's arguments complete to: scenario names and files, scenario
// names alone, files, directories, or one of a list of words; a command missing here takes none.
func positional() map[string]string {
	return map[string]string{
		"run":            "scenario",
		"scenarios":      "words:show",
		"scenarios show": "scenario-name",
		"report":         "files",
		"compare":        "files",
		"merge":          "files",
		"clean":          "dirs",
		"completion":     "words:bash zsh",
		"lab model":      "words:" + strings.Join(append(provenance.Names(), "all"), " "),
	}
}

// pathFlags are the flags whose value is a file or directory: their values complete to paths.
var pathFlags = []string{"out", "workdir", "html", "csv", "db", "dir", "log", "mount", "git", "fuse-dir", "target", "here"}

// shellQuote is s in single quotes, for a shell script.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// commandFlags is the flags c declares (as its help lists them): every flag, and those that take
// a value.
func commandFlags(c command, args []string) (all, valued []string, err error) {
	helpFlags = nil
	if err := c.run(context.Background(), append(args, "-h")); err != nil && err != flag.ErrHelp {
		return nil, nil, fmt.Errorf("%s: %w", c.name, err)
	}
	if helpFlags == nil {
		return []string{"--help"}, nil, nil
	}
	helpFlags.VisitAll(func(f *flag.Flag) {
		all = append(all, "--"+f.Name)
		if b, ok := f.Value.(interface{ IsBoolFlag() bool }); !ok || !b.IsBoolFlag() {
			valued = append(valued, "--"+f.Name)
		}
	})
	return append(all, "--help"), valued, nil
}

// completionScript is the bash function _persistlab and its registration, with persistlab's
// commands, flags and scenario names written in.
func completionScript() (string, error) {
	var b strings.Builder
	var top []string
	subs := map[string][]string{}
	var cases strings.Builder
	for _, c := range append(commands(), command{name: "scenarios show", run: func(ctx context.Context, args []string) error { return cmdScenarios(append([]string{"show"}, args...)) }}) {
		if c.hidden {
			continue
		}
		words := strings.Fields(c.name)
		if c.name != "scenarios show" {
			if len(words) > 1 {
				if len(subs[words[0]]) == 0 {
					top = append(top, words[0])
				}
				subs[words[0]] = append(subs[words[0]], words[1])
			} else {
				top = append(top, c.name)
			}
		}
		all, valued, err := commandFlags(c, nil)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&cases, "        %s) flags=%s; valued=%s; args=%s ;;\n", shellQuote(c.name), shellQuote(strings.Join(all, " ")),
			shellQuote(strings.Join(valued, " ")), shellQuote(positional()[c.name]))
	}
	var groups strings.Builder
	groupNames := make([]string, 0, len(subs))
	for g := range subs {
		groupNames = append(groupNames, g)
	}
	sort.Strings(groupNames)
	for _, g := range groupNames {
		fmt.Fprintf(&groups, "        %s) subs=%s ;;\n", shellQuote(g), shellQuote(strings.Join(subs[g], " ")))
	}
	fmt.Fprintf(&b, `_persistlab() {
    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
    local scenarios=%s
    local backends=%s
    COMPREPLY=()
    if [[ $COMP_CWORD -eq 1 ]]; then
        COMPREPLY=($(compgen -W %s -- "$cur"))
        return 0
    fi
    local cmd=${COMP_WORDS[1]} subs=""
    case $cmd in
%s    esac
    if [[ -n $subs ]]; then
        if [[ $COMP_CWORD -eq 2 ]]; then
            COMPREPLY=($(compgen -W "$subs" -- "$cur"))
            return 0
        fi
        cmd="$cmd ${COMP_WORDS[2]}"
    elif [[ $cmd == scenarios && ${COMP_WORDS[2]} == show && $COMP_CWORD -gt 2 ]]; then
        cmd="scenarios show"
    fi
    local flags="" valued="" args=""
    case $cmd in
%s        *) return 0 ;;
    esac
    local name=${prev#-}
    name=${name#-}
    if [[ $prev == -* && " $valued " == *" --$name "* ]]; then
        case $name in
            beside) COMPREPLY=($(compgen -W "$scenarios" -- "$cur")) ;;
            backend) COMPREPLY=($(compgen -W "$backends" -- "$cur")) ;;
            %s) COMPREPLY=($(compgen -f -- "$cur")) ;;
        esac
        return 0
    fi
    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "$flags" -- "$cur"))
        return 0
    fi
    case $args in
        scenario) COMPREPLY=($(compgen -W "$scenarios" -- "$cur") $(compgen -f -- "$cur")) ;;
        scenario-name) COMPREPLY=($(compgen -W "$scenarios" -- "$cur")) ;;
        files) COMPREPLY=($(compgen -f -- "$cur")) ;;
        dirs) COMPREPLY=($(compgen -d -- "$cur")) ;;
        words:*) COMPREPLY=($(compgen -W "${args#words:}" -- "$cur")) ;;
    esac
    return 0
}
complete -F _persistlab persistlab
`, shellQuote(strings.Join(scenario.Builtins(), " ")), shellQuote(strings.Join(backend.Names(), " ")), shellQuote(strings.Join(top, " ")), groups.String(), cases.String(), strings.Join(pathFlags, "|"))
	return b.String(), nil
}
