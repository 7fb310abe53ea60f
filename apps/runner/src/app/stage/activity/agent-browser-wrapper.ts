import {
  AGENT_BROWSER_NAVIGATION_WORDS,
  AGENT_BROWSER_OPTIONAL_VALUE_FLAGS,
  AGENT_BROWSER_VALUE_FLAGS,
} from '@stageflow/audit';

/**
 * First line of an attempt's activity file, written by the runner. A file
 * without it was deleted or replaced during the stage (the wrapper's `>>`
 * would have created it again), so its lines are not the whole story.
 */
export const ACTIVITY_HEADER = '{"activity":"agent-browser","version":1}';

/** `'…'` for /bin/sh: the only character to escape inside single quotes is the quote itself. */
export function shellQuote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

/** A shell `case` alternative of literal words (flags are letters and dashes only). */
function alternatives(words: readonly string[]): string {
  for (const word of words) {
    if (!/^-{1,2}[a-z][a-z-]*$|^[a-z]+$/.test(word)) throw new Error(`"${word}" cannot be a shell case pattern`);
  }
  return words.join('|');
}

/** Raw host bytes kept; a DNS name has at most 253, so anything longer cannot be opened anyway. */
const MAX_HOST_BYTES = 1024;

/**
 * The `agent-browser` wrapper a profile stage finds first on its PATH: a
 * POSIX sh script (dash in the runner image; no node start-up, so a call
 * costs about a millisecond more). It appends one JSON line per call to
 * `activityFile`, then `exec`s the real agent-browser with the same
 * arguments, so stdin, stdout, stderr, the exit code and signals are the real
 * one's (same pid).
 *
 * The line names the command and, for `open|goto|navigate <url>` and
 * `tab new <url>`, the URL's scheme and host only: credentials, port, path,
 * query and fragment never reach the disk, since a URL can carry a token.
 * Bytes of the host outside `[A-Za-z0-9._~:[]-]` are percent-encoded, which
 * keeps the line valid JSON; the runner decodes them and parses the host as
 * Chrome would (which also drops tabs and newlines, and decodes a `%41` the
 * stage typed). Other commands are `{"cmd":"other"}`, without their words.
 * Arguments are parsed as {@link agentBrowserNavigation} of
 * `@stageflow/audit` parses them, from the same flag lists.
 *
 * @param real - absolute path of the agent-browser the stage would otherwise run
 * @param activityFile - absolute path of the attempt's activity file
 */
export function agentBrowserWrapperScript(real: string, activityFile: string): string {
  const nav = alternatives(AGENT_BROWSER_NAVIGATION_WORDS);
  return `#!/bin/sh
# Stageflow: records this stage's agent-browser navigations (host only) for the
# soft allowlist audit, then runs the real agent-browser in its place.
# See docs/redaction-and-audit.md. Generated per stage attempt; do not edit.
real=${shellQuote(real)}
log=${shellQuote(activityFile)}
c= t= s= n=0
for a in "$@"; do
  case $s in
    v) s=; continue ;;
    b) s=; case $a in true|false) continue ;; esac ;;
    r) s=; case $a in -*|${nav}) ;; *) continue ;; esac ;;
  esac
  case $a in
    -) ;;
    ${alternatives(AGENT_BROWSER_VALUE_FLAGS)}) s=v; continue ;;
    ${alternatives(AGENT_BROWSER_OPTIONAL_VALUE_FLAGS)}) s=r; continue ;;
    -*=*) continue ;;
    -*) s=b; continue ;;
  esac
  n=$((n + 1))
  case $n$c in
    1) c=$a; case $a in ${nav}) continue ;; esac; break ;;
    2tab) if [ "$a" = new ]; then c=tab-new; continue; fi; break ;;
    *) t=$a; break ;;
  esac
done
case $c in open|goto|navigate|tab-new) ;; *) c=other t= ;; esac
line="{\\"cmd\\":\\"$c\\""
if [ -n "$t" ]; then
  sch= r=$t
  case $t in
    [A-Za-z]*:*)
      sch=\${t%%:*} r=\${t#*:}
      case $sch in *[!A-Za-z0-9+.-]*) sch= ;; esac
      # host:port is not a scheme
      case $r in [0-9]*) sch= ;; esac
      [ -n "$sch" ] || r=$t ;;
  esac
  # agent-browser adds https:// to a target without a scheme
  [ -n "$sch" ] || sch=https
  line="$line,\\"scheme\\":\\"$sch\\""
  case $sch in
    [Hh][Tt][Tt][Pp]|[Hh][Tt][Tt][Pp][Ss])
      while :; do case $r in [/\\\\]*) r=\${r#?} ;; *) break ;; esac; done
      r=\${r%%[/?#\\\\]*}
      r=\${r##*@}
      case $r in \\[*\\]*) r=\${r%%\\]*}] ;; *) r=\${r%%:*} ;; esac
      if [ -n "$r" ] && [ \${#r} -le ${MAX_HOST_BYTES} ]; then
        case $r in
          *[!][A-Za-z0-9._~:-]*)
            h=
            while [ -n "$r" ]; do
              x=\${r#?} y=\${r%"$x"} r=$x
              case $y in [][A-Za-z0-9._~:-]) h=$h$y ;; *) h=$h$(printf '%%%02X' "'$y") ;; esac
            done
            r=$h ;;
        esac
        line="$line,\\"host\\":\\"$r\\""
      fi ;;
  esac
fi
{ printf '%s}\\n' "$line" >>"$log"; } 2>/dev/null
exec "$real" "$@"
`;
}
